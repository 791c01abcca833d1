// Compiles kernel IR for the host CPU: cpu_emitter's LLVM IR, optimized and
// turned into an object file, which an ORC LLJIT of the compiler's own links
// into the process (kernels never link to traces, and a kernel compile must
// not wait for a trace compile's lock). The two steps are apart so that the
// kernel cache (kernel_disk_cache.h) can keep the object and a later run
// only links it.
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

// A kernel compiled to relocatable machine code for this host.
struct KernelObject {
  std::string symbol;     // the kernel function's name in the object
  std::string bytes;      // the object file
  std::string llvm_ir;    // after optimization, when asked for
  double compile_ms = 0;  // emitting, optimizing, code generation
};

class CpuKernelCompiler {
 public:
  CpuKernelCompiler();
  ~CpuKernelCompiler();
  CpuKernelCompiler(const CpuKernelCompiler&) = delete;
  CpuKernelCompiler& operator=(const CpuKernelCompiler&) = delete;

  // Throws std::runtime_error with the emitter's or LLVM's message.
  CompiledKernel compile(const Kernel& k);

  // The kernel as an object file whose function is named `symbol`; throws
  // as compile().
  KernelObject compile_object(const Kernel& k, const std::string& symbol, bool keep_text = false);
  // Links an object of compile_object's (from this process or an earlier
  // one on this host) and returns its kernel; each object gets a JITDylib of
  // its own, so symbols never clash. Throws on a malformed object.
  KernelFn load(const std::string& bytes, const std::string& symbol);
  // The optimized LLVM IR of k, without code generation (for --dump when
  // the object came from the cache).
  std::string llvm_ir(const Kernel& k);

  // What compiled code depends on besides the kernel IR: LLVM's version,
  // the CPU model and features, the vector width. Part of every cache key.
  const std::string& host_identity() const;
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
