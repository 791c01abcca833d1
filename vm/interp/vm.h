// VM: one independent instance of the Tessera interpreter. No global mutable
// state: two VMs in one process share nothing but immutable tables.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/core/builtin_def.h"
#include "vm/core/value.h"

namespace tessera {

class JitHooks;

struct VMOptions {
  std::vector<std::string> script_args;  // what args() returns
  int max_depth = 10000;                 // call frames before "stack overflow"
  std::ostream* out = nullptr;           // print() target; null = std::cout
  std::ostream* err = nullptr;           // error reports; null = std::cerr
};

// Outcome of running a script, mapped to the CLI's exit codes 0/1/2.
enum class RunStatus : int { Ok = 0, RuntimeError = 1, CompileError = 2 };

// A VM is the BuiltinContext of the built-ins it calls (print writes to
// out(), args() returns script_args()).
class VM final : public BuiltinContext {
 public:
  explicit VM(VMOptions opts = {});
  ~VM();
  VM(const VM&) = delete;
  VM& operator=(const VM&) = delete;

  // Compile and run source text; errors are reported to opts.err in the
  // spec's format (`FILE:LINE:COL: syntax error: ...` or
  // `FILE:LINE: runtime error: ...` plus traceback).
  RunStatus run_source(const std::string& filename, const std::string& source);
  // Reads the file; an unreadable file is reported and returns CompileError.
  RunStatus run_file(const std::string& path);
  // Compiles the file and prints the bytecode of every function to out().
  RunStatus disassemble_file(const std::string& path);

  // Hooks installed into the interpreter of every later run (null = none,
  // pure interpreter). Not owned; must outlive the runs.
  void set_jit_hooks(JitHooks* hooks) { jit_hooks_ = hooks; }

  // For built-ins (BuiltinContext).
  std::ostream& out() override;
  const std::vector<std::string>& script_args() const override { return opts_.script_args; }
  const VMOptions& options() const { return opts_; }

 private:
  // Compiles `source`; reports a syntax error and returns null on failure.
  std::unique_ptr<Module> compile_source(const std::string& filename, const std::string& source);
  bool read_file(const std::string& path, std::string& source);
  std::ostream& err();

  VMOptions opts_;
  JitHooks* jit_hooks_ = nullptr;
};

}  // namespace tessera
