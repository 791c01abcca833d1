#include "optimizer/tensor_sink.h"

#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "optimizer/deferred_writes.h"
#include "optimizer/fold.h"
#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"
#include "vm/core/error.h"
#include "vm/core/operators.h"
#include "vm/graph/op_table.h"
#include "vm/tensor/broadcast.h"
#include "vm/tensor/dtype.h"
#include "vm/tensor/vector_math.h"

namespace tessera::jit {
namespace {

enum class Kind : uint8_t { FromList, Fill, Unary, Reduce, Item, Len, Numel, Ndim, Binary };

// The interpreter computes the unary math of an int tensor in double and
// rounds once (elementwise.cpp, unary_f); a float tensor's with the f32 rows
// of FMATH. Each f32 row with its double twin.
constexpr std::pair<FloatMath, FloatMath> kDoubleRows[] = {
    {FloatMath::ExpF32, FloatMath::Exp}, {FloatMath::LogF32, FloatMath::Log}, {FloatMath::SinF32, FloatMath::Sin},
    {FloatMath::CosF32, FloatMath::Cos}, {FloatMath::TanhF32, FloatMath::Tanh}};

FloatMath double_row(FloatMath f) {
  for (const auto& [f32, dbl] : kDoubleRows)
    if (f32 == f) return dbl;
  return f;  // sqrt: one row, correctly rounded either way
}

struct Rule {
  Kind kind;
  int nargs;
  IROp float_op, int_op;
  int aux;
};

// A built-in: a Graph IR op's (by OpId), or another one (by name).
struct BuiltinRule {
  OpId op;
  std::string_view name;  // when not a Graph IR op's
  Rule rule;
  std::string_view builtin_name() const { return name.empty() ? std::string_view(op_def(op).name) : name; }
};
constexpr BuiltinRule kBuiltinRules[] = {
#define TSINK_OP(op, kind, nargs, fop, iop, aux) \
  {OpId::op, {}, {Kind::kind, nargs, IROp::fop, IROp::iop, static_cast<int>(aux)}},
#define TSINK_BUILTIN(name, kind, nargs, fop, iop, aux) \
  {OpId{}, name, {Kind::kind, nargs, IROp::fop, IROp::iop, static_cast<int>(aux)}},
#define TSINK_ARITH(op, fop, iop)
#define TSINK_NEGATE(fop, iop)
#include "optimizer/tensor_sink_ops.def"
#undef TSINK_OP
#undef TSINK_BUILTIN
#undef TSINK_ARITH
#undef TSINK_NEGATE
};

struct ArithRule {
  BinOp op;
  Rule rule;
};
constexpr ArithRule kArithRules[] = {
#define TSINK_OP(op, kind, nargs, fop, iop, aux)
#define TSINK_BUILTIN(name, kind, nargs, fop, iop, aux)
#define TSINK_ARITH(op, fop, iop) {BinOp::op, {Kind::Binary, 2, IROp::fop, IROp::iop, 0}},
#define TSINK_NEGATE(fop, iop)
#include "optimizer/tensor_sink_ops.def"
#undef TSINK_OP
#undef TSINK_BUILTIN
#undef TSINK_ARITH
#undef TSINK_NEGATE
};

constexpr Rule kNegateRules[] = {
#define TSINK_OP(op, kind, nargs, fop, iop, aux)
#define TSINK_BUILTIN(name, kind, nargs, fop, iop, aux)
#define TSINK_ARITH(op, fop, iop)
#define TSINK_NEGATE(fop, iop) {Kind::Unary, 1, IROp::fop, IROp::iop, 0},
#include "optimizer/tensor_sink_ops.def"
#undef TSINK_OP
#undef TSINK_BUILTIN
#undef TSINK_ARITH
#undef TSINK_NEGATE
};

// The row for a helper call with `nargs` arguments, or null.
const Rule* rule_for(const CallTarget& t, size_t nargs) {
  const Rule* r = nullptr;
  if (t.is<call::Builtin>()) {
    for (const BuiltinRule& b : kBuiltinRules)
      if (b.builtin_name() == t.name) r = &b.rule;
  } else if (const auto* arith = std::get_if<call::Arith>(&t.what)) {
    for (const ArithRule& a : kArithRules)
      if (a.op == arith->op) r = &a.rule;
  } else if (t.is<call::Negate>()) {
    r = &kNegateRules[0];
  }
  return r != nullptr && static_cast<size_t>(r->nargs) == nargs ? r : nullptr;
}

bool is_number(IRType t) { return t == IRType::Int || t == IRType::Float; }
// What an element of a sunk tensor (f32 or i64) is in the IR.
IRType element_type(DType d) { return d == DType::F32 ? IRType::Float : IRType::Int; }

// A tensor whose layout the trace knows: the result (`reload`) of a helper
// call, or (call kNoRef) a tensor the trace got elsewhere whose layout the
// call at `guarded_at` saw while recording, checked by guards before it.
struct Producer {
  IRRef call = kNoRef, reload = kNoRef;
  const Rule* rule = nullptr;
  std::vector<IRRef> args;
  VirtualTensor vt;
  bool sunk = true;  // still a candidate (cleared when it escapes)
  IRRef guarded_at = kNoRef;
};

// A helper call of item/len/numel/ndim on such a tensor: replaced by a value.
struct Query {
  IRRef call = kNoRef, reload = kNoRef;
  const Rule* rule = nullptr;
  IRRef input = kNoRef;
};

class TensorSinker {
 public:
  TensorSinker(TraceIR& ir, uint32_t max_elements) : ir_(ir), max_(max_elements), writes_(ir) {}

