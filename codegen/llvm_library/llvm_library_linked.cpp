// llvm_library() where the LLVM library is linked into the program (see
// llvm_library.h; tessera-vm links llvm_library_loaded.cpp instead, and then
// this file and the compilers it names stay out of its link).
#include "codegen/llvm_library/llvm_library.h"

namespace tessera::jit {

const LlvmLibrary& llvm_library() { return *tessera_llvm_library(); }

}  // namespace tessera::jit
