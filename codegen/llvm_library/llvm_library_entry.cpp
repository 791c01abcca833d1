// The LLVM library's table: part of the library (libtessera-llvm.so, and the
// tessera_llvm archive), the one symbol the loader looks up.
#include "codegen/host/llvm/llvm_trace_compiler.h"
#include "codegen/kernel/cpu/llvm_kernel_compiler.h"
#include "codegen/llvm_library/llvm_library.h"

extern "C" const tessera::jit::LlvmLibrary* tessera_llvm_library() {
  static const tessera::jit::LlvmLibrary table{
      .abi_version = tessera::jit::LlvmLibrary::kAbiVersion,
      .make_trace_compiler = &tessera::jit::make_llvm_trace_compiler,
      .make_kernel_compiler = &tessera::kir::make_llvm_kernel_compiler,
  };
  return &table;
}