  bool run() {
    find_layouts();
    if (producers_.empty()) return false;
    choose_sunk();
    transform();
    return true;
  }

 private:
  // --- analysis

  // The SLOAD (op2 = 1) that types the result of CALL `c`, or kNoRef.
  IRRef reload_of(IRRef c) const {
    const IRIns& call = ir_[c];
    if (call.op != IROp::CALL || call.op2 >= ir_.calls().size() || c + 1 >= ir_.size()) return kNoRef;
    const int32_t dest = ir_.calls()[call.op2].dest_slot;
    const IRIns& r = ir_[c + 1];
    return dest >= 0 && r.op == IROp::SLOAD && r.op2 == 1 && r.op1 == static_cast<uint32_t>(dest) ? c + 1 : kNoRef;
  }
  uint32_t dest_of(IRRef c) const { return static_cast<uint32_t>(ir_.calls()[ir_[c].op2].dest_slot); }

  const Producer* static_tensor(IRRef reload) const {
    auto it = by_reload_.find(reload);
    return it == by_reload_.end() ? nullptr : &producers_[it->second];
  }
  // A static tensor the trace made (not one known by guards): its TDTYPE,
  // TRANK and TDIM are constants everywhere.
  const Producer* made_tensor(IRRef r) const {
    const Producer* p = static_tensor(r);
    return p != nullptr && p->call != kNoRef ? p : nullptr;
  }

  // Tensor arguments of rule call `c` without a known layout whose layout
  // the call saw while recording (CallTarget::seen) become guarded static
  // tensors; returns how many were added (the caller drops them again when
  // the call gains nothing from them).
  size_t guard_seen_arguments(IRRef c, const std::vector<IRRef>& args) {
    const CallTarget& target = ir_.calls()[ir_[c].op2];
    size_t added = 0;
    for (size_t i = 0; i < args.size() && i < target.seen.size(); ++i) {
      const IRRef a = args[i];
      if (ir_[a].type != IRType::Tensor || static_tensor(a) != nullptr || !target.seen[i] || !fits(*target.seen[i]) ||
          (target.seen[i]->dtype != DType::F32 && target.seen[i]->dtype != DType::I64) || ir_[c].snap == kNoSnap)
        continue;
      by_reload_[a] = producers_.size();
      producers_.push_back(Producer{kNoRef, a, nullptr, {}, *target.seen[i], false, c});
      ++added;
    }
    return added;
  }
  void drop_guarded(size_t n) {
    for (; n > 0; --n) {
      by_reload_.erase(producers_.back().reload);
      producers_.pop_back();
    }
  }

