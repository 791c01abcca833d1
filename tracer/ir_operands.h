// IR plumbing shared by the recorder, the optimizer passes, the backends and
// the verifier: which operands of an instruction are references (from
// ir.def's operand kinds), copying constants from one TraceIR into another,
// and emitting an instruction and a snapshot into a new trace under a
// renumbering. Every place that walks or renumbers operands goes through
// these, so that an opcode whose operand kinds change in ir.def changes
// everywhere at once.
#pragma once

#include <type_traits>
#include <vector>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// Whether operand `k` (0: op1, 1: op2) of `op` is an IR reference per ir.def.
inline bool ir_operand_is_ref(IROp op, int k) {
  const IROpInfo& info = ir_op_info(op);
  return (k == 0 ? info.op1 : info.op2) == OperandKind::ref;
}

// Calls f(ref) (or f(ref, k), k = 0 for op1, 1 for op2) for each operand of
// `ins` that ir.def says is a reference and that is not kNoRef (an empty
// CALL argument chain). A CARG chain is visited node by node: its leaves are
// the CARG nodes' operands (carg_list gives them in order).
template <typename F>
void for_each_operand_ref(const IRIns& ins, F&& f) {
  const IROpInfo& info = ir_op_info(ins.op);
  auto call = [&](IRRef r, int k) {
    if constexpr (std::is_invocable_v<F&, IRRef, int>)
      f(r, k);
    else
      f(r);
  };
  if (info.op1 == OperandKind::ref && ins.op1 != kNoRef) call(ins.op1, 0);
  if (info.op2 == OperandKind::ref && ins.op2 != kNoRef) call(ins.op2, 1);
}

// Replaces each reference operand r of `ins` (as for_each_operand_ref) by map(r).
template <typename Map>
void map_operand_refs(IRIns& ins, Map&& map) {
  const IROpInfo& info = ir_op_info(ins.op);
  if (info.op1 == OperandKind::ref && ins.op1 != kNoRef) ins.op1 = map(ins.op1);
  if (info.op2 == OperandKind::ref && ins.op2 != kNoRef) ins.op2 = map(ins.op2);
}

// The references `ins` reads, in operand order (see for_each_operand_ref).
inline void operand_refs(const IRIns& ins, std::vector<IRRef>& out) {
  out.clear();
  for_each_operand_ref(ins, [&](IRRef r) { out.push_back(r); });
}

// Re-creates constant `r` of `from` in `to` through its builder (which
// deduplicates and fills the constant pool); returns its reference in `to`.
// Throws std::invalid_argument when `r` is not a constant.
IRRef copy_constant(const TraceIR& from, IRRef r, TraceIR& to);

// Copies the constants of `from` into `to` (those `keep` marks, or all when
// `keep` is empty) and returns the renumbering: remap[r] is the constant's
// reference in `to`, kNoRef for every other entry. The first step of every
// rebuild of a trace (the recorder's close_trace, loop peeling,
// rebuild_trace): constants come first.
std::vector<IRRef> copy_constants(const TraceIR& from, TraceIR& to, const std::vector<bool>& keep = {});

// Emits `in` into `to` with every reference operand r renumbered to map(r)
// and the snapshot `snap`; returns its new reference. The second step of a
// rebuild, once per kept instruction in its new order.
template <typename Map>
IRRef emit_renumbered(TraceIR& to, IRIns in, Map&& map, uint16_t snap) {
  map_operand_refs(in, map);
  const IRRef r = to.emit(in.op, in.type, in.op1, in.op2, snap);
  to[r].flags = in.flags;
  to[r].origin = in.origin;  // an index into the origins the rebuild copies (copy_tables_from)
  return r;
}
template <typename Map>
IRRef emit_renumbered(TraceIR& to, const IRIns& in, Map&& map) {
  return emit_renumbered(to, in, map, in.snap);
}

// Renumbers a snapshot's entries (every entry's ref becomes map(ref)); the
// last step of a rebuild. The snapshot's ir= is the caller's to place.
template <typename Map>
void renumber_snapshot_entries(Snapshot& s, Map&& map) {
  for (SnapshotEntry& e : s.entries) e.ref = map(e.ref);
}

// Moves each snapshot's ir= up to the first instruction that exits through
// it when that one comes earlier: a snapshot is valid from ir= on, and an
// exit before it would be outside that range. The last step of a rebuild
// (rebuild_trace, the recorder's close_trace, loop peeling), since moving
// instructions (entry SLOADs to the preamble, hoisted guards) can put an
// exit before the instruction the snapshot was taken at.
void clamp_snapshot_starts(TraceIR& ir);

}  // namespace tessera::jit
