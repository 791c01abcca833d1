// LLVM's errors as exceptions with a message a user can act on, for both
// LLVM compilers (T2's, the CPU kernels'). Part of the LLVM library
// (includes LLVM).
#pragma once

#include <llvm/Support/Error.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace tessera::jit {

// The error's text (consumes it).
inline std::string llvm_error_text(llvm::Error e) { return llvm::toString(std::move(e)); }

// The value of `e`, or a std::runtime_error "COMPONENT: WHAT: llvm's text".
template <typename T>
T llvm_unwrap(llvm::Expected<T> e, const char* component, const char* what) {
  if (!e) throw std::runtime_error(std::string(component) + ": " + what + ": " + llvm_error_text(e.takeError()));
  return std::move(*e);
}

}  // namespace tessera::jit
