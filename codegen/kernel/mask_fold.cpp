// MaskFold (mask_fold.h): interval bounds of i64 values, forward over the
// body in order (SSA: operands come before their uses), then the rewrite.
#include "codegen/kernel/mask_fold.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tessera::kir {

namespace {

// Values beyond this are left unbounded: no product or sum of two bounds
// overflows, and no kernel indexes that far.
constexpr int64_t kLimit = int64_t{1} << 40;

struct Bounds {
  int64_t lo, hi;  // every lane of the value lies in [lo, hi]
};

std::optional<Bounds> bounded(int64_t lo, int64_t hi) {
  if (lo > hi || lo < -kLimit || hi > kLimit) return std::nullopt;
  return Bounds{lo, hi};
}

class MaskFolder {
 public:
  explicit MaskFolder(Kernel& k) : k_(k) {}

  int run() {
    analyze(k_.body);
    if (always_.empty()) return 0;
    int folded = 0;
    rewrite(k_.body, folded);
    if (folded > 0) remove_dead();
    return folded;
  }

 private:
  std::optional<Bounds> of(ValueId v) const {
    auto it = bounds_.find(v);
    return it == bounds_.end() ? std::nullopt : std::optional<Bounds>(it->second);
  }
  void set(ValueId v, std::optional<Bounds> b) {
    if (b) bounds_[v] = *b;
  }

  std::optional<int64_t> grid_extent(int axis) const {
    if (axis >= static_cast<int>(k_.grid.size())) return 1;
    const Extent& e = k_.grid[static_cast<size_t>(axis)];
    int64_t v = e.factor;
    for (int d : e.dims) {
      const auto& dv = k_.dim_values.size() > static_cast<size_t>(d) ? k_.dim_values[static_cast<size_t>(d)]
                                                                      : std::optional<int64_t>{};
      if (!dv || *dv < 0 || *dv > kLimit) return std::nullopt;
      v *= *dv;
      if (v > kLimit) return std::nullopt;
    }
    return e.div > 0 ? std::optional<int64_t>((v + e.div - 1) / e.div) : std::nullopt;
  }

  std::optional<Bounds> arith(KOp op, Bounds a, Bounds b) const {
    switch (op) {
      case KOp::Add: return bounded(a.lo + b.lo, a.hi + b.hi);
      case KOp::Sub: return bounded(a.lo - b.hi, a.hi - b.lo);
      case KOp::Mul:
        if (a.lo < 0 || b.lo < 0) return std::nullopt;
        if (a.hi > 0 && b.hi > kLimit / a.hi) return std::nullopt;
        return bounded(a.lo * b.lo, a.hi * b.hi);
      case KOp::Div:
        if (a.lo < 0 || b.lo <= 0) return std::nullopt;
        return bounded(a.lo / b.hi, a.hi / b.lo);
      case KOp::Rem:
        if (a.lo < 0 || b.lo <= 0) return std::nullopt;
        return bounded(0, std::min(a.hi, b.hi - 1));
      default: return std::nullopt;
    }
  }

  // Whether `a pred b` holds for every lane of every program.
  static bool always(Pred p, Bounds a, Bounds b) {
    switch (p) {
      case Pred::Lt: return a.hi < b.lo;
      case Pred::Le: return a.hi <= b.lo;
      case Pred::Gt: return a.lo > b.hi;
      case Pred::Ge: return a.lo >= b.hi;
      case Pred::Eq: return a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
      case Pred::Ne: return a.hi < b.lo || b.hi < a.lo;
    }
    return false;
  }

