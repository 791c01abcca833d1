// Compiles kernel IR for the host CPU: cpu_emitter's LLVM IR, optimized and
// turned into machine code by an ORC LLJIT of its own (kernels never link to
// traces, and a kernel compile must not wait for a trace compile's lock).
#pragma once

#include <memory>
#include <string>

#include "codegen/kernel/cpu/kernel_abi.h"
#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

struct CompiledKernel {
  KernelFn fn = nullptr;
  double compile_ms = 0;
  std::string llvm_ir;  // after optimization, when the compiler keeps text
};

class CpuKernelCompiler {
 public:
  CpuKernelCompiler();
  ~CpuKernelCompiler();
  CpuKernelCompiler(const CpuKernelCompiler&) = delete;
  CpuKernelCompiler& operator=(const CpuKernelCompiler&) = delete;

  // Throws std::runtime_error with the emitter's or LLVM's message.
  CompiledKernel compile(const Kernel& k);
  void set_keep_text(bool keep) { keep_text_ = keep; }
  // f32 lanes of the generated code: those of the interpreter's vector math
  // (vm/tensor/vector_math.h), so that both call the same SLEEF functions.
  int lanes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool keep_text_ = false;
};

}  // namespace tessera::kir
