// Errors raised by the VM. Both are exceptions carrying a message a user can
// act on; the CLI formats them as the spec (§1) requires.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

// A script-level runtime error (exit code 1). The message is the text after
// "runtime error: "; the interpreter adds file, line and traceback.
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& msg) : std::runtime_error(msg) {}
  // Raised by a host function (the embedding API): its name, which the
  // traceback shows as the innermost frame. Empty for the VM's own errors.
  std::string native_function;
};

// A runtime error that the operation must not be redone around. A compiled
// trace's helper that meets one (a GPU kernel that faulted: the device is
// lost) leaves its message in BuiltinContext::deferred_error, and the
// interpreter raises it where the trace exits, instead of redoing the
// operation on the CPU as it does after the helper's other failures.
class FatalRuntimeError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// A compile-time error (exit code 2): lexing, parsing, or name resolution.
// what() is the message after "syntax error: ".
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(const std::string& msg, int line, int col)
      : std::runtime_error(msg), line(line), col(col) {}
  int line;
  int col;
};

}  // namespace tessera
