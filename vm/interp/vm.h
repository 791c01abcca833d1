// VM: one independent instance of the Tessera interpreter. No global mutable
// state: two VMs in one process share nothing but immutable tables.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/core/builtin_def.h"
#include "vm/core/list_heap.h"
#include "vm/core/value.h"

namespace tessera {

class JitHooks;

// Outcome of running a script, mapped to the CLI's exit codes 0/1/2.
enum class RunStatus : int { Ok = 0, RuntimeError = 1, CompileError = 2 };
using RunStatusKind = RunStatus;

struct VMOptions {
  std::vector<std::string> script_args;  // what args() returns
  int max_depth = 10000;                 // call frames before "stack overflow"
  std::ostream* out = nullptr;           // print() target; null = std::cout
  std::ostream* err = nullptr;           // error reports; null = std::cerr
  // A session (the embedding API): every run_source runs in one persistent
  // interpreter, so that a later source, call() and the host see the
  // globals of earlier ones. Off (the CLI): each run has its own.
  bool keep_session = false;
  // Write error reports to `err` (the CLI). Off: they are only kept
  // (last_error()).
  bool report_errors = true;
  // The CLI, when the process ends right after the run without running
  // destructors: a run's globals, registers and module are left to die
  // with the process instead of being freed one by one (a program that
  // keeps 450 000 small lists spent a third of its time freeing them).
  // The JIT is told the interpreter is gone all the same. Never with the
  // sanitizers' leak check.
  bool leave_run_objects = false;
  // Appended to an "out of memory" error (the CLI: which --max-memory limit).
  std::string out_of_memory_note;
  // Put before each runtime error's report: under mpirun, "[rank 1] ", so
  // that the interleaved output of several ranks says whose error it is.
  std::string error_prefix;
};

// The last error of a run or call, as the CLI would print it.
struct VMError {
  RunStatusKind kind = RunStatusKind::Ok;
  std::string message;    // the text after "runtime error: " / "syntax error: "
  std::string report;     // the whole report: "FILE:LINE: runtime error: ...\n  at ...\n"
  std::string traceback;  // the "  at ..." lines alone
};


class Interpreter;
struct ScriptError;

// The largest source file run_file reads (a device or pipe is read up to it).
constexpr uint64_t kMaxSourceBytes = uint64_t{64} << 20;

// Why a script's source could not be read: `what` as "open 'F': Is a
// directory", `missing` when no such file exists.
struct SourceReadError {
  std::string what;
  bool missing = false;
};
// Reads the source of a script (the CLI's and the C ABI's one rule: a
// directory, an unreadable file or one over kMaxSourceBytes is an error,
// never an empty program).
std::optional<SourceReadError> read_source_file(const std::string& path, std::string& source);

// The traceback lines of a runtime error as the spec (§1) fixes them.
std::string format_traceback(const std::string& file, const ScriptError& e);

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
  // pure interpreter). Not owned; must outlive the runs (and, with
  // keep_session, the VM's session or the VM).
  void set_jit_hooks(JitHooks* hooks) { jit_hooks_ = hooks; }

  // keep_session: the persistent interpreter (made by the first run or by
  // this call; null without keep_session). Calls and global lookups go to it.
  Interpreter* session();
  // Calls `callee` in the session; a runtime error is kept (last_error) and
  // reported like a run's. The session must not be running.
  RunStatus call(const Value& callee, std::span<const Value> args, Value& result);
  // Ends the session: its interpreter (globals, modules) goes; the next run
  // starts a new one.
  void end_session();

  const VMError& last_error() const { return last_error_; }

  // The lists this VM's runs and calls made, and the cycle collector over
  // them (vm/core/list_heap.h). Current on the thread while a run or call
  // is under way.
  ListHeap& list_heap() { return list_heap_; }

  // For built-ins (BuiltinContext).
  std::ostream& out() override;
  const std::vector<std::string>& script_args() const override { return opts_.script_args; }
  const VMOptions& options() const { return opts_; }

 private:
  // Compiles `source`; reports a syntax error and returns null on failure.
  std::unique_ptr<Module> compile_source(const std::string& filename, const std::string& source);
  bool read_file(const std::string& path, std::string& source);
  std::ostream& err();

  RunStatus report_runtime_error(const std::string& filename, const ScriptError& error);

  VMOptions opts_;
  JitHooks* jit_hooks_ = nullptr;
  ListHeap list_heap_;  // declared before the session: its lists go first
  // Deleted in vm.cpp, where Interpreter is complete.
  struct SessionDeleter {
    void operator()(Interpreter* interp) const;
  };
  std::unique_ptr<Interpreter, SessionDeleter> session_;
  VMError last_error_;
};

}  // namespace tessera
