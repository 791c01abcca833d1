#include "codegen/host/llvm/llvm_backend.h"

#include "codegen/llvm_library/llvm_library.h"

namespace tessera::jit {

LlvmBackend::LlvmBackend(int opt_level) : compiler_(llvm_library().make_trace_compiler(opt_level)) {}

LlvmBackend::~LlvmBackend() = default;

}  // namespace tessera::jit
