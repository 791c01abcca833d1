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
#include <string>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/core/value.h"
#include "vm/interp/call_frames.h"
#include "vm/interp/jit_hooks.h"
#include "vm/tensor/tensor.h"  // tensor_work

namespace tessera {

class VM;

// A runtime error with the frames it unwound, outermost first.
struct ScriptError {
  std::string message;
  struct Frame {
    std::string function;
    int line;
  };
  std::vector<Frame> traceback;  // outermost first; back() is where it was raised
};

class Interpreter {
 public:
  Interpreter(VM& vm, std::unique_ptr<Module> module);
  ~Interpreter();

  // Runs <main>. Returns false and fills `err` on a runtime error.
  bool run_main(ScriptError& err);

  // Installs (or, with null, removes) the JIT hooks and restarts every
  // function's hot counters at the hooks' thresholds.
  void set_jit_hooks(JitHooks* hooks);
  const Module& module() const { return *module_; }

 private:
  // The dispatch loop; runs until the frame at depth `stop_depth` returns.
  void execute(size_t stop_depth);
  ScriptError make_error(const std::string& message) const;
  // Runs compiled trace `id` from the current frame and rebuilds the frames
  // of its exit (the caller reloads its registers from frames_.back()).
  void enter_trace(uint32_t id);
  void ensure_stack(size_t needed);

  [[noreturn]] void raise_call_error(const Value& callee, const FunctionProto* proto,
                                     const Instr* call_pc, int nargs) const;

  VM& vm_;
  std::unique_ptr<Module> module_;
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
