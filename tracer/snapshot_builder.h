// SnapshotBuilder: the snapshots of a trace being recorded (snapshot.h says
// what one holds), from the moment a guard takes one to the finished trace.
//
// Design. While recording, take() captures the recorder's view at a guard:
// every slot whose current value lives only in SSA (dirty), the inlined
// frames, and the base function once the base frame has changed (FPUSH or
// FPOP). Consecutive guards with nothing changed in between share one
// snapshot. For each snapshot the builder also keeps which slots the trace
// had changed when it was taken: a loop-carried slot not yet changed then
// holds its entry value, which at the close is the PHI's.
//
// When the recorder closes the trace (which reorders it: constants and entry
// SLOADs first, then LOOP and the body), finish() copies the snapshots into
// the final trace: entries renumbered, completed with those loop-carried
// slots, trimmed to the registers the interpreter reads when it resumes
// (register_liveness.h; snapshots with inlined frames stay whole), and with
// ir= on the first instruction that stays in place.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/trace_ir.h"
#include "vm/bytecode/bytecode.h"

namespace tessera::jit {

// The recorder's state per absolute slot, as a snapshot reads it.
struct SlotState {
  const std::vector<IRRef>& values;   // current value (kNoRef: not known yet)
  const std::vector<bool>& dirty;     // the value lives only in SSA: exits write it back
  const std::vector<bool>& modified;  // the trace changed the slot
};

// Whether closing the trace moves a recorded instruction to the front
// (before LOOP): constants, passed values and entry SLOADs.
inline bool moved_to_front(const IRIns& in) {
  return ir_is_const(in.op) || (in.op == IROp::SLOAD && (in.op2 == kSloadEntry || sload_passed(in)));
}

class SnapshotBuilder {
 public:
  // Snapshot 0: the trace's entry state, resuming at `start_pc` (in the
  // innermost of `inlined`, a side trace's frames inlined by its parent).
  void start(TraceIR& ir, uint32_t start_pc, std::vector<SnapshotFrame> inlined = {});

  // A snapshot resuming at `pc` in the innermost of the `inlined` frames (or
  // in the base frame); `base` is the base frame's function once it has
  // changed (else null), `epoch` counts those changes. Returns its number.
  uint16_t take(TraceIR& ir, uint32_t pc, FunctionProto* base, std::vector<SnapshotFrame> inlined,
                const SlotState& slots, uint32_t epoch);

  // What finish() needs of the close.
  struct Closing {
    const FunctionProto& root;              // base function of snapshots without `base`
    const std::vector<bool>& carried;       // loop-carried slots (none in a linear trace)
    const std::vector<IRRef>& entry_loads;  // slot -> its entry SLOAD (recorded numbering)
    const std::vector<IRRef>& remap;        // recorded reference -> reference in the final trace
    IRRef body_end;                         // the final trace's first instruction after the body
  };
  // Copies the snapshots of `recorded` into the final trace `out`.
  void finish(const TraceIR& recorded, TraceIR& out, const Closing& c) const;

 private:
  uint32_t epoch_ = 0;  // the recorder's epoch when the last snapshot was taken
  // Per snapshot: which slots the trace had changed when it was taken.
  std::vector<std::vector<bool>> modified_;
};

}  // namespace tessera::jit
