// The LLVM library: every compiler built on LLVM (T2, codegen/host/llvm; the
// CPU kernel compiler, codegen/kernel/cpu) reached through one table, so that
// a program that never needs LLVM never loads it.
//
// Two implementations of llvm_library() exist, and the executable picks one
// by what it links (docs/jit.md, "Start-up"):
//  - llvm_library_linked.cpp (in the tessera_llvm archive, the default): the
//    compilers are linked into the program (tests, the embedding library, the
//    Python module);
//  - llvm_library_loaded.cpp (tessera-vm): the compilers and LLVM's static
//    libraries are in libtessera-llvm.so, which dlopen loads at the first
//    compile that needs LLVM. At start-up, LLVM's 376 static constructors and
//    the page faults of its relocations were two thirds of a one-line
//    script's run time.
// The library calls back into the executable for the rest of the VM (trace
// IR, kernel IR, the runtime's helpers): tessera-vm exports what it uses
// (llvm_library_exports.cmake).
#pragma once

#include <memory>

#include "codegen/host/compiled_trace.h"
#include "codegen/kernel/cpu/cpu_kernel_backend.h"

namespace tessera::jit {

struct LlvmLibrary {
  // Changes whenever this table or the interfaces it hands out change: a
  // library from another build is refused rather than called.
  static constexpr int kAbiVersion = 1;
  int abi_version = kAbiVersion;
  // T2: see LlvmBackend (codegen/host/llvm/llvm_backend.h) for opt_level.
  std::unique_ptr<HostBackend> (*make_trace_compiler)(int opt_level) = nullptr;
  std::unique_ptr<kir::CpuKernelBackend> (*make_kernel_compiler)() = nullptr;
};

// The table; throws std::runtime_error saying where the library was looked
// for and why it did not load (then every call throws the same).
const LlvmLibrary& llvm_library();

}  // namespace tessera::jit

// The library's one exported symbol.
extern "C" const tessera::jit::LlvmLibrary* tessera_llvm_library();
