// A region (vm/graph/region.h) compiled for the CPU and run on script
// values: lower_region → cpu_compiler → launch, with the outputs allocated
// here. This is what the JIT's fused calls run.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "codegen/kernel/cpu/cpu_compiler.h"
#include "codegen/kernel/lower_region.h"
#include "vm/graph/region.h"

namespace tessera::kir {

class CpuRegionKernel {
 public:
  // Lowers and compiles (K2 unless opt.symbol_values is given); throws what
  // lowering and compiling throw.
  CpuRegionKernel(Region r, CpuKernelCompiler& compiler, const RegionLowering& opt = {});

  // The outputs for these inputs, or nullopt when the inputs do not fit the
  // region's types (the caller then runs run_region_reference, which also
  // raises the interpreter's errors). A K3 kernel also needs the symbols'
  // values it was compiled for. `threads` as launch().
  std::optional<std::vector<Value>> run(std::span<const Value> inputs, int threads = 0) const;

  const Region& region() const { return region_; }
  const Kernel& kernel() const { return kernel_; }
  double compile_ms() const { return compiled_.compile_ms; }

 private:
  Region region_;
  Kernel kernel_;
  CompiledKernel compiled_;
};

}  // namespace tessera::kir
