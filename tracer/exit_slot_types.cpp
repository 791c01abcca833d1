#include "tracer/exit_slot_types.h"

namespace tessera::jit {

namespace {

// The first instruction that exits through `snap` (kNoRef: none, or the
// snapshot has inlined frames).
IRRef exit_cut(const TraceIR& ir, uint16_t snap) {
  if (snap >= ir.snapshots().size() || !ir.snapshots()[snap].frames.empty()) return kNoRef;
  for (IRRef r = 0; r < ir.size(); ++r)
    if (ir[r].snap == snap) return r;
  return kNoRef;
}

bool inheritable_constant(const IRIns& in) {
  return (in.op == IROp::KINT && in.type == IRType::Int) || in.op == IROp::KBOOL ||
         (in.op == IROp::KOBJ && in.type == IRType::Str);
}

}  // namespace

std::unordered_map<uint32_t, IRType> exit_slot_types(const TraceIR& ir, uint16_t snap) {
  std::unordered_map<uint32_t, IRType> types;
  const IRRef cut = exit_cut(ir, snap);
  if (cut == kNoRef) return types;
  const Snapshot& s = ir.snapshots()[snap];
  for (IRRef r = 0; r < cut; ++r) {
    const IRIns& in = ir[r];
    if (ir_op_info(in.op).moves_base) {
      types.clear();
      continue;
    }
    switch (in.op) {
      case IROp::SLOAD: types[in.op1] = in.type; break;
      case IROp::SSTORE: types[in.op1] = ir[in.op2].type; break;
      case IROp::CALL: {
        if (in.op2 >= ir.calls().size() || ir.calls()[in.op2].dest_slot < 0) break;
        const auto dest = static_cast<uint32_t>(ir.calls()[in.op2].dest_slot);
        if (in.type == IRType::None) types.erase(dest);  // any type
        else types[dest] = in.type;                      // checked against the result's tag
        break;
      }
      default: break;
    }
  }
  for (const SnapshotEntry& e : s.entries) types[e.slot] = ir[e.ref].type;
  std::erase_if(types, [](const auto& kv) { return kv.second == IRType::None; });
  return types;
}

std::unordered_map<uint32_t, IRRef> exit_slot_constants(const TraceIR& ir, uint16_t snap) {
  std::unordered_map<uint32_t, IRRef> consts;
  const IRRef cut = exit_cut(ir, snap);
  if (cut == kNoRef) return consts;
  for (IRRef r = 0; r < cut; ++r) {
    const IRIns& in = ir[r];
    // A loop's body may store another value after the exit, which the next
    // iteration then sees: only the body's own stores before the exit hold.
    if (ir_op_info(in.op).moves_base || in.op == IROp::LOOP) {
      consts.clear();
    } else if (in.op == IROp::SSTORE) {
      if (inheritable_constant(ir[in.op2])) consts[in.op1] = in.op2;
      else consts.erase(in.op1);
    } else if (in.op == IROp::CALL && in.op2 < ir.calls().size() && ir.calls()[in.op2].dest_slot >= 0) {
      consts.erase(static_cast<uint32_t>(ir.calls()[in.op2].dest_slot));
    }
  }
  for (const SnapshotEntry& e : ir.snapshots()[snap].entries) {
    if (inheritable_constant(ir[e.ref])) consts[e.slot] = e.ref;
    else consts.erase(e.slot);
  }
  return consts;
}

bool same_constant(const TraceIR& x, IRRef a, const TraceIR& y, IRRef b) {
  const IRIns &p = x[a], &q = y[b];
  if (p.op != q.op || p.type != q.type) return false;
  switch (p.op) {
    case IROp::KINT: return x.const_int(a) == y.const_int(b);
    case IROp::KBOOL: return p.op1 == q.op1;
    case IROp::KOBJ: return x.const_ptr(a) == y.const_ptr(b);
    default: return false;
  }
}

}  // namespace tessera::jit