  // The elements of the list literal whose reload is `r`, when nothing that
  // could change the list runs between it and `use`.
  std::optional<std::vector<IRRef>> list_literal(IRRef r, IRRef use) const {
    if (r == 0 || r >= ir_.size() || reload_of(r - 1) != r) return std::nullopt;
    const IRIns& call = ir_[r - 1];
    if (!ir_.calls()[call.op2].is<call::NewList>()) return std::nullopt;
    for (IRRef q = r + 1; q < use; ++q)
      if (ir_op_info(ir_[q].op).clobbers_memory || ir_[q].op == IROp::LSTORE) return std::nullopt;
    return carg_list(ir_, call.op1);
  }

  bool fits(const VirtualTensor& vt) const {
    if (vt.shape.size() > 8) return false;
    int64_t n = 1;
    for (int64_t d : vt.shape) {
      if (d < 1 || d > static_cast<int64_t>(max_)) return false;
      n *= d;
      if (n > static_cast<int64_t>(max_)) return false;
    }
    return true;
  }

  // The layout of the tensor CALL `c` computes, if the trace knows it.
  std::optional<VirtualTensor> layout(IRRef c, const Rule& rule, const std::vector<IRRef>& args) const {
    VirtualTensor vt;
    switch (rule.kind) {
      case Kind::FromList: {
        auto items = list_literal(args[0], c);
        if (!items || items->empty()) return std::nullopt;
        bool any_float = false;
        for (IRRef x : *items) {
          if (!is_number(ir_[x].type)) return std::nullopt;
          any_float = any_float || ir_[x].type == IRType::Float;
        }
        vt.dtype = any_float ? DType::F32 : DType::I64;
        vt.shape = {static_cast<int64_t>(items->size())};
        break;
      }
      case Kind::Fill: {
        auto dims = list_literal(args[0], c);
        if (!dims) return std::nullopt;
        for (IRRef d : *dims) {
          if (ir_[d].op != IROp::KINT) return std::nullopt;
          vt.shape.push_back(ir_.const_int(d));
        }
        if (rule.aux < 0 && !is_number(ir_[args[1]].type)) return std::nullopt;
        vt.dtype = DType::F32;
        break;
      }
      case Kind::Unary: {
        const Producer* in = static_tensor(args[0]);
        if (in == nullptr) return std::nullopt;
        const bool int_result = in->vt.dtype == DType::I64 && rule.int_op != IROp::NumOps;
        vt = VirtualTensor{int_result ? DType::I64 : DType::F32, in->vt.shape};
        break;
      }
      case Kind::Reduce: {
        const Producer* in = static_tensor(args[0]);
        // Beyond one summation block the kernels' order needs the blocks too.
        if (in == nullptr || in->vt.numel() > vmath::kSumBlock) return std::nullopt;
        const bool int_sum = in->vt.dtype == DType::I64 && rule.int_op != IROp::NumOps;
        vt = VirtualTensor{int_sum ? DType::I64 : DType::F32, {}};
        break;
      }
      case Kind::Binary: {
        const Producer* a = static_tensor(args[0]);
        const Producer* b = static_tensor(args[1]);
        if ((a == nullptr && !is_number(ir_[args[0]].type)) || (b == nullptr && !is_number(ir_[args[1]].type)) ||
            (a == nullptr && b == nullptr))
          return std::nullopt;
        auto kind = [&](IRRef x) { return ir_[x].type == IRType::Float ? ScalarKind::Float : ScalarKind::Int; };
        DType d = a && b ? promote_dtypes(a->vt.dtype, b->vt.dtype)
                  : a    ? promote_with_scalar(a->vt.dtype, kind(args[1]))
                         : promote_with_scalar(b->vt.dtype, kind(args[0]));
        if (rule.int_op == IROp::NumOps) d = DType::F32;  // `/` of ints gives f32
        if (d != DType::F32 && d != DType::I64) return std::nullopt;
        vt.dtype = d;
        try {
          vt.shape = broadcast_shapes(a ? a->vt.shape : Shape{}, b ? b->vt.shape : Shape{}, "");
        } catch (const RuntimeError&) {
          return std::nullopt;  // the call raises: the interpreter reports it
        }
        break;
      }
      default: return std::nullopt;
    }
    if (!fits(vt)) return std::nullopt;
    return vt;
  }

