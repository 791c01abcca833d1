#include "optimizer/deferred_writes.h"

#include <algorithm>
#include <set>

#include "tracer/register_liveness.h"

namespace tessera::jit {

DeferredWrites::DeferredWrites(TraceIR& ir) : ir_(ir), loop_(ir.loop_ref()) {
  for (IRRef q = 0; q < ir.size(); ++q)
    if (ir_op_info(ir[q].op).moves_base) last_frame_op_ = q;
}

bool DeferredWrites::writes(IRRef q, uint32_t slot) const {
  const IRIns& in = ir_[q];
  if (in.op == IROp::SSTORE) return in.op1 == slot;
  return in.op == IROp::CALL && in.op2 < ir_.calls().size() &&
         ir_.calls()[in.op2].dest_slot == static_cast<int32_t>(slot);
}

bool DeferredWrites::live(uint16_t sn, uint32_t slot) const {
  const Snapshot& s = ir_.snapshots()[sn];
  const FunctionProto* base = s.base_proto ? s.base_proto : ir_.function();
  // The innermost frame that holds the slot decides, at the instruction it
  // resumes at: the snapshot's own pc for the innermost frame, the one after
  // the call for its callers (an inlined callee's frame overlaps its
  // caller's registers above the call's).
  for (size_t i = s.frames.size() + 1; i-- > 0;) {
    const FunctionProto* fn = i == 0 ? base : s.frames[i - 1].proto;
    const uint32_t at = i == 0 ? 0 : s.frames[i - 1].base;
    if (fn == nullptr) return true;  // unknown (IR parsed without a resolver)
    if (slot < at || slot - at >= static_cast<uint32_t>(fn->nregs)) continue;
    const uint32_t pc = i == s.frames.size() ? s.pc : s.frames[i].call_pc + 1;
    return register_live_at(*fn, pc, slot - at);
  }
  // In no frame: registers above the innermost frame are written before
  // they are read (a call's arguments, a callee's locals).
  return base == nullptr;
}

bool DeferredWrites::named(uint16_t sn, uint32_t slot) const {
  const auto& entries = ir_.snapshots()[sn].entries;
  return std::any_of(entries.begin(), entries.end(), [&](const SnapshotEntry& e) { return e.slot == slot; });
}

bool DeferredWrites::written_between(uint32_t slot, IRRef from, IRRef to) const {
  for (IRRef q = from + 1; q < to && q < ir_.size(); ++q)
    if (writes(q, slot)) return true;
  return false;
}

bool DeferredWrites::can_defer(uint32_t slot, IRRef at) const {
  // A frame push or pop after the write hands the registers over without an
  // exit (a pushed callee's caller reads them when the callee returns), and
  // slot numbers change meaning there.
  if (at >= ir_.size() || (last_frame_op_ != kNoRef && last_frame_op_ > at)) return false;
  if (loop_ != kNoRef) {
    if (at < loop_) return false;
    // Exits in the next iteration before the write expect the register as
    // this iteration left it, unless a later write of this iteration (its
    // own business) or an earlier one of that iteration stands in between.
    const bool superseded = written_between(slot, at, static_cast<IRRef>(ir_.size()));
    if (!superseded) {
      if (!ir_.snapshots().empty() && live(0, slot)) return false;  // the loop header (tier-up exit)
      for (IRRef q = loop_ + 1; q < at; ++q) {
        const IRIns& in = ir_[q];
        if (!may_exit(in) || named(in.snap, slot) || !live(in.snap, slot)) continue;
        if (!written_between(slot, loop_, q)) return false;
      }
    }
  }
  // A snapshot must not serve exits on both sides of the write: the entry
  // it gets would be wrong before it. (The writing call's own snapshot is
  // before it: the call exits there when it fails, and so do guards a pass
  // puts before it.)
  std::set<uint16_t> before;
  for (IRRef q = 0; q <= at; ++q)
    if (may_exit(ir_[q])) before.insert(ir_[q].snap);
  for (IRRef q = at + 1; q < ir_.size() && !writes(q, slot); ++q)
    if (may_exit(ir_[q]) && before.count(ir_[q].snap)) return false;
  return true;
}

bool DeferredWrites::needed_by_exits(uint32_t slot, IRRef at, IRRef after) const {
  for (IRRef q = at + 1; q < ir_.size() && !writes(q, slot); ++q) {
    const IRIns& in = ir_[q];
    if (q > after && may_exit(in) && !named(in.snap, slot) && live(in.snap, slot)) return true;
  }
  return false;
}

void DeferredWrites::defer(uint32_t slot, IRRef at, IRRef value) {
  for (IRRef q = at + 1; q < ir_.size() && !writes(q, slot); ++q) {
    const IRIns& in = ir_[q];
    if (!may_exit(in) || named(in.snap, slot) || !live(in.snap, slot)) continue;
    auto& entries = ir_.snapshots()[in.snap].entries;
    auto pos = std::lower_bound(entries.begin(), entries.end(), slot,
                                [](const SnapshotEntry& x, uint32_t s) { return x.slot < s; });
    entries.insert(pos, SnapshotEntry{slot, value});
  }
}

}  // namespace tessera::jit
