// Compiles kernel IR for the host CPU: cpu_emitter's LLVM IR, optimized and
// turned into an object file, which an ORC LLJIT of the compiler's own links
// into the process. The two steps are apart so that the kernel cache
// (kernel_disk_cache.h) can keep the object and a later run only links it.
// The code generator (llvm_kernel_compiler.h) is in the LLVM library
// (codegen/llvm_library/llvm_library.h), which the first CpuKernelCompiler
// loads where it is not linked in.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "codegen/kernel/cpu/cpu_kernel_backend.h"
#include "codegen/kernel/cpu/kernel_abi.h"
#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

struct CompiledKernel {
  KernelFn fn = nullptr;
  double compile_ms = 0;
  std::string llvm_ir;  // after optimization, when the compiler keeps text
};

// The emitter's fingerprint (a hash of the sources that decide the machine
// code): part of every CPU kernel's identity in the kernel cache.
const char* cpu_emitter_fingerprint();

class CpuKernelCompiler {
 public:
  // Throws std::runtime_error when the LLVM library cannot be loaded or LLVM
  // cannot target this host.
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
  const std::string& host_identity() const { return host_; }
  void set_keep_text(bool keep) { keep_text_ = keep; }
  // f32 lanes of the generated code: those of the interpreter's vector math
  // (vm/tensor/vector_math.h), so that both call the same SLEEF functions.
  int lanes() const;

 private:
  std::unique_ptr<CpuKernelBackend> backend_;
  std::string host_;
  std::atomic<uint64_t> next_id_{0};
  bool keep_text_ = false;
};

}  // namespace tessera::kir