  // Whether query `rule` of a tensor of layout `vt` has a value here, typed
  // as the reload `r` saw it.
  bool answers(const Rule& rule, const VirtualTensor& vt, IRRef r) const {
    switch (rule.kind) {
      case Kind::Item: return vt.numel() == 1 && ir_[r].type == element_type(vt.dtype);
      case Kind::Len: return !vt.shape.empty() && ir_[r].type == IRType::Int;
      case Kind::Numel:
      case Kind::Ndim: return ir_[r].type == IRType::Int;
      default: return false;
    }
  }

  void find_layouts() {
    for (IRRef c = 0; c < ir_.size(); ++c) {
      const IRRef r = reload_of(c);
      if (r == kNoRef) continue;
      std::vector<IRRef> args = carg_list(ir_, ir_[c].op1);
      const Rule* rule = rule_for(ir_.calls()[ir_[c].op2], args.size());
      if (rule == nullptr) continue;
      const size_t guarded = guard_seen_arguments(c, args);
      if (rule->kind == Kind::Item || rule->kind == Kind::Len || rule->kind == Kind::Numel ||
          rule->kind == Kind::Ndim) {
        const Producer* in = static_tensor(args[0]);
        if (in != nullptr && answers(*rule, in->vt, r) && writes_.can_defer(dest_of(c), c))
          queries_.push_back(Query{c, r, rule, args[0]});
        else
          drop_guarded(guarded);
        continue;
      }
      std::optional<VirtualTensor> vt;
      if (ir_[r].type == IRType::Tensor) vt = layout(c, *rule, args);
      if (!vt) {
        drop_guarded(guarded);
        continue;
      }
      by_reload_[r] = producers_.size();
      producers_.push_back(Producer{c, r, rule, std::move(args), std::move(*vt)});
    }
  }

  // TDTYPE, TRANK or TDIM of a tensor the trace made: a constant.
  std::optional<int64_t> layout_constant(const IRIns& in) const {
    if (in.op != IROp::TDTYPE && in.op != IROp::TRANK && in.op != IROp::TDIM) return std::nullopt;
    const Producer* p = made_tensor(in.op1);
    if (p == nullptr) return std::nullopt;
    if (in.op == IROp::TDTYPE) return static_cast<int64_t>(p->vt.dtype);
    if (in.op == IROp::TRANK) return static_cast<int64_t>(p->vt.shape.size());
    if (in.op2 < p->vt.shape.size()) return p->vt.shape[in.op2];
    return std::nullopt;
  }

  // A flat element index known when the trace was optimized (constants,
  // sums and products of them, dimensions of static tensors), or none.
  std::optional<int64_t> const_index(IRRef r) const {
    const IRIns& in = ir_[r];
    switch (in.op) {
      case IROp::KINT: return ir_.const_int(r);
      case IROp::TDIM: return layout_constant(in);
      case IROp::ADD:
      case IROp::MUL: {
        auto a = const_index(in.op1), b = const_index(in.op2);
        if (!a || !b) return std::nullopt;
        const auto ua = static_cast<uint64_t>(*a), ub = static_cast<uint64_t>(*b);
        return static_cast<int64_t>(in.op == IROp::ADD ? ua + ub : ua * ub);
      }
      default: return std::nullopt;
    }
  }

