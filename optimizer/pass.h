// A trace optimization pass: one transformation of the trace IR, IR in and
// IR out (LLVM's pass model, LuaJIT's opt_* files). Passes keep the trace's
// snapshots, their numbering and the exit protocol intact: a guard that a
// pass removes or moves leaves its snapshot in place (unused or shared), so
// exit numbers, stats and side-trace links keep their meaning. A pass may
// append new snapshots after the existing ones (loop peeling gives the
// peeled iteration's guards their own); it never renumbers or deletes one.
// The runtime sizes its per-exit tables after the optimizer has run.
#pragma once

#include <functional>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// Whether a guard placed before `loop` (the trace's LOOP) may exit through
// snapshot 0: that snapshot writes nothing and names no frame, and nothing
// before LOOP has a side effect, so the interpreter resumes at the loop
// header with nothing done. LICM's hoisted guards and loop predication's
// predicates rely on it.
inline bool exits_to_entry_state(const TraceIR& ir, IRRef loop) {
  if (loop == kNoRef || ir.snapshots().empty()) return false;
  const Snapshot& entry = ir.snapshots()[0];
  if (!entry.entries.empty() || !entry.frames.empty() || entry.base_proto != nullptr) return false;
  for (IRRef r = 0; r < loop; ++r)
    if (ir_has_side_effect(ir[r].op)) return false;
  return true;
}

class TracePass {
 public:
  virtual ~TracePass() = default;
  // Short name for dumps and --dump file names ("cse", "licm", "dce").
  virtual const char* name() const = 0;
  // Rewrites `ir` in place; returns whether anything changed.
  virtual bool run(TraceIR& ir) = 0;
  // The name the pipeline reports the IR that run() leaves under (its dump
  // step): name(), unless the pass reports steps of its own (see step()).
  virtual const char* result_name() const { return name(); }

  // A pass that runs in steps, or runs another pass inside itself, reports
  // the IR after each inner step through this hook so that --dump shows it
  // and the pipeline's verify_each checks it (TensorSinkPass reports "tsink"
  // before its inner fold; the pipeline reports "tsink.fold" after run()).
  // The pipeline sets it for the duration of run(); unset, step() does nothing.
  using StepHook = std::function<void(const char* step, const TraceIR& ir)>;
  void set_step_hook(const StepHook* hook) { step_hook_ = hook; }

 protected:
  void step(const char* name, const TraceIR& ir) const {
    if (step_hook_ != nullptr && *step_hook_) (*step_hook_)(name, ir);
  }

 private:
  const StepHook* step_hook_ = nullptr;
};

}  // namespace tessera::jit
