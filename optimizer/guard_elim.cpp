#include "optimizer/guard_elim.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/ir_rewrite.h"

namespace tessera::jit {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// No list that fits in memory is longer: its elements take at least 8 bytes
// each, and 2^59 of them would be 2^62 bytes.
constexpr int64_t kMaxListLength = int64_t{1} << 59;

// The five ways two int64 values a and b can be ordered. A relation between
// them is the set of orderings it allows (a bit mask).
enum Ordering : uint8_t {
  kEq = 1,         // a == b
  kLtSame = 2,     // a < b, both negative or both not (so also a <u b)
  kLtNegPos = 4,   // a < 0 <= b (so a >u b)
  kGtSame = 8,     // a > b, both negative or both not
  kGtPosNeg = 16,  // b < 0 <= a (so a <u b)
  kAny = 31,
};
constexpr uint8_t kLt = kLtSame | kLtNegPos;
constexpr uint8_t kGt = kGtSame | kGtPosNeg;

// The orderings under which each int comparison is true: the whole
// implication check is set inclusion over these rows.
struct CompareRow {
  IROp op;
  uint8_t true_when;
};
constexpr CompareRow kCompares[] = {
    {IROp::LT, kLt},      {IROp::LE, kEq | kLt}, {IROp::GT, kGt},
    {IROp::GE, kEq | kGt}, {IROp::EQ, kEq},       {IROp::NE, kLt | kGt},
    {IROp::ULT, kLtSame | kGtPosNeg},
};

uint8_t true_when(IROp op) {
  for (const CompareRow& row : kCompares)
    if (row.op == op) return row.true_when;
  return 0;
}

// The same relation read from b's side (a < b is b > a).
uint8_t swap_sides(uint8_t m) {
  return static_cast<uint8_t>((m & kEq) | (m & kLtSame ? kGtSame : 0) | (m & kGtSame ? kLtSame : 0) |
                              (m & kLtNegPos ? kGtPosNeg : 0) | (m & kGtPosNeg ? kLtNegPos : 0));
}

struct Range {
  int64_t lo = kMin, hi = kMax;
};
constexpr Range kUnknown{};

// Interval arithmetic; a bound that overflows makes the result unknown,
// since the instruction wraps and may give any value.
Range add(Range a, Range b) {
  Range r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return kUnknown;
  return r;
}
Range sub(Range a, Range b) {
  Range r;
  if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi)) return kUnknown;
  return r;
}
Range mul(Range a, Range b) {
  int64_t p[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
    return kUnknown;
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
Range neg(Range a) {
  if (a.lo == kMin) return kUnknown;
  return {-a.hi, -a.lo};
}
// Floored modulo (ir.def): the result has the divisor's sign and is smaller
// in magnitude, whatever the dividend.
Range modulo(Range divisor) {
  if (divisor.lo > 0) return {0, divisor.hi - 1};
  if (divisor.hi < 0) return {divisor.lo + 1, 0};
  return kUnknown;
}

int64_t saturating_add(int64_t a, int64_t d) {
  int64_t r;
  if (__builtin_add_overflow(a, d, &r)) return d > 0 ? kMax : kMin;
  return r;
}

// The orderings two values in these ranges may have (a superset).
uint8_t possible_orderings(Range a, Range b) {
  const bool a_neg = a.lo < 0, a_pos = a.hi >= 0, b_neg = b.lo < 0, b_pos = b.hi >= 0;
  const bool same_sign = (a_neg && b_neg) || (a_pos && b_pos);
  uint8_t m = 0;
  if (a.lo <= b.hi && b.lo <= a.hi) m |= kEq;
  if (a.lo < b.hi && same_sign) m |= kLtSame;
  if (a_neg && b_pos) m |= kLtNegPos;
  if (a.hi > b.lo && same_sign) m |= kGtSame;
  if (a_pos && b_neg) m |= kGtPosNeg;
  return m;
}

// Narrows a and b to the values whose ordering is in `m`. When nothing is
// left (the guard always fails, so what follows never runs) they stay.
void narrow(Range& a, Range& b, uint8_t m) {
  m &= possible_orderings(a, b);
  if (m == 0) return;
  Range na = a, nb = b;
  if (!(m & (kLtNegPos | kGtPosNeg))) {  // equal signs
    if (a.lo >= 0 || b.lo >= 0) na.lo = std::max<int64_t>(na.lo, 0), nb.lo = std::max<int64_t>(nb.lo, 0);
    if (a.hi < 0 || b.hi < 0) na.hi = std::min<int64_t>(na.hi, -1), nb.hi = std::min<int64_t>(nb.hi, -1);
  }
  if (m == kLtNegPos) na.hi = std::min<int64_t>(na.hi, -1), nb.lo = std::max<int64_t>(nb.lo, 0);
  if (m == kGtPosNeg) nb.hi = std::min<int64_t>(nb.hi, -1), na.lo = std::max<int64_t>(na.lo, 0);
  if (!(m & ~(kEq | kLt))) {  // a <= b, or a < b
    const int64_t gap = m & kEq ? 0 : 1;
    na.hi = std::min(na.hi, saturating_add(nb.hi, -gap));
    nb.lo = std::max(nb.lo, saturating_add(na.lo, gap));
  }
  if (!(m & ~(kEq | kGt))) {  // a >= b, or a > b
    const int64_t gap = m & kEq ? 0 : 1;
    na.lo = std::max(na.lo, saturating_add(nb.lo, gap));
    nb.hi = std::min(nb.hi, saturating_add(na.hi, -gap));
  }
  if (!(m & kEq)) {  // a != b: a constant other side trims an end
    if (nb.lo == nb.hi && na.lo == nb.lo && na.lo < na.hi) ++na.lo;
    if (nb.lo == nb.hi && na.hi == nb.lo && na.lo < na.hi) --na.hi;
    if (na.lo == na.hi && nb.lo == na.lo && nb.lo < nb.hi) ++nb.lo;
    if (na.lo == na.hi && nb.hi == na.lo && nb.lo < nb.hi) --nb.hi;
  }
  if (na.lo > na.hi || nb.lo > nb.hi) return;
  a = na;
  b = nb;
}

// One forward walk over the trace, with what is known at each point.
class GuardElim {
 public:
  explicit GuardElim(TraceIR& ir)
      : ir_(ir), loop_(ir.loop_ref()), range_(ir.size()), carried_(ir.size(), false), pinned_(ir.size(), false) {}

  bool run() {
    for (IRRef r = 0; r < ir_.size(); ++r) {
      if (ir_[r].op != IROp::PHI) continue;
      if (loop_ == kNoRef || r < loop_)
        throw std::invalid_argument("guards: PHI " + std::to_string(r) + " is not in a loop body");
      carried_[ir_[r].op1] = true;
    }
    std::vector<IRRef> subst = identity_subst(ir_);
    bool changed = false;
    for (IRRef r = 0; r < ir_.size(); ++r) {
      const IRIns& in = ir_[r];
      if (r == loop_) {
        enter_loop();
      } else if (in.op == IROp::GUARDT || in.op == IROp::GUARDF) {
        const bool passes_when = in.op == IROp::GUARDT;
        if (!pinned_[r] && decide(in.op1) == passes_when) {
          subst[r] = kNoRef;
          changed = true;
        } else {
          assume(in.op1, passes_when);
        }
      } else if (in.type == IRType::Int) {
        range_[r] = compute(r);
      }
    }
    if (!changed) return false;
    std::vector<IRRef> order;
    for (IRRef r = 0; r < ir_.size(); ++r)
      if (!ir_is_const(ir_[r].op) && subst[r] == r) order.push_back(r);
    ir_ = rebuild_trace(ir_, subst, order);
    return true;
  }

 private:
  // What a guard on `cond` passing with `value` says about two int values:
  // the orderings of a and b it allows.
  struct Relation {
    IRRef a, b;
    uint8_t allows;
  };

  bool invariant(IRRef r) const { return !carried_[r] && (loop_ == kNoRef || r < loop_ || ir_is_const(ir_[r].op)); }

  std::optional<Relation> relation(IRRef cond, bool value) const {
    const IRIns& c = ir_[cond];
    if (c.op == IROp::NOT) return relation(c.op1, !value);
    const uint8_t m = true_when(c.op);
    if (m == 0 || ir_[c.op1].type != IRType::Int || ir_[c.op2].type != IRType::Int) return std::nullopt;
    // A comparison made before LOOP of a value a PHI carries compared the
    // value on entry; in the body that ref names the current one.
    if (in_body_ && cond < loop_ && (carried_[c.op1] || carried_[c.op2])) return std::nullopt;
    return Relation{c.op1, c.op2, value ? m : static_cast<uint8_t>(kAny & ~m)};
  }

  // The orderings of a and b that the facts and ranges still allow.
  uint8_t known(IRRef a, IRRef b) const {
    if (a == b) return kEq;
    uint8_t m = possible_orderings(range_[a], range_[b]);
    auto it = facts_.find(std::minmax(a, b));
    if (it != facts_.end()) m &= a < b ? it->second : swap_sides(it->second);
    return m;
  }

  // Whether `cond` is always true or always false here.
  std::optional<bool> decide(IRRef cond) const {
    const IRIns& c = ir_[cond];
    if (c.op == IROp::KBOOL) return c.op1 != 0;
    if (c.op == IROp::NOT) {
      if (std::optional<bool> d = decide(c.op1)) return !*d;
      return std::nullopt;
    }
    if (auto it = truths_.find(cond); it != truths_.end()) return it->second;
    const std::optional<Relation> rel = relation(cond, true);
    if (!rel) return std::nullopt;
    const uint8_t k = known(rel->a, rel->b);
    if (k == 0) return std::nullopt;  // contradicting facts: this point is never reached
    if (!(k & ~rel->allows)) return true;
    if (!(k & rel->allows)) return false;
    return std::nullopt;
  }

  // A kept guard passed: `cond` has `value` from here on.
  void assume(IRRef cond, bool value) {
    truths_[cond] = value;
    const IRIns& c = ir_[cond];
    if (c.op == IROp::NOT) return assume(c.op1, !value);
    const std::optional<Relation> rel = relation(cond, value);
    if (!rel || rel->a == rel->b) return;
    auto [it, fresh] = facts_.emplace(std::minmax(rel->a, rel->b), kAny);
    it->second &= rel->a < rel->b ? rel->allows : swap_sides(rel->allows);
    narrow(range_[rel->a], range_[rel->b], known(rel->a, rel->b));
  }

  Range compute(IRRef r) const {
    const IRIns& in = ir_[r];
    switch (in.op) {
      case IROp::KINT: return {ir_.const_int(r), ir_.const_int(r)};
      case IROp::ADD: return add(range_[in.op1], range_[in.op2]);
      case IROp::SUB: return sub(range_[in.op1], range_[in.op2]);
      case IROp::MUL: return mul(range_[in.op1], range_[in.op2]);
      case IROp::NEG: return neg(range_[in.op1]);
      case IROp::IMOD: return modulo(range_[in.op2]);
      case IROp::LLEN: return {0, kMaxListLength};
      case IROp::TDIM: return {0, kMax};
      case IROp::TRANK: return {0, 8};  // kMaxRank
      default: return kUnknown;
    }
  }

  // At LOOP: keep what holds for invariant values; carried values get their
  // induction ranges (or none).
  void enter_loop() {
    in_body_ = true;
    std::vector<std::pair<IRRef, Range>> carried;
    std::map<IRRef, int> phis_per_value;
    for (IRRef r = loop_ + 1; r < ir_.size(); ++r)
      if (ir_[r].op == IROp::PHI) ++phis_per_value[ir_[r].op1];
    for (IRRef r = loop_ + 1; r < ir_.size(); ++r) {
      const IRIns& phi = ir_[r];
      if (phi.op != IROp::PHI) continue;
      std::optional<Range> in_body;
      if (phis_per_value[phi.op1] == 1) in_body = induction(phi.op1, phi.op2);
      carried.emplace_back(phi.op1, in_body.value_or(kUnknown));
    }
    std::erase_if(facts_, [&](const auto& f) { return carried_[f.first.first] || carried_[f.first.second]; });
    std::erase_if(truths_, [&](const auto& t) { return carried_[t.first]; });
    for (const auto& [x, r] : carried) range_[x] = r;
  }

  // The range in the loop body of x = PHI(x0, x1) where x1 = x0 + c, c > 0
  // a constant, given the range E of x0 on entry. Alone, that says nothing:
  // x0 + c wraps past INT64_MAX to negative values (c = 2^62 wraps on the
  // second iteration). A guard in the body that bounds x0 or x1 by an
  // invariant value rules the wrap out, wherever it stands in the body: an
  // iteration carries x1 into the next one only after every guard of the
  // body has passed.
  //  (a) A guard implies x0 <= U, and U + c does not overflow. In every
  //      iteration that goes round, x0 <= U, so x1 = x0 + c is computed
  //      without wrapping and x1 > x0. By induction on the iterations, x0 >=
  //      E.lo in all of them, and x0 <= max(E.hi, U + c) (entry, or an x1).
  //  (b) A guard implies x1 <= U, and neither E.hi + c nor U + c overflows.
  //      Every x0 is the entry value or an earlier x1, so x0 <= max(E.hi, U),
  //      and x0 + c cannot wrap: again x1 > x0 >= E.lo.
  // U comes from the invariant side's range: x0 < n gives U = hi(n) - 1, so
  // with n unknown a step of 1 is safe and a step of 2 is not; with n a
  // list's length (at most 2^59) any step below 2^62 is.
  // The guard giving U is the induction's premise: it is pinned, never
  // removed by this pass (the range it yields cannot prove it anyway, since
  // it allows U + c, resp. max(E.hi, U), but pinning keeps the argument free
  // of cycles through other guards). Of several such guards the one giving
  // the tightest range is taken, bounds checks (ULT) last: they are what the
  // range is meant to remove.
  std::optional<Range> induction(IRRef x0, IRRef x1) {
    const IRIns& step = ir_[x1];
    if (x1 <= loop_ || step.op != IROp::ADD) return std::nullopt;
    const IRRef k = step.op1 == x0 ? step.op2 : step.op2 == x0 ? step.op1 : kNoRef;
    if (k == kNoRef || ir_[k].op != IROp::KINT || carried_[k] || ir_.const_int(k) <= 0) return std::nullopt;
    const int64_t c = ir_.const_int(k);
    const Range entry = range_[x0];

    struct Premise {
      bool bounds_check;
      Range range;
      IRRef guard;
    };
    std::optional<Premise> best;
    for (IRRef r = loop_ + 1; r < ir_.size(); ++r) {
      const IRIns& g = ir_[r];
      if (g.op != IROp::GUARDT && g.op != IROp::GUARDF) continue;
      const std::optional<Relation> rel = relation(g.op1, g.op == IROp::GUARDT);
      if (!rel) continue;
      for (bool flip : {false, true}) {
        const IRRef x = flip ? rel->b : rel->a, n = flip ? rel->a : rel->b;
        if ((x != x0 && x != x1) || !invariant(n)) continue;
        Range bx = kUnknown, bn = range_[n];
        narrow(bx, bn, flip ? swap_sides(rel->allows) : rel->allows);
        const int64_t u = bx.hi;
        int64_t top, unused;
        if (__builtin_add_overflow(u, c, &top)) continue;  // also when nothing bounds x
        if (x == x1 && __builtin_add_overflow(entry.hi, c, &unused)) continue;
        const Premise p{ir_[g.op1].op == IROp::ULT, {entry.lo, std::max(entry.hi, x == x0 ? top : u)}, r};
        if (!best || std::pair(p.bounds_check, p.range.hi) < std::pair(best->bounds_check, best->range.hi)) best = p;
      }
    }
    if (!best) return std::nullopt;
    pinned_[best->guard] = true;
    return best->range;
  }

  TraceIR& ir_;
  const IRRef loop_;
  bool in_body_ = false;
  std::vector<Range> range_;                          // int values: [lo, hi] here
  std::map<std::pair<IRRef, IRRef>, uint8_t> facts_;  // (a, b), a < b: orderings the guards allow
  std::map<IRRef, bool> truths_;                      // conditions guards established
  std::vector<bool> carried_;                         // first operands of PHIs
  std::vector<bool> pinned_;                          // guards an induction range rests on
};

}  // namespace

bool GuardElimPass::run(TraceIR& ir) { return GuardElim(ir).run(); }

}  // namespace tessera::jit