  // The element a TLOAD of static tensor `p` reads, when its index is known.
  std::optional<int64_t> loaded_element(const IRIns& load, const Producer& p) const {
    if (load.op2 == p.reload || ir_[load.op2].op != IROp::TIDX) return std::nullopt;
    const IRIns& idx = ir_[load.op2];
    std::optional<int64_t> k = const_index(idx.op1);
    if (!k || idx.op2 != static_cast<uint32_t>(p.vt.dtype) || load.type != element_type(p.vt.dtype) || *k < 0 ||
        *k >= p.vt.numel())
      return std::nullopt;
    return k;
  }

  // The call whose argument chain holds CARG node `q` (kNoRef: none).
  IRRef owner_call(IRRef q) const {
    auto it = carg_owner_.find(q);
    return it == carg_owner_.end() ? kNoRef : it->second;
  }

  // Whether use `q` of producer p's value lets the tensor escape.
  bool escapes_through(IRRef q, const Producer& p) const {
    const IRIns& in = ir_[q];
    switch (in.op) {
      case IROp::TDTYPE:
      case IROp::TRANK:
      case IROp::TDIM: return false;
      case IROp::TLOAD: return in.op1 != p.reload || !loaded_element(in, p);
      case IROp::SSTORE: return false;  // a second name: DeferredWrites decides (choose_sunk)
      case IROp::CARG:
      case IROp::CALL: {
        const IRRef c = in.op == IROp::CALL ? q : owner_call(q);
        if (c == kNoRef || (in.op == IROp::CALL && in.op1 != p.reload)) return true;
        if (replaced_calls_.count(c)) return false;  // a query answered without the call
        auto it = by_reload_.find(reload_of(c));
        return it == by_reload_.end() || !producers_[it->second].sunk;
      }
      default: return true;
    }
  }

  void choose_sunk() {
    for (IRRef c = 0; c < ir_.size(); ++c) {
      if (ir_[c].op != IROp::CALL) continue;
      for (IRRef a = ir_[c].op1; a != kNoRef && a < ir_.size() && ir_[a].op == IROp::CARG; a = ir_[a].op1)
        carg_owner_[a] = c;
    }
    for (const Query& q : queries_) replaced_calls_.insert(q.call);
    std::vector<std::vector<IRRef>> uses(ir_.size());
    for (IRRef q = 0; q < ir_.size(); ++q) {
      const IRIns& in = ir_[q];
      for_each_operand_ref(in, [&](IRRef a, int k) {
        if (a < ir_.size() && (k == 0 || a != in.op1 || !ir_operand_is_ref(in.op, 0))) uses[a].push_back(q);
      });
    }
    for (Producer& p : producers_)
      p.sunk = p.call != kNoRef && writes_.can_defer(dest_of(p.call), p.call) &&
               std::all_of(uses[p.reload].begin(), uses[p.reload].end(), [&](IRRef q) {
                 return ir_[q].op != IROp::SSTORE || writes_.can_defer(ir_[q].op1, q);
               });
    // A tensor escapes through a use that is not sunk: repeat until stable.
    for (bool changed = true; changed;) {
      changed = false;
      for (Producer& p : producers_) {
        if (!p.sunk) continue;
        for (IRRef q : uses[p.reload])
          if (escapes_through(q, p)) {
            p.sunk = false;
            changed = true;
            break;
          }
      }
    }
  }

  // --- transformation

  IRRef emit(IROp op, IRType type, IRRef a, IRRef b = 0, uint16_t snap = kNoSnap) {
    const IRRef r = ir_.emit(op, type, a, b, snap);
    order_.push_back(r);
    return r;
  }

