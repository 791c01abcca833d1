#include "optimizer/dce.h"

#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {

bool DcePass::run(TraceIR& ir) {
  const size_t n = ir.size();
  std::vector<bool> live(n, false);
  for (const Snapshot& s : ir.snapshots())
    for (const SnapshotEntry& e : s.entries) live[e.ref] = true;
  for (IRRef r = 0; r < n; ++r)
    if (ir_is_guard(ir[r].op) || ir_has_side_effect(ir[r].op)) live[r] = true;
  // Operands point backwards except a PHI's second one; PHIs are live roots
  // at the end of the trace, so one backward sweep reaches their operands.
  for (IRRef r = static_cast<IRRef>(n); r-- > 0;) {
    if (!live[r]) continue;
    for_each_operand_ref(ir[r], [&](IRRef a) { live[a] = true; });
  }
  std::vector<IRRef> subst = identity_subst(ir);
  std::vector<IRRef> order;
  bool changed = false;
  for (IRRef r = 0; r < n; ++r) {
    if (live[r]) {
      if (!ir_is_const(ir[r].op)) order.push_back(r);
    } else {
      subst[r] = kNoRef;
      changed = true;
    }
  }
  if (!changed) return false;
  ir = rebuild_trace(ir, subst, order);
  return true;
}

}  // namespace tessera::jit
