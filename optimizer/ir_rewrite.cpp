#include "optimizer/ir_rewrite.h"

#include <stdexcept>
#include <string>

namespace tessera::jit {

IRRef resolve_ref(const std::vector<IRRef>& subst, IRRef r) {
  // Chains are short (a replacement is always an earlier, kept instruction);
  // the bound only guards against a malformed substitution.
  for (size_t hops = 0; r != kNoRef && r < subst.size() && subst[r] != r; ++hops) {
    if (hops > subst.size()) throw std::logic_error("rebuild_trace: cyclic substitution");
    r = subst[r];
  }
  return r;
}

std::vector<IRRef> identity_subst(const TraceIR& ir) {
  std::vector<IRRef> s(ir.size());
  for (IRRef r = 0; r < ir.size(); ++r) s[r] = r;
  return s;
}

TraceIR rebuild_trace(const TraceIR& in, const std::vector<IRRef>& subst, const std::vector<IRRef>& order) {
  const size_t n = in.size();
  auto final_ref = [&](IRRef r) {
    IRRef f = resolve_ref(subst, r);
    if (f == kNoRef || f >= n)
      throw std::logic_error("rebuild_trace: a use of " + std::to_string(r) + " refers to a dropped instruction");
    return f;
  };

  // Which constants survive: those a kept instruction or a snapshot uses.
  std::vector<bool> used(n, false);
  for (IRRef r : order) {
    const IRIns& ins = in[r];
    const IROpInfo& info = ir_op_info(ins.op);
    if (info.op1 == OperandKind::ref && ins.op1 != kNoRef) used[final_ref(ins.op1)] = true;
    if (info.op2 == OperandKind::ref && ins.op2 != kNoRef) used[final_ref(ins.op2)] = true;
  }
  for (const Snapshot& s : in.snapshots())
    for (const SnapshotEntry& e : s.entries) used[final_ref(e.ref)] = true;

  TraceIR out;
  std::vector<IRRef> remap(n, kNoRef);
  for (IRRef r = 0; r < n; ++r) {
    const IRIns& ins = in[r];
    if (!ir_is_const(ins.op) || !used[r]) continue;
    switch (ins.op) {
      case IROp::KNIL: remap[r] = out.knil(); break;
      case IROp::KBOOL: remap[r] = out.kbool(ins.op1 != 0); break;
      case IROp::KINT: remap[r] = out.kint(in.const_int(r)); break;
      case IROp::KFLOAT: remap[r] = out.kfloat(in.const_float(r)); break;
      case IROp::KOBJ: remap[r] = out.kobj(in.const_ptr(r), ins.type); break;
      default: break;
    }
  }
  // New numbers first: a PHI's second operand may come later in the order.
  IRRef next = static_cast<IRRef>(out.size());
  for (IRRef r : order) {
    if (ir_is_const(in[r].op)) throw std::logic_error("rebuild_trace: constants are not ordered");
    if (remap[r] != kNoRef) throw std::logic_error("rebuild_trace: instruction ordered twice");
    remap[r] = next++;
  }
  for (IRRef r : order) {
    IRIns ins = in[r];
    const IROpInfo& info = ir_op_info(ins.op);
    if (info.op1 == OperandKind::ref && ins.op1 != kNoRef) ins.op1 = remap[final_ref(ins.op1)];
    if (info.op2 == OperandKind::ref && ins.op2 != kNoRef) ins.op2 = remap[final_ref(ins.op2)];
    out.emit(ins.op, ins.type, ins.op1, ins.op2, ins.snap);
  }
  for (const Snapshot& old : in.snapshots()) {
    Snapshot s = old;
    for (SnapshotEntry& e : s.entries) e.ref = remap[final_ref(e.ref)];
    // ir= names the first instruction the snapshot is valid for: the first
    // kept instruction at or after the old one.
    IRRef at = static_cast<IRRef>(out.size());
    for (IRRef r = s.ir_ref; r < n; ++r)
      if (remap[r] != kNoRef && !ir_is_const(in[r].op)) {
        at = remap[r];
        break;
      }
    s.ir_ref = at;
    out.snapshots().push_back(std::move(s));
  }
  // ...and never after an instruction that exits through it (a pass may
  // have put new guards before the first kept one).
  for (IRRef r = 0; r < out.size(); ++r) {
    const uint16_t sn = out[r].snap;
    if (sn < out.snapshots().size() && out.snapshots()[sn].ir_ref > r) out.snapshots()[sn].ir_ref = r;
  }
  out.copy_tables_from(in);
  return out;
}

}  // namespace tessera::jit