  // The guards that make the layouts of the tensors call `c` saw true: they
  // leave through the call's own snapshot (the interpreter redoes the call).
  void emit_layout_guards(IRRef c, uint16_t snap) {
    for (const Producer& g : producers_) {
      if (g.guarded_at != c) continue;
      auto check = [&](IROp op, uint32_t op2, int64_t want) {
        const IRRef v = emit(op, IRType::Int, g.reload, op2);
        emit(IROp::GUARDT, IRType::None, emit(IROp::EQ, IRType::Bool, v, ir_.kint(want)), 0, snap);
      };
      check(IROp::TDTYPE, 0, static_cast<int64_t>(g.vt.dtype));
      check(IROp::TRANK, 0, static_cast<int64_t>(g.vt.shape.size()));
      for (size_t k = 0; k < g.vt.shape.size(); ++k) check(IROp::TDIM, static_cast<uint32_t>(k), g.vt.shape[k]);
    }
  }
  IRRef as_float(IRRef x) { return ir_[x].type == IRType::Int ? emit(IROp::CONV, IRType::Float, x) : x; }
  IRRef round_f32(IRRef x) {
    if (ir_[x].op == IROp::KFLOAT) return ir_.kfloat(static_cast<double>(static_cast<float>(ir_.const_float(x))));
    return ir_[x].op == IROp::F32RND ? x : emit(IROp::F32RND, IRType::Float, x);
  }

  // Element k of the static tensor `r` (its SSA value if sunk, else a load).
  IRRef element(IRRef r, int64_t k) {
    const Producer& p = *static_tensor(r);
    if (p.sunk) return elements_.at(p.call)[static_cast<size_t>(k)];
    const IRRef idx = emit(IROp::TIDX, IRType::Int, ir_.kint(k), static_cast<uint32_t>(p.vt.dtype));
    return emit(IROp::TLOAD, element_type(p.vt.dtype), r, idx);
  }

  // The elements producer `p` computes, emitted here.
  std::vector<IRRef> compute(const Producer& p) {
    const Rule& rule = *p.rule;
    const int64_t n = p.vt.numel();
    std::vector<IRRef> out;
    switch (rule.kind) {
      case Kind::FromList: {
        const std::vector<IRRef> items = *list_literal(p.args[0], p.call);
        for (IRRef x : items) out.push_back(p.vt.dtype == DType::F32 ? round_f32(as_float(x)) : x);
        break;
      }
      case Kind::Fill: {
        const IRRef v = rule.aux < 0 ? round_f32(as_float(p.args[1])) : ir_.kfloat(rule.aux);
        out.assign(static_cast<size_t>(n), v);
        break;
      }
      case Kind::Unary:
        for (int64_t k = 0; k < n; ++k) {
          const IRRef x = element(p.args[0], k);
          if (p.vt.dtype == DType::I64) {
            out.push_back(emit(rule.int_op, IRType::Int, x));
            continue;
          }
          // An int tensor's elements go through the interpreter's double path
          // (one rounding at the end), a float tensor's through its f32 rows.
          const bool int_input = static_tensor(p.args[0])->vt.dtype == DType::I64;
          uint32_t op2 = rule.float_op == IROp::FMATH ? static_cast<uint32_t>(rule.aux) : 0;
          if (int_input && rule.float_op == IROp::FMATH) op2 = static_cast<uint32_t>(double_row(static_cast<FloatMath>(op2)));
          out.push_back(round_f32(emit(rule.float_op, IRType::Float, as_float(x), op2)));
        }
        break;
      case Kind::Reduce: {
        const Producer& in = *static_tensor(p.args[0]);
        const int64_t m = in.vt.numel();
        if (p.vt.dtype == DType::I64) {
          IRRef acc = element(p.args[0], 0);  // 0 + e0 == e0 for wrapping ints
          for (int64_t k = 1; k < m; ++k) acc = emit(rule.int_op, IRType::Int, acc, element(p.args[0], k));
          out.push_back(acc);
          break;
        }
        IRRef acc = ir_.kfloat(0.0);
        if (in.vt.dtype == DType::F32) {
          // The kernels' order (vm/tensor/vector_math.h; m < kSumBlock): element k in
          // f32 lane k % kSumLanes, then the lanes in order in double from +0.0.
          for (int64_t j = 0; j < std::min(m, vmath::kSumLanes); ++j) {
            IRRef lane = element(p.args[0], j);
            for (int64_t k = j + vmath::kSumLanes; k < m; k += vmath::kSumLanes)
              lane = round_f32(emit(rule.float_op, IRType::Float, lane, element(p.args[0], k)));
            acc = emit(rule.float_op, IRType::Float, acc, lane);
          }
        } else {
          // Integer elements: a double accumulator from +0.0 (-0.0 + 0.0 is +0.0).
          for (int64_t k = 0; k < m; ++k) acc = emit(rule.float_op, IRType::Float, acc, as_float(element(p.args[0], k)));
        }
        if (rule.aux == 1) acc = emit(IROp::FDIV, IRType::Float, acc, ir_.kfloat(static_cast<double>(m)));
        out.push_back(round_f32(acc));
        break;
      }
      case Kind::Binary: out = binary(p); break;
      default: break;
    }
    return out;
  }

