#include "optimizer/cse.h"

#include <map>
#include <set>
#include <tuple>

#include "optimizer/ir_rewrite.h"

namespace tessera::jit {
namespace {

// What one region knows: pure values, established guards, and the loads
// still valid. Keys use resolved operands, so chains of equal values match.
struct RegionTables {
  std::map<std::tuple<IROp, IRType, uint32_t, uint32_t>, IRRef> pure;
  std::set<std::pair<IROp, IRRef>> guards;        // (GUARDT|GUARDF, cond) established
  std::map<uint32_t, IRRef> globals;              // global -> value
  std::map<IRRef, IRRef> lengths;                 // list -> LLEN
  std::map<std::pair<IRRef, IRRef>, IRRef> elements;  // (list, index) -> value
  std::map<std::pair<IRRef, IRRef>, IRRef> tensor_elements;
  std::map<std::tuple<IROp, IRRef, IRRef>, IRRef> addresses;  // LREF/TREF

  void forget_memory() {
    globals.clear();
    lengths.clear();
    elements.clear();
    tensor_elements.clear();
    addresses.clear();
  }
  void clear() {
    pure.clear();
    guards.clear();
    forget_memory();
  }
};

}  // namespace

bool CsePass::run(TraceIR& ir) {
  std::vector<IRRef> subst = identity_subst(ir);
  RegionTables t;
  bool changed = false;
  // Operands as they will be after substitution: keys compare final values.
  auto op_ref = [&](IRRef r) { return resolve_ref(subst, r); };
  auto replace = [&](IRRef r, IRRef by) {
    subst[r] = by;
    changed = true;
  };

  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if (ir_is_const(in.op)) continue;
    const IROpInfo& info = ir_op_info(in.op);
    const uint32_t a = info.op1 == OperandKind::ref && in.op1 != kNoRef ? op_ref(in.op1) : in.op1;
    const uint32_t b = info.op2 == OperandKind::ref && in.op2 != kNoRef ? op_ref(in.op2) : in.op2;

    switch (in.op) {
      case IROp::LOOP:
        t.clear();
        continue;
      case IROp::GUARDT:
      case IROp::GUARDF: {
        const bool want = in.op == IROp::GUARDT;
        const IRIns& cond = ir[a];
        const bool constant_ok = cond.op == IROp::KBOOL && (cond.op1 != 0) == want;
        if (constant_ok || t.guards.count({in.op, a})) {
          replace(r, kNoRef);
          continue;
        }
        t.guards.insert({in.op, a});
        continue;
      }
      case IROp::GLOAD: {
        auto it = t.globals.find(in.op1);
        if (it != t.globals.end() && ir[it->second].type == in.type) {
          replace(r, it->second);
          continue;
        }
        t.globals[in.op1] = r;
        continue;
      }
      case IROp::GSTORE:
        t.globals[in.op1] = b;
        continue;
      case IROp::LLEN: {
        auto [it, fresh] = t.lengths.emplace(a, r);
        if (!fresh) replace(r, it->second);
        continue;
      }
      case IROp::LLOAD: {
        auto it = t.elements.find({a, b});
        if (it != t.elements.end() && ir[it->second].type == in.type) {
          replace(r, it->second);
          continue;
        }
        t.elements[{a, b}] = r;
        continue;
      }
      case IROp::LSTORE: {
        t.elements.clear();
        const IRIns& ref = ir[a];
        if (ref.op == IROp::LREF) t.elements[{op_ref(ref.op1), op_ref(ref.op2)}] = b;
        continue;
      }
      case IROp::TLOAD: {
        auto [it, fresh] = t.tensor_elements.emplace(std::make_pair(a, b), r);
        if (!fresh && ir[it->second].type == in.type) replace(r, it->second);
        continue;
      }
      case IROp::LREF:
      case IROp::TREF: {
        auto [it, fresh] = t.addresses.emplace(std::make_tuple(in.op, a, b), r);
        if (!fresh) replace(r, it->second);
        continue;
      }
      case IROp::TSTORE:
        t.tensor_elements.clear();
        continue;
      default:
        break;
    }
    if (clobbers_memory(in.op)) {
      t.forget_memory();
      continue;
    }
    if (ir_is_cse(in.op)) {
      auto [it, fresh] = t.pure.emplace(std::make_tuple(in.op, in.type, a, b), r);
      if (!fresh) replace(r, it->second);
    }
  }
  if (!changed) return false;

  std::vector<IRRef> order;
  for (IRRef r = 0; r < ir.size(); ++r)
    if (!ir_is_const(ir[r].op) && subst[r] == r) order.push_back(r);
  ir = rebuild_trace(ir, subst, order);
  return true;
}

}  // namespace tessera::jit
