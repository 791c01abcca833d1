#include "optimizer/phi_merge.h"

#include <algorithm>
#include <vector>

#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {

namespace {

// Whether an instruction at or before `last` exits through a snapshot other
// than 0 that names `r` (its exit would then write the other value).
bool named_before(const TraceIR& ir, IRRef last, IRRef r) {
  for (IRRef g = 0; g <= last; ++g) {
    const uint16_t s = ir[g].snap;
    if (s == kNoSnap || s == 0 || s >= ir.snapshots().size()) continue;
    for (const SnapshotEntry& e : ir.snapshots()[s].entries)
      if (e.ref == r) return true;
  }
  return false;
}

// Whether an instruction after LOOP other than a PHI reads `r`, or a
// snapshot names it.
bool used_in_body(const TraceIR& ir, IRRef loop, IRRef r) {
  for (IRRef u = loop + 1; u < ir.size(); ++u) {
    if (ir[u].op == IROp::PHI) continue;
    bool reads = false;
    for_each_operand_ref(ir[u], [&](IRRef a) { reads = reads || a == r; });
    if (reads) return true;
  }
  for (const Snapshot& s : ir.snapshots())
    for (const SnapshotEntry& e : s.entries)
      if (e.ref == r) return true;
  return false;
}

// The first pair of PHIs with the same next value whose entry values are
// distinct ints defined before LOOP.
bool find_merge(const TraceIR& ir, IRRef loop, PhiMergePass::Merge& m) {
  std::vector<IRRef> phis;
  for (IRRef r = loop + 1; r < ir.size(); ++r)
    if (ir[r].op == IROp::PHI) phis.push_back(r);
  for (size_t x = 0; x < phis.size(); ++x) {
    for (size_t y = x + 1; y < phis.size(); ++y) {
      const IRIns &p = ir[phis[x]], &q = ir[phis[y]];
      if (p.op2 != q.op2 || p.op1 == q.op1 || p.type != IRType::Int || q.type != IRType::Int) continue;
      if (!used_in_body(ir, loop, p.op1) || !used_in_body(ir, loop, q.op1)) continue;  // merged already
      if (ir_is_const(ir[p.op1].op) || ir_is_const(ir[q.op1].op) || p.op1 >= loop || q.op1 >= loop) continue;
      const IRRef last = std::max(p.op1, q.op1);
      if (named_before(ir, last, p.op1) || named_before(ir, last, q.op1)) continue;
      m = PhiMergePass::Merge{p.op1, q.op1, phis[y]};
      return true;
    }
  }
  return false;
}

}  // namespace

bool PhiMergePass::run(TraceIR& ir) {
  const IRRef loop = ir.loop_ref();
  if (!exits_to_entry_state(ir, loop)) return false;
  bool changed = false;
  for (Merge m; find_merge(ir, loop, m); changed = true) merge(ir, m);
  return changed;
}

void PhiMergePass::merge(TraceIR& ir, const Merge& m) {
  const IRRef last = std::max(m.keep, m.gone);
  const IRRef same = ir.emit(IROp::EQ, IRType::Bool, m.keep, m.gone);
  const IRRef check = ir.emit(IROp::GUARDT, IRType::None, same, 0, 0);
  auto to_keep = [&](IRRef r) { return r == m.gone ? m.keep : r; };
  for (IRRef r = last + 1; r < same; ++r)
    if (r != m.gone_phi) map_operand_refs(ir[r], to_keep);
  for (Snapshot& s : ir.snapshots())
    for (SnapshotEntry& e : s.entries) e.ref = to_keep(e.ref);

  std::vector<IRRef> order;
  for (IRRef r = 0; r < same; ++r) {
    if (ir_is_const(ir[r].op)) continue;
    order.push_back(r);
    if (r == last) {
      order.push_back(same);
      order.push_back(check);
    }
  }
  ir = rebuild_trace(ir, identity_subst(ir), order);
}

}  // namespace tessera::jit
