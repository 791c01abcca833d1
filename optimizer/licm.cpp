#include "optimizer/licm.h"

#include <set>
#include <utility>

#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {

bool LicmPass::run(TraceIR& ir) {
  const IRRef loop = ir.loop_ref();
  if (!exits_to_entry_state(ir, loop)) return false;

  // What the body may change.
  const bool calls = ir.loop_body_clobbers_memory();
  bool list_stores = false;
  std::set<uint32_t> stored_globals;
  std::vector<bool> invariant(ir.size(), false);
  for (IRRef r = 0; r < loop; ++r) invariant[r] = true;  // constants come first, then the entry loads
  for (IRRef r = loop + 1; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    const IROpInfo& info = ir_op_info(in.op);
    if (info.mem_access == IRMemAccess::Store && info.mem_space == IRMemSpace::ListElement) list_stores = true;
    if (info.mem_access == IRMemAccess::Store && info.mem_space == IRMemSpace::Global) stored_globals.insert(in.op1);
    if (in.op == IROp::PHI) invariant[in.op1] = false;
  }

  auto operands_invariant = [&](const IRIns& in) {
    bool all = true;
    for_each_operand_ref(in, [&](IRRef a) { all = all && invariant[a]; });
    return all;
  };

  std::set<std::pair<IRRef, IRRef>> bounds_checked;  // (list, index) with a moved bounds guard
  std::vector<IRRef> moved;
  std::vector<bool> is_moved(ir.size(), false);
  for (IRRef r = loop + 1; r < ir.size(); ++r) {
    IRIns& in = ir[r];
    if (ir_is_const(in.op) || !operands_invariant(in)) continue;
    bool move = false;
    switch (in.op) {
      case IROp::GUARDT:
      case IROp::GUARDF: {
        move = true;
        const IRIns& cond = ir[in.op1];
        if (in.op == IROp::GUARDT && cond.op == IROp::ULT && ir[cond.op2].op == IROp::LLEN)
          bounds_checked.insert({ir[cond.op2].op1, cond.op1});
        break;
      }
      case IROp::GLOAD: move = !calls && !stored_globals.count(in.op1); break;
      case IROp::LLEN: move = !calls; break;
      case IROp::LLOAD: move = !calls && !list_stores && bounds_checked.count({in.op1, in.op2}); break;
      default: move = ir_is_cse(in.op) && !ir_op_info(in.op).may_trap; break;
    }
    if (!move) continue;
    if (ir_is_guard(in.op)) in.snap = 0;
    invariant[r] = true;
    is_moved[r] = true;
    moved.push_back(r);
  }
  if (moved.empty()) return false;

  std::vector<IRRef> order;
  for (IRRef r = 0; r < loop; ++r)
    if (!ir_is_const(ir[r].op)) order.push_back(r);
  order.insert(order.end(), moved.begin(), moved.end());
  for (IRRef r = loop; r < ir.size(); ++r)
    if (!ir_is_const(ir[r].op) && !is_moved[r]) order.push_back(r);
  ir = rebuild_trace(ir, identity_subst(ir), order);
  return true;
}

}  // namespace tessera::jit
