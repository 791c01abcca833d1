// JitHooks: the upward interface between the interpreter and the JIT. The
// interpreter (T0) declares it; the JIT runtime (a higher layer) implements
// and installs it. With no hooks installed the counters still run (they cost
// one decrement and a branch) and simply wrap.
//
// Protocol: a hot loop back-edge calls on_hot_loop(); if it returns true the
// interpreter calls record() before every instruction it executes until
// record() returns false (the recording finished or was abandoned). A
// finished trace patches the loop's back-edge (JFORLOOP, JITERLOOP, JLOOP),
// which then calls run_trace(): the trace runs until an exit, whose state
// comes back in a TraceExit for the interpreter to resume from. A hot
// function entry calls on_hot_function(); once the function has a trace
// (FunctionProto::entry_trace), calls of it enter the trace the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera {

struct FunctionProto;
class Value;

// Where the interpreter resumes after a trace exit.
struct TraceExit {
  // Resume instruction index per frame: the frame that entered the trace
  // first, then one per inlined frame in `frames`.
  std::vector<uint32_t> pcs;
  // Frames of calls the trace had inlined, outermost first, to push back onto
  // the interpreter's frame stack. `base` is relative to the register 0 of
  // the frame that entered the trace.
  struct Frame {
    FunctionProto* proto;
    uint32_t base;
  };
  std::vector<Frame> frames;
  // The exit got hot: record a side trace starting where the interpreter
  // resumes (the interpreter switches to recording before its next instruction).
  bool start_recording = false;
};

// The interpreter's frame stack as compiled code changes it: traces that
// follow recursion push and pop real frames (LuaJIT's up- and
// down-recursion), so tracebacks and returns stay the interpreter's own.
class FrameStack {
 public:
  // Pushes a frame for `callee` whose register 0 is `callee_base`, after
  // making the top frame resume at instruction `ret_pc` once the callee
  // returns. Returns callee_base, or null (changing nothing) when the depth
  // limit is reached or the register stack has no room for the callee and
  // any trace; the interpreter then makes the call and reports the error.
  virtual Value* push_frame(FunctionProto* callee, Value* callee_base, uint32_t ret_pc) = 0;
  // Whether the frame below the top one runs `proto` and resumes at `pc`.
  virtual bool caller_is(const FunctionProto* proto, uint32_t pc) const = 0;
  // The top frame returns `result` (as RET does); returns the caller's
  // register 0.
  virtual Value* pop_frame(Value result) = 0;

 protected:
  ~FrameStack() = default;
};

class JitHooks {
 public:
  virtual ~JitHooks() = default;
  // A loop back-edge at instruction index `pc` of `fn` reached its hot count.
  // Returning true starts recording with the next instruction executed.
  virtual bool on_hot_loop(FunctionProto& fn, uint32_t pc) = 0;
  // `fn`'s entry counter reached its hot count (at a call, before the
  // frame is pushed). Returning true starts recording with the next
  // instruction executed: fn's first.
  virtual bool on_hot_function(FunctionProto& fn) = 0;
  // What the counters start at (and are reset to after each report), so a
  // loop reports once per hotloop_threshold() back-edges and a function once
  // per hotcall_threshold() calls. Defaults are LuaJIT's (56 / 112); the
  // runtime overrides them from its JIT parameters.
  virtual uint16_t hotloop_threshold() const { return 56; }
  virtual uint32_t hotcall_threshold() const { return 112; }

  // While recording: called before the interpreter executes instruction `pc`
  // of `fn`, whose frame's register 0 is stack[frame_base]. Return false to
  // stop recording.
  virtual bool record(FunctionProto* /*fn*/, uint32_t /*pc*/, const Value* /*stack*/,
                      size_t /*frame_base*/, const Value* /*globals*/) {
    return false;
  }
  // The interpreter raised a runtime error while recording.
  virtual void recording_failed() {}
  // Registers (from the entering frame's register 0) trace `id` may touch,
  // and any trace it may run into (links, recursion) from its base frame.
  virtual uint32_t trace_stack_need(uint32_t /*id*/) const { return 0; }
  // Runs trace `id` with the entering frame's registers at `base`. The trace
  // may push and pop frames through `frames`; the exit is in the top frame.
  virtual void run_trace(uint32_t /*id*/, Value* /*base*/, Value* /*globals*/, FrameStack& /*frames*/,
                         TraceExit& /*exit*/) {}
};

}  // namespace tessera
