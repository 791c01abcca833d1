// What the CPU kernel compiler (cpu_compiler.h) asks of the code generator
// behind it: kernel IR to an object file, and an object file linked into the
// process. The implementation is LLVM's (llvm_kernel_compiler.h), reached
// through codegen/llvm_library/llvm_library.h so that tessera-vm loads LLVM
// only when a program has a kernel to compile.
#pragma once

#include <string>

#include "codegen/kernel/cpu/kernel_abi.h"
#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

// A kernel compiled to relocatable machine code for this host.
struct KernelObject {
  std::string symbol;     // the kernel function's name in the object
  std::string bytes;      // the object file
  std::string llvm_ir;    // after optimization, when asked for
  double compile_ms = 0;  // emitting, optimizing, code generation
};

class CpuKernelBackend {
 public:
  virtual ~CpuKernelBackend() = default;
  // The kernel as an object file whose function is named `symbol`, its
  // vectors `lanes` f32 wide. Throws std::runtime_error with the emitter's or
  // LLVM's message.
  virtual KernelObject compile_object(const Kernel& k, const std::string& symbol, int lanes, bool keep_text) = 0;
  // Links an object of compile_object's and returns its kernel; throws on a
  // malformed object.
  virtual KernelFn load(const std::string& bytes, const std::string& symbol) = 0;
  // The optimized LLVM IR of k, without code generation.
  virtual std::string llvm_ir(const Kernel& k, int lanes) = 0;
  // LLVM's version, the target triple, CPU and features.
  virtual const std::string& host_identity() const = 0;
};

}  // namespace tessera::kir