  // Elementwise a OP b with broadcasting, as vm/tensor/elementwise.cpp: an
  // f32 result from f32 tensors of the result's shape and numbers rounds the
  // numbers to f32 first (its fast path); otherwise f32 results compute on
  // the operands' doubles; i64 results wrap.
  std::vector<IRRef> binary(const Producer& p) {
    const Rule& rule = *p.rule;
    std::array<const Producer*, 2> t{static_tensor(p.args[0]), static_tensor(p.args[1])};
    const bool f32 = p.vt.dtype == DType::F32;
    bool fast = f32;
    for (const Producer* x : t)
      if (x != nullptr && (x->vt.dtype != DType::F32 || x->vt.shape != p.vt.shape)) fast = false;
    auto scalar = [&](IRRef x) { return !f32 ? x : fast ? round_f32(as_float(x)) : as_float(x); };
    const Shape none;
    const Shape sa = broadcast_strides(t[0] ? t[0]->vt.shape : none, p.vt.shape);
    const Shape sb = broadcast_strides(t[1] ? t[1]->vt.shape : none, p.vt.shape);
    const std::array<IRRef, 2> s{t[0] ? kNoRef : scalar(p.args[0]), t[1] ? kNoRef : scalar(p.args[1])};
    std::vector<IRRef> out(static_cast<size_t>(p.vt.numel()));
    for_each_broadcast<2>(p.vt.shape, std::array<const Shape*, 2>{&sa, &sb}, [&](int64_t i, int64_t oa, int64_t ob) {
      IRRef x = t[0] ? element(p.args[0], oa) : s[0];
      IRRef y = t[1] ? element(p.args[1], ob) : s[1];
      out[static_cast<size_t>(i)] = f32 ? round_f32(emit(rule.float_op, IRType::Float, as_float(x), as_float(y)))
                                        : emit(rule.int_op, IRType::Int, x, y);
    });
    return out;
  }

  IRRef answer(const Query& q) {
    const VirtualTensor& vt = static_tensor(q.input)->vt;
    switch (q.rule->kind) {
      case Kind::Item: return element(q.input, 0);
      case Kind::Len: return ir_.kint(vt.shape[0]);
      case Kind::Numel: return ir_.kint(vt.numel());
      default: return ir_.kint(static_cast<int64_t>(vt.shape.size()));
    }
  }

