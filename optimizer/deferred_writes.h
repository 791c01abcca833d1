// DeferredWrites: register writes a pass takes off the trace and leaves to
// its exits. Sinking removes the helper call that wrote an object into a
// register (or the SSTORE that copied it into another one) and computes the
// value without it; the interpreter may still read that register where the
// trace exits, so each exit after the write names the value in its snapshot
// (the exit then writes it, building a sunk object: deopt's
// materialization), until the register is written again.
//
// can_defer() says whether that keeps every exit right; when it does,
// defer() adds the snapshot entries. A write cannot be deferred
//  - before LOOP (every iteration's exits would have to carry it), or before
//    a frame push or pop (the frame is handed over without an exit, and slot
//    numbers change meaning);
//  - when an exit of the loop body before the write may read the register
//    and nothing in the iteration wrote it before that exit: it would find
//    a stale value instead of the previous iteration's (the same holds at the
//    loop header, where the tier-up exit resumes the interpreter);
//  - when one snapshot serves exits on both sides of the write.
// Liveness comes from the bytecode (tracer/register_liveness.h), in the
// frame (base or inlined) that holds the register; without
// TraceIR::function() (or a frame's proto) a register counts as live.
#pragma once

#include <cstdint>

#include "tracer/trace_ir.h"

namespace tessera::jit {

class DeferredWrites {
 public:
  explicit DeferredWrites(TraceIR& ir);

  // Whether the write of register `slot` by instruction `at` may leave the
  // trace (checked against the trace as it is now).
  bool can_defer(uint32_t slot, IRRef at) const;
  // Names `value` for `slot` in the snapshot of every exit after `at` up to
  // the register's next write, where the register is live and the snapshot
  // does not name it already. Only snapshots change (their numbers do not),
  // so several writes may be deferred before the pass rebuilds the trace.
  void defer(uint32_t slot, IRRef at, IRRef value);

  // Whether an exit after `after` (>= at), up to the register's next write
  // after `at`, may read `slot` from memory (it is live there and the
  // snapshot does not name it): dropping the write at `at` needs no snapshot
  // entry when none does. (Fusion passes the end of the run it removes.)
  bool needed_by_exits(uint32_t slot, IRRef at, IRRef after) const;

  // Whether instruction `q` writes register `slot` in the interpreter's
  // memory (an SSTORE of it, a helper call whose result it owns).
  bool writes(IRRef q, uint32_t slot) const;

 private:
  // Whether the interpreter may read `slot` resuming through snapshot `s`.
  bool live(uint16_t s, uint32_t slot) const;
  bool named(uint16_t s, uint32_t slot) const;
  bool written_between(uint32_t slot, IRRef from, IRRef to) const;  // some q in (from, to)

  TraceIR& ir_;
  IRRef loop_;
  IRRef last_frame_op_ = kNoRef;  // the last FPUSH or FPOP
};

// Whether instruction `ins` may leave the trace through its snapshot.
inline bool may_exit(const IRIns& ins) {
  return ins.snap != kNoSnap && (ir_is_guard(ins.op) || ins.op == IROp::CALL);
}

}  // namespace tessera::jit
