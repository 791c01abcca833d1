// Interpreter: executes a compiled Module's bytecode (tier T0).
//
// Register machine with threaded (computed-goto) dispatch. All frames share
// one contiguous register stack; a call slides the register window so the
// caller's argument registers become the callee's parameters (no copying, no
// heap allocation per call). Frames are records in a reserved vector.
#pragma once

#include <algorithm>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/core/value.h"
#include "vm/interp/call_frames.h"
#include "vm/interp/interpreter_samples.h"
#include "vm/interp/jit_hooks.h"
#include "vm/tensor/tensor.h"  // tensor_work

namespace tessera {

class VM;

// A runtime error with the frames it unwound, outermost first.
struct ScriptError {
  std::string message;
  struct Frame {
    std::string function;
    int line = 0;
    bool host = false;  // a host function (embedding API): no source line
    std::string file;   // a session's source the function came from (empty: the run's file)
    // Where in the line (FunctionProto::cols; 0: not known) and, for the
    // innermost frame with source, the line's text (the error's caret line).
    int col = 0;
    std::string source_line;
  };
  std::vector<Frame> traceback;  // outermost first; back() is where it was raised
};

class RuntimeError;

class Interpreter {
 public:
  Interpreter(VM& vm, std::unique_ptr<Module> module);
  ~Interpreter();

  // Runs <main> of the module loaded last. Returns false and fills `err` on
  // a runtime error.
  bool run_main(ScriptError& err);

  // A session (the embedding API) runs many sources in one namespace: each
  // is compiled against module() (CompileOptions::session) and loaded here,
  // which keeps the globals' values, initialises the new ones, rebinds the
  // functions it declares, and keeps the earlier modules alive (their
  // functions may still be referenced). Then run_main runs it.
  void load(std::unique_ptr<Module> module);

  // Calls a function or built-in value with `args` (from the host, between
  // runs: not while the interpreter is running). Hot functions are
  // recorded and their traces entered as for a CALL instruction.
  bool call(const Value& callee, std::span<const Value> args, Value& result, ScriptError& err);
  bool running() const { return running_; }

  // The slot of a defined global (not an unknown or not-yet-assigned name).
  std::optional<uint32_t> find_global(std::string_view name) const;
  const Value& global(uint32_t index) const { return globals_[index]; }
  // Binds `name` (declaring it when new) as the host's global; traces that
  // assumed its old value are invalidated.
  uint32_t define_global(const std::string& name, Value v);

  // Installs (or, with null, removes) the JIT hooks and restarts every
  // function's hot counters at the hooks' thresholds.
  void set_jit_hooks(JitHooks* hooks);
  const Module& module() const { return *module_; }

 private:
  // The dispatch loop; runs until the frame at depth `stop_depth` returns.
  void execute(size_t stop_depth);
  // Runs the pushed frames to completion; on an error fills `err` and
  // clears the frames. `host_call`: they are a host's call (Interpreter::call).
  bool run_frames(ScriptError& err, bool host_call);
  ScriptError make_error(const std::string& message) const;
  // The loaded module that holds `fn` (nullptr: none does).
  const Module* module_of(const FunctionProto* fn) const;
  // Runs body(); a RuntimeError or bad_alloc it raises becomes `err` (false).
  template <class F>
  bool trap_errors(ScriptError& err, F&& body);
  void store_global(uint32_t index, Value v);
  // Runs compiled trace `id` from the current frame and rebuilds the frames
  // of its exit (the caller reloads its registers from frames_.back()).
  void enter_trace(uint32_t id);
  // Reports the profiling samples that fell in the interpreter
  // (interpreter_samples.h) at instruction `pc` of `fn`.
  void take_interpreter_samples(const FunctionProto& fn, uint32_t pc);
  // enter_trace's parts, which a host's call shares (Interpreter::call,
  // JitHooks::call_function_trace). trace_base: room made for the traces'
  // registers above the current frame; its base. resume_at_exit: after the
  // trace ran (the exit in exit_, the frames as compiled code left them),
  // the exit's frames pushed, the top frame's pc set.
  uint32_t trace_base();
  void resume_at_exit();
  // RET's (RETNIL's) first half, for the dispatch loop and for a host's call
  // that a function trace ran to its return: the result, moved out of its
  // register, and the returning frame's objects freed now, so they die
  // promptly (stale scalars in dead registers are harmless: every register
  // is written before it is read).
  static Value take_return_value(const Instr& ret, Value* R, int nregs) {
    Value result = ret.op == Op::RET ? std::move(R[ret.a]) : Value();
    for (int i = 0; i < nregs; ++i)
      if (R[i].is_obj()) R[i] = Value();
    return result;
  }
  // The fast path inline: the dispatch loop (dispatch.cpp) checks at every call.
  void ensure_stack(size_t needed) {
    if (needed > stack_.size()) grow_stack(needed);
  }
  void grow_stack(size_t needed);

  [[noreturn]] void raise_call_error(const Value& callee, const FunctionProto* proto,
                                     const Instr* call_pc, int nargs) const;

  VM& vm_;
  std::unique_ptr<Module> module_;
  std::vector<std::unique_ptr<Module>> earlier_modules_;  // load(): a session's earlier sources
  // With more than one module loaded: each function's source, for tracebacks.
  std::unordered_map<const FunctionProto*, const std::string*> function_files_;
  bool running_ = false;
  std::vector<Value> globals_;
  std::vector<uint8_t> global_watch_;  // JitHooks::watch_globals
  std::vector<Value> stack_;
  CallFrameStack frames_;
  // Hot-loop ticks for the tensor work done since the last back-edge
  // (JitHooks::hotwork_elements); clears the work counter.
  uint16_t work_ticks() {
    const uint64_t w = tensor_work;
    tensor_work = 0;
    if (hotwork_ == 0) return 1;
    return static_cast<uint16_t>(std::min<uint64_t>(1 + w / hotwork_, UINT16_MAX));
  }

  JitHooks* hooks_ = nullptr;
  uint32_t hotwork_ = 0;  // elements per extra hot-loop tick; 0: none
  bool recording_ = false;
  TraceExit exit_;  // reused by every trace exit (no allocation per exit)
  size_t max_depth_ = 0;  // frames before "stack overflow"
};

}  // namespace tessera