  void analyze(const Block& blk) {
    for (const Inst& in : blk.insts) {
      const bool int_result = !in.results.empty() && k_.value(in.results[0]).type.elem == Elem::I64;
      switch (in.op) {
        case KOp::Const:
          if (int_result) set(in.results[0], bounded(in.ivalue, in.ivalue));
          break;
        case KOp::Dim:
          if (static_cast<size_t>(in.index) < k_.dim_values.size())
            if (const auto& v = k_.dim_values[static_cast<size_t>(in.index)]) set(in.results[0], bounded(*v, *v));
          break;
        case KOp::ProgramId:
          if (auto e = grid_extent(in.index); e && *e > 0) set(in.results[0], bounded(0, *e - 1));
          break;
        case KOp::Range: set(in.results[0], bounded(0, k_.value(in.results[0]).type.numel() - 1)); break;
        case KOp::Splat:
        case KOp::Broadcast:
          if (int_result) set(in.results[0], of(in.operands[0]));
          break;
        case KOp::Add:
        case KOp::Sub:
        case KOp::Mul:
        case KOp::Div:
        case KOp::Rem:
          if (int_result)
            if (auto a = of(in.operands[0]), b = of(in.operands[1]); a && b) set(in.results[0], arith(in.op, *a, *b));
          break;
        case KOp::Cmp:
          if (auto a = of(in.operands[0]), b = of(in.operands[1]); a && b && always(in.pred, *a, *b))
            always_.insert(in.results[0]);
          break;
        case KOp::For: {
          // iv runs lo, lo + step, ... while below hi: with a known lo and
          // step, its last value is the last step below hi's bound.
          const auto lo = of(in.operands[0]), hi = of(in.operands[1]), step = of(in.operands[2]);
          if (lo && hi && step && lo->lo == lo->hi && step->lo == step->hi && step->lo > 0 && hi->hi > lo->lo) {
            const int64_t last = lo->lo + (hi->hi - 1 - lo->lo) / step->lo * step->lo;
            set(in.body->args[0], bounded(lo->lo, last));
          }
          analyze(*in.body);
          break;
        }
        default: break;
      }
    }
  }

  ValueId resolved(ValueId v) const {
    auto it = replaced_.find(v);
    return it == replaced_.end() ? v : it->second;
  }

  void rewrite(Block& blk, int& folded) {
    for (Inst& in : blk.insts) {
      for (ValueId& o : in.operands) o = resolved(o);
      if (in.op == KOp::Load && in.operands.size() >= 2 && always_.count(in.operands[1])) {
        in.operands.erase(in.operands.begin() + 1, in.operands.end());  // the mask, the masked-off lanes' value
        ++folded;
      } else if (in.op == KOp::Store && in.operands.size() == 3 && always_.count(in.operands[2])) {
        in.operands.pop_back();
        ++folded;
      } else if (in.op == KOp::Select && always_.count(in.operands[0])) {
        replaced_[in.results[0]] = in.operands[1];
        ++folded;
      }
      if (in.body) rewrite(*in.body, folded);
    }
  }

  // Pure instructions whose results nothing uses, until none is left.
  void remove_dead() {
    for (bool changed = true; changed;) {
      std::unordered_set<ValueId> used;
      count(k_.body, used);
      changed = prune(k_.body, used);
    }
  }
  static void count(const Block& blk, std::unordered_set<ValueId>& used) {
    for (const Inst& in : blk.insts) {
      used.insert(in.operands.begin(), in.operands.end());
      if (in.body) count(*in.body, used);
    }
  }
  static bool prune(Block& blk, const std::unordered_set<ValueId>& used) {
    bool changed = false;
    for (Inst& in : blk.insts)
      if (in.body) changed = prune(*in.body, used) || changed;
    const auto dead = [&](const Inst& in) {
      if (!(op_info(in.op).flags & Pure) || in.results.empty()) return false;
      return std::none_of(in.results.begin(), in.results.end(), [&](ValueId r) { return used.count(r) > 0; });
    };
    const size_t before = blk.insts.size();
    blk.insts.erase(std::remove_if(blk.insts.begin(), blk.insts.end(), dead), blk.insts.end());
    return changed || blk.insts.size() != before;
  }

  Kernel& k_;
  std::unordered_map<ValueId, Bounds> bounds_;
  std::unordered_set<ValueId> always_;  // i1 values true in every lane
  std::unordered_map<ValueId, ValueId> replaced_;
};

}  // namespace

int fold_masks(Kernel& k) { return MaskFolder(k).run(); }

}  // namespace tessera::kir
