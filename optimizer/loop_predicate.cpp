#include "optimizer/loop_predicate.h"

#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "optimizer/ir_rewrite.h"

namespace tessera::jit {
namespace {

constexpr int64_t kStepLimit = int64_t{1} << 31;   // steps and counts below this
constexpr int64_t kStartLimit = int64_t{1} << 62;  // i0 + c0*s < 2^62 + 2^62: no wrap

struct Loop {
  const TraceIR& ir;
  IRRef loop;
  std::map<IRRef, IRRef> next;  // carried value (its pre-LOOP ref) -> its next value

  bool is_kint(IRRef r, int64_t v) const { return ir[r].op == IROp::KINT && ir.const_int(r) == v; }
  bool invariant(IRRef r) const { return ir_is_const(ir[r].op) || (r < loop && !next.count(r)); }
  bool carried(IRRef r) const { return next.count(r) != 0; }

  // c = PHI(c0, c - 1)
  bool counts_down(IRRef c) const {
    if (!carried(c)) return false;
    const IRIns& n = ir[next.at(c)];
    return n.op == IROp::SUB && n.op1 == c && is_kint(n.op2, 1);
  }
  // The carried value a guard in the body proves positive: GUARDT(c > 0),
  // GUARDT(c >= 1), GUARDF(c <= 0), GUARDF(c < 1); else kNoRef.
  IRRef positive(const IRIns& g) const {
    if (g.op != IROp::GUARDT && g.op != IROp::GUARDF) return kNoRef;
    const IRIns& c = ir[g.op1];
    const bool t = g.op == IROp::GUARDT;
    if ((t && c.op == IROp::GT && is_kint(c.op2, 0)) || (t && c.op == IROp::GE && is_kint(c.op2, 1)) ||
        (!t && c.op == IROp::LE && is_kint(c.op2, 0)) || (!t && c.op == IROp::LT && is_kint(c.op2, 1)))
      return c.op1;
    return kNoRef;
  }
  // For i = PHI(i0, i + s) with s invariant: s; else kNoRef.
  IRRef step_of(IRRef i) const {
    if (!carried(i)) return kNoRef;
    const IRIns& n = ir[next.at(i)];
    if (n.op != IROp::ADD) return kNoRef;
    if (n.op1 == i && invariant(n.op2)) return n.op2;
    if (n.op2 == i && invariant(n.op1)) return n.op1;
    return kNoRef;
  }
};

// An index the pass can bound: a basic induction variable `i`, or `k`
// carried with i's next value (k_0 = k0, then i's values shifted by one).
struct IndexIv {
  IRRef i = kNoRef;
  IRRef step = kNoRef;
  bool derived = false;  // k: its own entry value k0 needs its own check
};

struct Hoisted {
  IRRef guard, index, bound;  // index: the carried value the offset is added to
  int64_t offset;
  IndexIv iv;
};

// The bounds guards of the loop's body that predicates before LOOP can
// prove, and the count-down counter they are proved from; empty where the
// pass does nothing.
std::vector<Hoisted> hoistable(const TraceIR& ir, IRRef& count) {
  const IRRef loop_at = ir.loop_ref();
  if (!exits_to_entry_state(ir, loop_at)) return {};
  if (ir.loop_trip_hint() >= 0 && ir.loop_trip_hint() < kMinLoopTripHint) return {};  // keep their checks

  Loop L{ir, loop_at, {}};
  for (IRRef r = loop_at + 1; r < ir.size(); ++r)
    if (ir[r].op == IROp::PHI) L.next[ir[r].op1] = ir[r].op2;

  count = kNoRef;
  for (IRRef r = loop_at + 1; r < ir.size() && count == kNoRef; ++r) {
    const IRRef c = L.positive(ir[r]);
    if (c != kNoRef && L.counts_down(c)) count = c;
  }
  if (count == kNoRef) return {};

  auto index_iv = [&](IRRef v) {
    IndexIv iv;
    if (!L.carried(v)) return iv;
    if (IRRef s = L.step_of(v); s != kNoRef) {
      iv.i = v;
      iv.step = s;
      return iv;
    }
    // k: carried with some basic induction variable's next value.
    const IRRef kn = L.next.at(v);
    for (const auto& [i, in] : L.next)
      if (in == kn && i != v && L.step_of(i) != kNoRef) {
        iv.i = i;
        iv.step = L.step_of(i);
        iv.derived = true;
        return iv;
      }
    return iv;
  };
  auto step_usable = [&](IRRef s) {
    return !ir_is_const(ir[s].op) || (ir[s].op == IROp::KINT && ir.const_int(s) >= 1 && ir.const_int(s) < kStepLimit);
  };

  // An index is a carried value v, or v plus or minus a constant (a
  // stencil's xs[k - 1], xs[k + 1]): {v, the offset}.
  auto offset_index = [&](IRRef x) -> std::pair<IRRef, int64_t> {
    const IRIns& in = ir[x];
    auto small = [&](IRRef c) {
      return ir[c].op == IROp::KINT && ir.const_int(c) > -kStepLimit && ir.const_int(c) < kStepLimit;
    };
    if (in.op == IROp::ADD && L.carried(in.op1) && small(in.op2)) return {in.op1, ir.const_int(in.op2)};
    if (in.op == IROp::ADD && L.carried(in.op2) && small(in.op1)) return {in.op2, ir.const_int(in.op1)};
    if (in.op == IROp::SUB && L.carried(in.op1) && small(in.op2)) return {in.op1, -ir.const_int(in.op2)};
    return {x, 0};
  };

  std::vector<Hoisted> hoisted;
  for (IRRef r = loop_at + 1; r < ir.size(); ++r) {
    const IRIns& g = ir[r];
    if (g.op != IROp::GUARDT || ir[g.op1].op != IROp::ULT) continue;
    const IRIns& cmp = ir[g.op1];
    if (!L.invariant(cmp.op2)) continue;
    const auto [index, offset] = offset_index(cmp.op1);
    const IndexIv iv = index_iv(index);
    if (iv.i == kNoRef || !step_usable(iv.step)) continue;
    hoisted.push_back({r, index, cmp.op2, offset, iv});
  }
  return hoisted;
}

}  // namespace

bool LoopPredicatePass::applies(const TraceIR& ir) {
  IRRef count = kNoRef;
  return !hoistable(ir, count).empty();
}

bool LoopPredicatePass::run(TraceIR& ir) {
  const IRRef loop_at = ir.loop_ref();
  IRRef count = kNoRef;
  const std::vector<Hoisted> hoisted = hoistable(ir, count);
  if (hoisted.empty()) return false;

  // The predicates, appended now and placed before LOOP below; each
  // exits through snapshot 0.
  const size_t first_new = ir.size();
  auto guard = [&](IRRef a, IRRef b) {
    const IRRef c = ir.emit(IROp::ULT, IRType::Bool, a, b);
    ir.emit(IROp::GUARDT, IRType::None, c, 0, 0);
  };
  guard(count, ir.kint(kStepLimit));  // 0 <= c0 < 2^31
  std::map<IRRef, IRRef> last;        // i -> i0 + c0*s, once its own predicates are in
  enum Side { kLargest, kSmallest, kFirst };
  std::set<std::tuple<IRRef, IRRef, int64_t, Side>> done;  // (value, bound, offset, which) checked
  auto shifted = [&](IRRef v, int64_t offset) {
    return offset ? ir.emit(IROp::ADD, IRType::Int, v, ir.kint(offset)) : v;
  };
  for (const Hoisted& h : hoisted) {
    auto [it, fresh] = last.emplace(h.iv.i, kNoRef);
    if (fresh) {
      if (!ir_is_const(ir[h.iv.step].op))  // 0 < s < 2^31
        guard(ir.emit(IROp::SUB, IRType::Int, h.iv.step, ir.kint(1)), ir.kint(kStepLimit - 1));
      guard(h.iv.i, ir.kint(kStartLimit));  // 0 <= i0 < 2^62
      it->second = ir.emit(IROp::ADD, IRType::Int, h.iv.i, ir.emit(IROp::MUL, IRType::Int, count, h.iv.step));
    }
    // The largest index, i0 + c0*s + offset, below the bound (unsigned).
    if (done.emplace(h.iv.i, h.bound, h.offset, kLargest).second) guard(shifted(it->second, h.offset), h.bound);
    // A negative offset also needs the smallest at least 0: i0 + offset
    // (k's values from the second iteration on, i0 + s + offset; its first
    // is k0 + offset, below).
    if (h.offset < 0 && done.emplace(h.iv.i, h.bound, h.offset, kSmallest).second) {
      const IRRef smallest = h.iv.derived ? ir.emit(IROp::ADD, IRType::Int, h.iv.i, h.iv.step) : h.iv.i;
      guard(shifted(smallest, h.offset), h.bound);
    }
    if (h.iv.derived && done.emplace(h.index, h.bound, h.offset, kFirst).second)
      guard(shifted(h.index, h.offset), h.bound);
  }

  std::vector<IRRef> subst = identity_subst(ir);
  for (const Hoisted& h : hoisted) subst[h.guard] = kNoRef;
  std::vector<IRRef> order;
  for (IRRef r = 0; r < loop_at; ++r)
    if (!ir_is_const(ir[r].op)) order.push_back(r);
  for (IRRef r = static_cast<IRRef>(first_new); r < ir.size(); ++r)
    if (!ir_is_const(ir[r].op)) order.push_back(r);
  for (IRRef r = loop_at; r < first_new; ++r)
    if (!ir_is_const(ir[r].op) && subst[r] != kNoRef) order.push_back(r);
  ir = rebuild_trace(ir, subst, order);
  return true;
}

}  // namespace tessera::jit
