#include "tracer/graph_binding.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera::jit {

namespace {

// The Graph IR operation of the generic helpers, by BinOp and CmpOp.
constexpr OpId kArithOps[] = {OpId::Add, OpId::Sub,      OpId::Mul, OpId::Div,
                              OpId::FloorDiv, OpId::Mod, OpId::Pow, OpId::MatMul};
static_assert(std::size(kArithOps) == kNumBinOps);
constexpr OpId kCompareOps[] = {OpId::Eq, OpId::Ne, OpId::Lt, OpId::Le, OpId::Gt, OpId::Ge};

// How the op table's attributes (ops.def) become a region's, one row a
// name: false where the value is not one the attribute takes.
struct AttrBinding {
  const char* name;
  bool (*bind)(const Value& v, RegionAttrs& a);
};
constexpr AttrBinding kAttrBindings[] = {
    {"axis",
     [](const Value& v, RegionAttrs& a) {
       if (v.is_int()) a.axis = static_cast<int>(std::clamp<int64_t>(v.as_int(), -1000, 1000));
       return v.is_int() || v.is_nil();
     }},
    {"keepdim", [](const Value& v, RegionAttrs& a) { return v.is_bool() && ((a.keepdim = v.as_bool()), true); }},
    {"causal", [](const Value& v, RegionAttrs& a) { return v.is_bool() && ((a.causal = v.as_bool()), true); }},
    {"scale",
     [](const Value& v, RegionAttrs& a) {
       if (v.is_number()) a.scale = v.to_double();
       return v.is_nil() || v.is_number();
     }},
    {"eps", [](const Value& v, RegionAttrs& a) { return v.is_number() && ((a.eps = v.to_double()), true); }},
    {"dtype", [](const Value& v, RegionAttrs& a) { return v.is_dtype() && ((a.cast_to = v.as_dtype()), true); }},
};

}  // namespace

std::optional<OpId> graph_op(const CallTarget& t) {
  if (t.seen.empty()) return std::nullopt;  // no tensor operand while recording
  switch (t.kind) {
    case CallTarget::Kind::Builtin:
    case CallTarget::Kind::BuiltinKw: {  // by name: parsed IR carries no BuiltinDef
      const OpDef* def = find_op(t.name);
      return def && def->builtin ? std::optional<OpId>(def->id) : std::nullopt;
    }
    case CallTarget::Kind::Arith: return kArithOps[t.sub];
    case CallTarget::Kind::Compare: return kCompareOps[t.sub];
    case CallTarget::Kind::Negate: return OpId::Neg;
    default: return std::nullopt;
  }
}

std::optional<ScalarKind> scalar_kind(IRType t) {
  switch (t) {
    case IRType::Float: return ScalarKind::Float;
    case IRType::Int: return ScalarKind::Int;
    case IRType::Bool: return ScalarKind::Bool;
    default: return std::nullopt;
  }
}

std::optional<BoundCall> bind_call(const TraceIR& ir, const CallTarget& t, const OpDef& def,
                                   const std::vector<IRRef>& args) {
  BoundCall b;
  if (t.kind != CallTarget::Kind::Builtin && t.kind != CallTarget::Kind::BuiltinKw) {
    for (size_t i = 0; i < args.size(); ++i) b.inputs.push_back(i);  // operators: inputs only
    return b;
  }
  const size_t nkw = t.kind == CallTarget::Kind::BuiltinKw ? t.sub : 0;
  if (nkw > args.size() || t.kw.size() != nkw) return std::nullopt;
  const size_t npos = args.size() - nkw, nattrs = def.attrs.size();
  if (npos < static_cast<size_t>(def.min_inputs) || npos > static_cast<size_t>(def.max_inputs) + nattrs) return std::nullopt;
  const size_t nin = std::min(npos, static_cast<size_t>(def.max_inputs));
  if (def.id == OpId::Transpose) {
    // Its axes are ints the result's type depends on: constants of the
    // trace, bound as the region's `swap`.
    for (size_t i = 1; i < nin; ++i) {
      if (ir[args[i]].op != IROp::KINT || ir[args[i]].type != IRType::Int) return std::nullopt;
      b.attrs.swap.push_back(static_cast<int>(std::clamp<int64_t>(ir.const_int(args[i]), -1000, 1000)));
    }
    b.inputs.push_back(0);
    return b;
  }
  for (size_t i = 0; i < nin; ++i) b.inputs.push_back(i);
  // Each attribute's argument position, or none (its default).
  std::vector<std::optional<size_t>> at(nattrs);
  for (size_t i = nin; i < npos; ++i) at[i - nin] = i;
  for (size_t k = 0; k < nkw; ++k) {
    size_t j = 0;
    while (j < nattrs && t.kw[k] != def.attrs[j].name) ++j;
    if (j == nattrs || at[j]) return std::nullopt;
    at[j] = npos + k;
  }
  // The attribute's constant: the argument's, or the default.
  auto constant = [&](size_t j) -> std::optional<Value> {
    if (!at[j]) return def.attrs[j].dflt.kind == AttrDefault::Kind::Required ? std::nullopt
                                                                              : std::optional<Value>(def.attrs[j].dflt.to_value());
    const IRIns& in = ir[args[*at[j]]];
    switch (in.op) {
      case IROp::KNIL: return Value::nil();
      case IROp::KBOOL: return Value::boolean(in.op1 != 0);
      case IROp::KINT:
        if (in.type == IRType::DType) return Value::dtype(static_cast<DType>(ir.const_int(args[*at[j]])));
        return Value::integer(ir.const_int(args[*at[j]]));
      case IROp::KFLOAT: return Value::number(ir.const_float(args[*at[j]]));
      default: return std::nullopt;
    }
  };
  auto attr_index = [&](std::string_view name) {
    for (size_t j = 0; j < nattrs; ++j)
      if (name == def.attrs[j].name) return j;
    return nattrs;
  };
  for (size_t j = 0; j < nattrs; ++j) {
    const std::string_view name = def.attrs[j].name;
    if (def.attrs[j].type == AttrType::OptTensor) {  // weight, bias: a tensor input or nil
      if (!at[j] || ir[args[*at[j]]].op == IROp::KNIL) continue;
      if (ir[args[*at[j]]].type != IRType::Tensor) return std::nullopt;
      (name == "weight" ? b.attrs.weight : b.attrs.bias) = true;
      continue;
    }
    const std::optional<Value> v = constant(j);
    const AttrBinding* binding = nullptr;
    for (const AttrBinding& ab : kAttrBindings)
      if (name == ab.name) binding = &ab;
    // An attribute no kernel takes, one that is not a constant (cast's
    // dtype from a global the trace stores into), or a value the
    // interpreter would refuse.
    if (!v || !binding || !binding->bind(*v, b.attrs)) return std::nullopt;
  }
  // weight and bias follow the inputs, in that order.
  for (const char* name : {"weight", "bias"}) {
    const size_t j = attr_index(name);
    if (j < nattrs && at[j] && ir[args[*at[j]]].op != IROp::KNIL) b.inputs.push_back(*at[j]);
  }
  return b;
}

}  // namespace tessera::jit
