#include "optimizer/fold.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {
namespace {

enum class Pat : uint8_t { any, none, kint, kflt, kbool, zero, one, fzero, fone, same, inv };
enum class Result : uint8_t { eval, left, right, inner, kint0, ktrue, kfalse };

struct FoldRule {
  IROp op;
  Pat left, right;
  Result result;
};

constexpr FoldRule kRules[] = {
#define FOLD(op, l, r, res) {IROp::op, Pat::l, Pat::r, Result::res},
#include "optimizer/fold_rules.def"
#undef FOLD
};

class Folder {
 public:
  explicit Folder(TraceIR& ir) : ir_(ir), subst_(identity_subst(ir)) {}

  bool run() {
    bool changed = false;
    const IRRef n = static_cast<IRRef>(ir_.size());  // constants it adds are not revisited
    for (IRRef r = 0; r < n; ++r) {
      if (ir_is_const(ir_[r].op)) continue;
      if (std::optional<IRRef> to = fold(r)) {
        grow();
        subst_[r] = *to;
        changed = true;
      }
    }
    if (!changed) return false;
    grow();
    std::vector<IRRef> order;
    for (IRRef r = 0; r < ir_.size(); ++r)
      if (!ir_is_const(ir_[r].op) && subst_[r] == r) order.push_back(r);
    ir_ = rebuild_trace(ir_, subst_, order);
    return true;
  }

 private:
  void grow() {
    for (IRRef r = static_cast<IRRef>(subst_.size()); r < ir_.size(); ++r) subst_.push_back(r);
  }
  IRRef cur(IRRef r) const { return resolve_ref(subst_, r); }

  bool is_int_const(IRRef r, int64_t v) const { return ir_[r].op == IROp::KINT && ir_.const_int(r) == v; }
  bool is_float_bits(IRRef r, double v) const {
    return ir_[r].op == IROp::KFLOAT && std::bit_cast<uint64_t>(ir_.const_float(r)) == std::bit_cast<uint64_t>(v);
  }

  bool matches(Pat p, IRRef ref, IRRef left, IROp op) const {
    switch (p) {
      case Pat::any: return true;
      case Pat::none: return true;
      case Pat::kint: return ir_[ref].op == IROp::KINT;
      case Pat::kflt: return ir_[ref].op == IROp::KFLOAT;
      case Pat::kbool: return ir_[ref].op == IROp::KBOOL;
      case Pat::zero: return is_int_const(ref, 0);
      case Pat::one: return is_int_const(ref, 1);
      case Pat::fzero: return is_float_bits(ref, 0.0);
      case Pat::fone: return is_float_bits(ref, 1.0);
      case Pat::same: return ref == left && (ir_[left].type == IRType::Int || ir_[left].type == IRType::Bool);
      case Pat::inv: return ir_[ref].op == op;
    }
    return false;
  }

  std::optional<IRRef> fold(IRRef r) {
    const IRIns in = ir_[r];  // a copy: making a constant may grow the array
    if (!ir_is_cse(in.op) || !ir_operand_is_ref(in.op, 0)) return std::nullopt;
    const IRRef a = cur(in.op1);
    const IRRef b = ir_operand_is_ref(in.op, 1) ? cur(in.op2) : kNoRef;
    for (const FoldRule& rule : kRules) {
      if (rule.op != in.op || !matches(rule.left, a, a, in.op)) continue;
      if (b != kNoRef ? rule.right == Pat::none || !matches(rule.right, b, a, in.op) : rule.right != Pat::none)
        continue;
      switch (rule.result) {
        case Result::left: return a;
        case Result::right: return b;
        case Result::inner: return cur(ir_[a].op1);
        case Result::kint0: return ir_.kint(0);
        case Result::ktrue: return ir_.kbool(true);
        case Result::kfalse: return ir_.kbool(false);
        case Result::eval:
          if (std::optional<IRRef> k = eval(in.op, a, b)) return k;
          continue;
      }
    }
    return std::nullopt;
  }

  // The interpreter's semantics on constants: ints wrap (two's complement),
  // floats are IEEE doubles.
  std::optional<IRRef> eval(IROp op, IRRef a, IRRef b) {
    auto u = [&](IRRef r) { return static_cast<uint64_t>(ir_.const_int(r)); };
    auto i = [&](IRRef r) { return ir_.const_int(r); };
    auto f = [&](IRRef r) { return ir_.const_float(r); };
    const bool ints = ir_[a].op == IROp::KINT;
    const bool flts = ir_[a].op == IROp::KFLOAT;
    switch (op) {
      case IROp::ADD: return ir_.kint(static_cast<int64_t>(u(a) + u(b)));
      case IROp::SUB: return ir_.kint(static_cast<int64_t>(u(a) - u(b)));
      case IROp::MUL: return ir_.kint(static_cast<int64_t>(u(a) * u(b)));
      case IROp::NEG: return ir_.kint(static_cast<int64_t>(0 - u(a)));
      case IROp::IMIN: return ir_.kint(std::min(i(a), i(b)));
      case IROp::IMAX: return ir_.kint(std::max(i(a), i(b)));
      case IROp::FADD: return ir_.kfloat(f(a) + f(b));
      case IROp::FSUB: return ir_.kfloat(f(a) - f(b));
      case IROp::FMUL: return ir_.kfloat(f(a) * f(b));
      case IROp::FNEG: return ir_.kfloat(-f(a));
      case IROp::CONV: return ir_.kfloat(static_cast<double>(i(a)), true);  // still an int to the interpreter
      case IROp::F32RND: return ir_.kfloat(static_cast<double>(static_cast<float>(f(a))));
      case IROp::NOT: return ir_.kbool(ir_[a].op1 == 0);
      case IROp::ULT: return ir_.kbool(u(a) < u(b));
      default: break;
    }
    if (ints || flts) {
      const bool lt = ints ? i(a) < i(b) : f(a) < f(b);
      const bool gt = ints ? i(a) > i(b) : f(a) > f(b);
      const bool eq = ints ? i(a) == i(b) : f(a) == f(b);
      switch (op) {
        case IROp::LT: return ir_.kbool(lt);
        case IROp::LE: return ir_.kbool(lt || eq);
        case IROp::GT: return ir_.kbool(gt);
        case IROp::GE: return ir_.kbool(gt || eq);
        case IROp::EQ: return ir_.kbool(eq);
        case IROp::NE: return ir_.kbool(!eq);
        default: return std::nullopt;
      }
    }
    if (ir_[a].op == IROp::KBOOL && (op == IROp::EQ || op == IROp::NE))
      return ir_.kbool((ir_[a].op1 == ir_[b].op1) == (op == IROp::EQ));
    return std::nullopt;
  }

  TraceIR& ir_;
  std::vector<IRRef> subst_;
};

}  // namespace

bool FoldPass::run(TraceIR& ir) { return Folder(ir).run(); }

}  // namespace tessera::jit
