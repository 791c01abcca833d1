// A region (vm/graph/region.h) compiled for the CPU and run on script
// values: lower_region → cpu_compiler → launch, with the outputs allocated
// here. This is what the JIT's fused calls run (kernel_site.h picks which).
#pragma once

#include <memory>
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
  // A kernel lowered from r and compiled elsewhere (kernel_store.h); `threads` as launch().
  CpuRegionKernel(Region r, std::shared_ptr<const Kernel> k, KernelFn fn, int threads = 0);

  // The outputs for these inputs, or nullopt when the inputs do not fit the
  // region's types (the caller then runs run_region_reference, which also
  // raises the interpreter's errors) or, for a kernel with constant dims
  // (K3), symbols' values other than its constants. `threads` as launch(),
  // defaulting to the kernel's.
  std::optional<std::vector<Value>> run(std::span<const Value> inputs, std::optional<int> threads = {}) const;
  // Whether a kernel with constant dims was made for these symbols' values.
  bool fits(const std::vector<int64_t>& symbols) const;
  // Runs with symbols that bind_symbols gave for these inputs.
  std::vector<Value> run_bound(std::span<const Value> inputs, const std::vector<int64_t>& symbols,
                               std::optional<int> threads = {}) const;

  const Region& region() const { return region_; }
  const Kernel& kernel() const { return *kernel_; }
  int threads() const { return threads_; }
  double compile_ms() const { return compile_ms_; }

 private:
  Region region_;
  std::shared_ptr<const Kernel> kernel_;
  KernelFn fn_ = nullptr;
  int threads_ = 0;
  double compile_ms_ = 0;
};

}  // namespace tessera::kir
