#include "optimizer/ir_rewrite.h"

#include <stdexcept>
#include <string>

#include "tracer/ir_operands.h"

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
  for (IRRef r : order) for_each_operand_ref(in[r], [&](IRRef a) { used[final_ref(a)] = true; });
  for (const Snapshot& s : in.snapshots())
    for (const SnapshotEntry& e : s.entries) used[final_ref(e.ref)] = true;

  TraceIR out;
  std::vector<IRRef> remap = copy_constants(in, out, used);
  // New numbers first: a PHI's second operand may come later in the order.
  IRRef next = static_cast<IRRef>(out.size());
  for (IRRef r : order) {
    if (ir_is_const(in[r].op)) throw std::logic_error("rebuild_trace: constants are not ordered");
    if (remap[r] != kNoRef) throw std::logic_error("rebuild_trace: instruction ordered twice");
    remap[r] = next++;
  }
  auto renumber = [&](IRRef a) { return remap[final_ref(a)]; };
  for (IRRef r : order) emit_renumbered(out, in[r], renumber);
  for (const Snapshot& old : in.snapshots()) {
    Snapshot s = old;
    renumber_snapshot_entries(s, renumber);
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
  clamp_snapshot_starts(out);
  out.copy_tables_from(in);
  return out;
}

}  // namespace tessera::jit
