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
struct Instr;
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
  // JitHooks::call_function_trace's answer when the trace did not run the
  // call to its RET.
  static constexpr uint32_t kNotReturned = UINT32_MAX;
};

// One activation record. The current frame's pc lives in a local of the
// interpreter's dispatch loop; it is written back here on calls and errors.
struct CallFrame {
  FunctionProto* proto;
  const Instr* pc;  // next instruction to execute
  uint32_t base;    // index of register 0 in the register stack
};

// The interpreter's frames and registers as compiled code sees them. Traces
// that follow recursion push and pop real frames in place (LuaJIT's up- and
// down-recursion), so returns and tracebacks stay the interpreter's own. The
// interpreter keeps every field current; the layout is part of the trace ABI.
struct FrameRegion {
  CallFrame* bottom = nullptr;     // frame 0
  CallFrame* top = nullptr;        // one past the top frame
  CallFrame* limit = nullptr;      // the depth limit: no frame is pushed at or past it
  Value* stack = nullptr;          // the register stack's slot 0
  Value* stack_end = nullptr;      // one past its last slot
  uint64_t trace_stack_need = 0;   // registers above a trace's base any trace may touch
  // The highest register 0 a frame pushed by compiled code (FPUSH) may have:
  // stack_end - (trace_stack_need + 1), so that one compare checks room for
  // the callee's registers and any trace run from its frame (the JIT keeps
  // trace_stack_need at least every pushed callee's register count + 1).
  Value* push_limit = nullptr;

  // Call after changing stack, stack_end or trace_stack_need.
  void update_push_limit();  // interpreter.cpp
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
  // per hotcall_threshold() calls: the JIT parameters hotloop and hotcall
  // (runtime/jit_params.def has their defaults).
  virtual uint16_t hotloop_threshold() const = 0;
  virtual uint32_t hotcall_threshold() const = 0;
  // Hotness by work: a back-edge after tensor work counts as
  // 1 + elements made / hotwork_elements() back-edges (tensor_work,
  // vm/tensor/tensor.h), so loops over large tensors trace after a few
  // iterations; 0 counts every back-edge as one. The JIT parameter hotwork.
  virtual uint32_t hotwork_elements() const { return 0; }

  // While recording: called before the interpreter executes instruction `pc`
  // of `fn`, whose frame's register 0 is stack[frame_base]. Return false to
  // stop recording.
  virtual bool record(FunctionProto* /*fn*/, uint32_t /*pc*/, const Value* /*stack*/,
                      size_t /*frame_base*/, const Value* /*globals*/) {
    return false;
  }
  // The interpreter raised a runtime error while recording.
  virtual void recording_failed() {}
  // A host's call (the embedding API) returned while recording: the
  // recording cannot follow the return.
  virtual void recording_returned_to_host() { recording_failed(); }
  // Registers (from the entering frame's register 0) any trace may touch,
  // with any trace it may run into (links, recursion): the most over every
  // trace so far, which only grows. A field, not a virtual call: every
  // trace entry reads it.
  uint32_t trace_stack_need() const { return trace_stack_need_; }
  // Trace invalidation: when the hooks are installed the interpreter hands
  // over one byte per global slot (and the slots, which never move); a store
  // into a global whose byte the JIT has set calls on_global_store() right
  // after the store.
  virtual void watch_globals(uint8_t* /*watch*/, const Value* /*globals*/, size_t /*n*/) {}
  virtual void on_global_store(uint32_t /*index*/) {}
  // The interpreter (and its module, whose functions traces point into) is
  // going away: nothing may touch them from now on (background compiles).
  // True: a background compile that still reads the module's functions was
  // left running (the process ends right after, with std::_Exit): the
  // module must stay.
  virtual bool interpreter_gone() { return false; }
  // `n` profiling samples fell in the interpreter (interpreter_samples.h),
  // taken at instruction `pc` of `fn` (a back-edge or a call).
  virtual void on_interpreter_samples(const FunctionProto& /*fn*/, uint32_t /*pc*/, uint32_t /*n*/) {}
  // Runs trace `id` with the entering frame's registers at `base`. The trace
  // may push and pop frames in `frames`; the exit is in the top frame.
  virtual void run_trace(uint32_t /*id*/, Value* /*base*/, Value* /*globals*/, FrameRegion& /*frames*/,
                         TraceExit& /*exit*/) {}
  // A host's call of a function whose function trace is `id` (the frame the
  // host called, Interpreter::call): when the trace runs the call to its own
  // RET, the RET's pc, `exit` untouched, and the interpreter returns to the
  // host without running the RET through its dispatch loop (and the runtime
  // counts no exit); else TraceExit::kNotReturned and the exit in `exit`, as
  // run_trace leaves it.
  virtual uint32_t call_function_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames,
                                       TraceExit& exit) {
    run_trace(id, base, globals, frames, exit);
    return TraceExit::kNotReturned;
  }

 protected:
  // Kept by whoever compiles the traces (trace_stack_need()).
  uint32_t trace_stack_need_ = 0;
};

}  // namespace tessera
