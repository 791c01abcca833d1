#include "optimizer/dse.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "optimizer/alias.h"
#include "optimizer/ir_rewrite.h"

namespace tessera::jit {
namespace {

// Values that own a reference count (tags Str and above).
bool is_refcounted(IRType t) { return t == IRType::Str || t == IRType::List || t == IRType::Tensor; }

// Whether the store at `store` is overwritten by a later MustAlias store
// before anything may observe it (the rules in dse.h).
bool overwritten_unobserved(const TraceIR& ir, const AliasAnalysis& aa, IRRef store) {
  const IRRef value = ir[store].op2;
  if (value >= ir.size())
    throw std::invalid_argument("dse: the store at " + std::to_string(store) + " stores no value");
  const bool stores_object = is_refcounted(ir[value].type);
  for (IRRef q = store + 1; q < ir.size(); ++q) {
    const IROp op = ir[q].op;
    if (AliasAnalysis::is_store(op)) {
      if (aa.alias(store, q) == AliasResult::MustAlias) return true;
      if (stores_object && op != IROp::TSTORE) return false;  // may release the object's other owner
      continue;
    }
    if (ir_is_guard(op) || ir_op_info(op).clobbers_memory || op == IROp::LOOP || op == IROp::PHI) return false;
    if (op == IROp::SSTORE && stores_object) return false;
    if (AliasAnalysis::is_load(op) && aa.alias(store, q) != AliasResult::NoAlias) return false;
  }
  return false;
}

}  // namespace

bool DsePass::run(TraceIR& ir) {
  const AliasAnalysis aa(ir);
  std::vector<IRRef> subst = identity_subst(ir);
  std::vector<IRRef> order;
  bool changed = false;
  for (IRRef r = 0; r < ir.size(); ++r) {
    const IROp op = ir[r].op;
    if (ir_is_const(op)) continue;
    if (AliasAnalysis::is_store(op) && overwritten_unobserved(ir, aa, r)) {
      subst[r] = kNoRef;
      changed = true;
      continue;
    }
    order.push_back(r);
  }
  if (!changed) return false;
  // The removed stores' LREF/TREF addresses are left for DCE.
  ir = rebuild_trace(ir, subst, order);
  return true;
}

}  // namespace tessera::jit
