// The CPU kernel compiler's code generator: kernel IR -> cpu_emitter's LLVM
// IR -> a function pipeline -> an object file, linked by an ORC LLJIT of its
// own (kernels never link to traces, and a kernel compile must not wait for
// a trace compile's lock). Part of the LLVM library
// (codegen/llvm_library/llvm_library.h); the rest of the VM uses it through
// CpuKernelCompiler (cpu_compiler.h).
#pragma once

#include <memory>

#include "codegen/kernel/cpu/cpu_kernel_backend.h"

namespace tessera::kir {

// Throws std::runtime_error when LLVM cannot target this host.
std::unique_ptr<CpuKernelBackend> make_llvm_kernel_compiler();

}  // namespace tessera::kir
