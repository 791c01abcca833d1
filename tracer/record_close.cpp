// TraceRecorder, how a trace ends: linked to another trace (or to its own
// entry: a type-unstable loop, a down-recursion), or closed as a loop, and
// the reordering into the trace's final shape (constants, entry SLOADs,
// LOOP, the body, PHIs).
#include <fmt/format.h>

#include "tracer/ir_operands.h"
#include "tracer/recorder.h"
#include "tracer/recorder_internal.h"
#include "tracer/snapshot_builder.h"

namespace tessera::jit {

bool TraceRecorder::visit_loop(uint32_t pc) {
  for (uint32_t p : visited_loops_)
    if (p == pc) return false;
  visited_loops_.push_back(pc);
  return true;
}

TraceRecorder::Status TraceRecorder::link_to(uint32_t target, uint32_t resume_pc) {
  linked_ = true;
  linear_ = true;
  link_target_ = target;
  // The final exit writes every changed slot back, then the runtime enters
  // the target trace, which loads what it needs from the registers. Should
  // the runtime not link, the interpreter resumes where the target starts.
  uint16_t snap = snapshot(resume_pc);
  ir_.emit(IROp::EXIT, IRType::None, 0, 0, snap);
  link_snap_ = snap;
  return close_trace();
}

bool TraceRecorder::loop_types_stable() const {
  for (uint32_t abs = 0; abs < slots_.size(); ++abs) {
    if (sloads_[abs] == kNoRef || !modified_[abs]) continue;
    // A slot a helper changed and nothing read back has no type here.
    if (slots_[abs] == kNoRef || ir_[slots_[abs]].type != ir_[sloads_[abs]].type) return false;
  }
  return true;
}

TraceRecorder::Status TraceRecorder::close_loop(uint32_t resume_pc, const Value* R) {
  if (loop_types_stable()) return close_trace();
  // The first trace of the loop links to its own entry, whose type guard
  // then fails into a peer for the other types (TraceJit); a peer links to
  // whichever of the loop's traces takes the types it ends with (the first
  // one when none does), rather than to its own failing entry.
  return link_to(peer_ ? loop_trace_at(*root_, *loop_pc_, R) : kLinkSelf, resume_pc);
}

TraceRecorder::Status TraceRecorder::close_trace() {
  // Reorder into the trace's final shape: constants, passed values (which
  // snapshot 0 names), entry SLOADs (run once, exiting through snapshot 0),
  // LOOP, the body, and one PHI per loop-carried slot.
  const auto& old = ir_.instructions();
  TraceIR out;
  // Constants keep their pool values: re-create them through the builder.
  std::vector<IRRef> remap = copy_constants(ir_, out);
  auto renumber = [&](IRRef a) { return remap[a]; };
  auto copy = [&](IRRef r) { remap[r] = emit_renumbered(out, old[r], renumber); };
  for (IRRef r = 0; r < old.size(); ++r)
    if (sload_passed(old[r])) remap[r] = out.emit(old[r].op, old[r].type, old[r].op1, old[r].op2);
  // A passed value the trace never reads is written back at once, where the
  // parent's exit would have written it (its register in memory holds a
  // scalar or nil, which needs no release), rather than held in a machine
  // register for every exit to write.
  std::vector<bool> read(old.size(), false);
  for (const IRIns& in : old) for_each_operand_ref(in, [&](IRRef a) { read[a] = true; });
  for (IRRef r = 0; r < old.size(); ++r) {
    if (!sload_passed(old[r]) || read[r]) continue;
    out.emit(IROp::SSTORE, IRType::None, old[r].op1, remap[r]);
    for (Snapshot& s : ir_.snapshots())
      std::erase_if(s.entries, [&](const SnapshotEntry& e) { return e.ref == r && e.slot == old[r].op1; });
  }
  for (IRRef r = 0; r < old.size(); ++r) {
    const IRIns& in = old[r];
    if (in.op == IROp::SLOAD && in.op2 == kSloadEntry) {
      IRIns s = in;
      s.snap = 0;
      remap[r] = out.emit(s.op, s.type, s.op1, s.op2, s.snap);
    }
  }
  if (!linear_) out.emit(IROp::LOOP, IRType::None);
  for (IRRef r = 0; r < old.size(); ++r)
    if (!moved_to_front(old[r])) copy(r);
  const IRRef body_end = static_cast<IRRef>(out.size());
  // Scalars carried from one iteration to the next by a PHI live in SSA
  // values only: exits write them back (the snapshots of the loop body get
  // an entry for each one not yet changed in the iteration, whose value is
  // then the PHI's). Other scalars the iteration wrote (temporaries, values
  // written before they are read) are written back at the end of each
  // iteration, so that the next one starts with them current. (A side trace
  // ends in its EXIT, whose snapshot writes everything back.)
  std::vector<bool> carried(slots_.size(), false);
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs)
    carried[abs] = sloads_[abs] != kNoRef && modified_[abs] && dirty_[abs] && slots_[abs] != kNoRef &&
                   slots_[abs] != sloads_[abs] && !is_object(ir_[slots_[abs]].type);
  // A register needs the write-back only if a named local lives in it when
  // an iteration starts (declared before the loop, still in scope). The
  // others are dead at the back-edge: the compiler's temporaries, which each
  // statement writes before it reads them, and locals declared inside the
  // body, which each iteration declares (writes) again before any use and
  // which are out of scope once the loop is left.
  auto temporary = [&](uint32_t abs) {
    for (const FunctionProto::LocalInfo& l : root_->locals)
      if (l.reg == abs && l.start_pc <= body_begin_ && l.end_pc >= body_begin_) return false;
    return true;
  };
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs)
    if (dirty_[abs] && slots_[abs] != kNoRef && !carried[abs] && !temporary(abs))
      out.emit(IROp::SSTORE, IRType::None, abs, remap[slots_[abs]]);
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs) {
    if (sloads_[abs] == kNoRef || !modified_[abs]) continue;
    IRRef end = slots_[abs];
    if (end == kNoRef) {
      // Changed by a helper whose result was never read back: not carried.
      return abort(AbortReason::TypeUnstable, fmt::format("slot {}", abs));
    }
    if (ir_[end].type != ir_[sloads_[abs]].type)
      return abort(AbortReason::TypeUnstable, fmt::format("slot {}", abs));
    if (end != sloads_[abs]) out.emit(IROp::PHI, ir_[end].type, remap[sloads_[abs]], remap[end]);
  }
  snaps_.finish(ir_, out, SnapshotBuilder::Closing{*root_, carried, sloads_, remap, body_end});
  out.calls() = ir_.calls();
  out.assumed_globals() = ir_.assumed_globals();
  out.copy_descriptions_from(ir_);
  out.copy_origins_from(ir_);
  out.set_function(root_);
  out.set_loop_trip_hint(trip_hint_);
  ir_ = std::move(out);
  return Status::Done;
}

TraceIR TraceRecorder::take_trace() { return std::move(ir_); }

}  // namespace tessera::jit