  void transform() {
    const size_t n = ir_.size();
    std::vector<IRRef> subst = identity_subst(ir_);
    std::vector<bool> drop(n, false);
    std::unordered_map<IRRef, const Producer*> sunk_call;
    std::unordered_map<IRRef, const Query*> query_call;
    auto drop_call = [&](IRRef c) {
      drop[c] = drop[c + 1] = true;
      for (const auto& [node, owner] : carg_owner_)
        if (owner == c) drop[node] = true;
    };
    // Exits take over the registers the sunk calls and stores wrote (before
    // anything changes: DeferredWrites reads the calls' destinations).
    for (const Producer& p : producers_) {
      if (!p.sunk) continue;
      sunk_call[p.call] = &p;
      writes_.defer(dest_of(p.call), p.call, p.call);
      for (IRRef q = p.reload + 1; q < n; ++q)
        if (ir_[q].op == IROp::SSTORE && ir_[q].op2 == p.reload) {
          writes_.defer(ir_[q].op1, q, p.call);
          drop[q] = true;
        }
    }
    for (const Query& q : queries_) {
      query_call[q.call] = &q;
      writes_.defer(dest_of(q.call), q.call, q.reload);
    }
    for (const auto& [c, p] : sunk_call) drop_call(c);
    for (const auto& [c, q] : query_call) drop_call(c);

    for (IRRef q = 0; q < n; ++q) {
      const IRIns in = ir_[q];
      if (in.op == IROp::CALL) emit_layout_guards(q, in.snap);
      if (auto it = sunk_call.find(q); it != sunk_call.end()) {
        const Producer& p = *it->second;
        std::vector<IRRef> elems = compute(p);
        IRRef chain = kNoRef;
        for (IRRef e : elems) chain = chain == kNoRef ? e : emit(IROp::CARG, IRType::None, chain, e);
        ir_.virtual_tensors().push_back(p.vt);
        IRIns& v = ir_[q];
        v.op = IROp::VNEWTENSOR;
        v.type = IRType::Tensor;
        v.op1 = chain;
        v.op2 = static_cast<uint32_t>(ir_.virtual_tensors().size() - 1);
        v.snap = kNoSnap;
        order_.push_back(q);
        subst[p.reload] = q;
        elements_[q] = std::move(elems);
        continue;
      }
      if (auto it = query_call.find(q); it != query_call.end()) {
        subst[it->second->reload] = answer(*it->second);
        continue;
      }
      if (drop[q] || ir_is_const(in.op)) continue;
      if (std::optional<int64_t> k = layout_constant(in)) {
        subst[q] = ir_.kint(*k);
        continue;
      }
      if (in.op == IROp::TLOAD) {
        const Producer* p = static_tensor(in.op1);
        if (p != nullptr && p->sunk) {
          subst[q] = elements_.at(p->call)[static_cast<size_t>(*loaded_element(in, *p))];
          continue;
        }
      }
      order_.push_back(q);
    }
    // What the transformation emitted keeps its own number.
    for (IRRef r = static_cast<IRRef>(n); r < ir_.size(); ++r) subst.push_back(r);
    ir_ = rebuild_trace(ir_, subst, order_);
  }

  TraceIR& ir_;
  const uint32_t max_;
  DeferredWrites writes_;
  std::vector<Producer> producers_;
  std::unordered_map<IRRef, size_t> by_reload_;
  std::vector<Query> queries_;
  std::unordered_map<IRRef, IRRef> carg_owner_;
  std::unordered_set<IRRef> replaced_calls_;
  std::unordered_map<IRRef, std::vector<IRRef>> elements_;  // sunk call -> its elements
  std::vector<IRRef> order_;
};

}  // namespace

bool TensorSinkPass::run(TraceIR& ir) {
  const bool sunk = TensorSinker(ir, max_elements_).run();
  // The sinking itself, then the inner fold as its own step ("tsink.fold",
  // result_name()), so that --dump and verify_each see both.
  step(name(), ir);
  if (!sunk) return false;
  // Elements of constants, and the dtype and bounds checks on constants,
  // fold now (LuaJIT folds as it emits; here the fold pass has run already).
  FoldPass().run(ir);
  return true;
}

}  // namespace tessera::jit
