#include "optimizer/cse.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "optimizer/alias.h"
#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {
namespace {

// The values known to be in memory (globals, list and tensor elements): what
// a load read or a store wrote, per location. A store forgets exactly the
// entries the alias analysis says it may overwrite.
class KnownMemory {
 public:
  explicit KnownMemory(const AliasAnalysis& aa) : aa_(aa) {}

  // The value known at a location that must alias `loc`, or kNoRef.
  IRRef find(const MemLocation& loc) const {
    for (const Entry& e : known_)
      if (aa_.alias(e.loc, loc) == AliasResult::MustAlias) return e.value;
    return kNoRef;
  }
  // `value` is what `loc` holds now (read by a load or written by a store).
  void remember(const MemLocation& loc, IRRef value) {
    std::erase_if(known_, [&](const Entry& e) { return aa_.alias(e.loc, loc) == AliasResult::MustAlias; });
    known_.push_back({loc, value});
  }
  // A store to `loc`: what may have been at it is no longer known.
  void forget_aliases(const MemLocation& loc) {
    std::erase_if(known_, [&](const Entry& e) { return aa_.alias(e.loc, loc) != AliasResult::NoAlias; });
  }
  void clear() { known_.clear(); }

 private:
  struct Entry {
    MemLocation loc;
    IRRef value;
  };
  const AliasAnalysis& aa_;
  std::vector<Entry> known_;
};

// What one region knows: pure values, established guards, and the loads
// still valid. Keys use resolved operands, so chains of equal values match.
struct RegionTables {
  explicit RegionTables(const AliasAnalysis& aa) : memory(aa) {}
  std::map<std::tuple<IROp, IRType, uint32_t, uint32_t>, IRRef> pure;
  std::set<std::pair<IROp, IRRef>> guards;  // (GUARDT|GUARDF, cond) established
  KnownMemory memory;                       // GLOAD/LLOAD/TLOAD values, GSTORE/LSTORE values
  std::map<IRRef, IRRef> lengths;           // list -> LLEN
  std::map<std::tuple<IROp, IRRef, IRRef>, IRRef> addresses;  // LREF/TREF

  void forget_memory() {
    memory.clear();
    lengths.clear();
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
  bool changed = false;
  // Operands as they will be after substitution: keys compare final values.
  auto op_ref = [&](IRRef r) { return resolve_ref(subst, r); };
  const AliasAnalysis aa(ir, op_ref);
  RegionTables t(aa);
  auto replace = [&](IRRef r, IRRef by) {
    subst[r] = by;
    changed = true;
  };
  // A load is replaced by the value known at its location when the types
  // agree (the load's type guard then holds); otherwise it becomes known.
  auto load = [&](IRRef r) {
    const MemLocation loc = aa.location(r);
    const IRRef known = t.memory.find(loc);
    if (known != kNoRef && ir[known].type == ir[r].type) {
      replace(r, known);
      return;
    }
    t.memory.remember(loc, r);
  };

  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if (ir_is_const(in.op)) continue;
    IRIns resolved = in;
    map_operand_refs(resolved, op_ref);
    const uint32_t a = resolved.op1;
    const uint32_t b = resolved.op2;

    switch (in.op) {
      case IROp::LOOP: {
        // Pure values and established guards carry into the body when no
        // operand is loop-carried: inside the body a PHI's first operand
        // names the PHI, every other reference the same value as before
        // LOOP (what a peeled iteration computes once serves every
        // iteration, LuaJIT's loop optimization). Memory does not carry:
        // the body's stores change it from one iteration to the next.
        std::set<IRRef> carried;
        for (IRRef q = r + 1; q < ir.size(); ++q)
          if (ir[q].op == IROp::PHI) carried.insert(op_ref(ir[q].op1));
        std::erase_if(t.pure, [&](const auto& e) {
          const auto& [op, type, x, y] = e.first;
          return (ir_operand_is_ref(op, 0) && carried.count(x)) || (ir_operand_is_ref(op, 1) && carried.count(y));
        });
        std::erase_if(t.guards, [&](const auto& g) { return carried.count(g.second) > 0; });
        t.forget_memory();
        continue;
      }
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
      case IROp::GLOAD:
      case IROp::LLOAD:
      case IROp::TLOAD:
        load(r);
        continue;
      case IROp::GSTORE:
      case IROp::LSTORE: {
        // The stored value is forwarded; a list store through something
        // other than an LREF names no known element and is only a kill.
        const MemLocation loc = aa.location(r);
        t.memory.forget_aliases(loc);
        if (loc.space == MemLocation::Space::Global || loc.object != kNoRef) t.memory.remember(loc, b);
        continue;
      }
      case IROp::TSTORE:
        // Not forwarded: the value is converted to the tensor's dtype.
        t.memory.forget_aliases(aa.location(r));
        continue;
      case IROp::LLEN: {
        auto [it, fresh] = t.lengths.emplace(a, r);
        if (!fresh) replace(r, it->second);
        continue;
      }
      case IROp::LREF:
      case IROp::TREF: {
        auto [it, fresh] = t.addresses.emplace(std::make_tuple(in.op, a, b), r);
        if (!fresh) replace(r, it->second);
        continue;
      }
      default:
        break;
    }
    if (ir_op_info(in.op).clobbers_memory) {
      t.forget_memory();
      continue;
    }
    if (ir_is_cse(in.op)) {
      // Equality is symmetric: EQ b a is EQ a b (the recorder and fusion
      // compare a tensor's dims in either order).
      const bool symmetric = in.op == IROp::EQ || in.op == IROp::NE;
      const uint32_t x = symmetric ? std::min(a, b) : a, y = symmetric ? std::max(a, b) : b;
      auto [it, fresh] = t.pure.emplace(std::make_tuple(in.op, in.type, x, y), r);
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
