// T2's compiler: trace IR -> LLVM IR -> the pass pipeline of the opt level
// -> native code through LLVM ORC's LLJIT. Part of the LLVM library
// (codegen/llvm_library/llvm_library.h); the rest of the VM uses it through
// LlvmBackend (llvm_backend.h).
#pragma once

#include <memory>

#include "codegen/host/compiled_trace.h"

namespace tessera::jit {

// opt_level as LlvmBackend's. Throws std::runtime_error when LLVM cannot
// target this host.
std::unique_ptr<HostBackend> make_llvm_trace_compiler(int opt_level);

}  // namespace tessera::jit
