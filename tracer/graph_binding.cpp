#include "tracer/graph_binding.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "vm/core/operators.h"
#include "vm/core/value.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

namespace {

// The Graph IR operation of the generic helpers, by BinOp and CmpOp: the
// elementwise table's (elementwise_ops.def), and `@`'s.
OpId arith_op(BinOp op) { return has_binary(op) ? graph_op(to_binary(op)) : OpId::MatMul; }

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
    {"dtype",
     [](const Value& v, RegionAttrs& a) {
       if (v.is_dtype()) a.cast_to = v.as_dtype();
       a.infer_dtype = v.is_nil();  // arange, tensor: the dtype their arguments give
       return v.is_dtype() || v.is_nil();
     }},
};
// Attributes that never change a result's type (the interpreter checks
// their values, and raises as before): bound whatever they are.
constexpr std::string_view kValueOnlyAttrs[] = {"seed", "op"};

// The arguments of the tensor built-ins that bind by ValueArg, one row
// each: the op, the argument's position, how it binds.
struct ValueArgRow {
  OpId op;
  size_t pos;
  ValueArg how;
};
constexpr ValueArgRow kValueArgs[] = {
    {OpId::Zeros, 0, ValueArg::Shape},     {OpId::Ones, 0, ValueArg::Shape},    {OpId::Full, 0, ValueArg::Shape},
    {OpId::Randn, 0, ValueArg::Shape},     {OpId::Rand, 0, ValueArg::Shape},    {OpId::Reshape, 1, ValueArg::Shape},
    {OpId::Concat, 0, ValueArg::Tensors},  {OpId::Transpose, 1, ValueArg::Axes}, {OpId::Transpose, 2, ValueArg::Axes},
    {OpId::Permute, 1, ValueArg::Axes},    {OpId::Slice, 1, ValueArg::Axis},    {OpId::Slice, 2, ValueArg::Count},
    {OpId::Slice, 3, ValueArg::Count},     {OpId::Tensor, 0, ValueArg::Scalars},
};

const ValueArgRow* value_arg(OpId op, size_t pos) {
  for (const ValueArgRow& r : kValueArgs)
    if (r.op == op && r.pos == pos) return &r;
  return nullptr;
}

// Whether an attribute's argument of IR type `t`, recorded as `v`, can be
// guarded to keep that value: an int, a bool, a float that equals itself, a
// dtype (cast's from a local, or from a global the trace stores into).
bool pinnable(IRType t, const Value* v) {
  if (v == nullptr) return false;
  return (t == IRType::Int && v->is_int()) || (t == IRType::Bool && v->is_bool()) ||
         (t == IRType::Float && v->is_float() && v->as_float() == v->as_float()) ||
         (t == IRType::DType && v->is_dtype());
}

// The ints of argument `a` the type depends on: a constant of the trace,
// or (with `seen`) its recorded value, an int or a list of ints (pinned).
std::optional<std::vector<int>> axis_ints(const TraceIR& ir, IRRef a, const Value* seen, bool& pinned) {
  const auto clamp = [](int64_t x) { return static_cast<int>(std::clamp<int64_t>(x, -1000, 1000)); };
  pinned = false;
  if (ir[a].op == IROp::KINT && ir[a].type == IRType::Int) return std::vector<int>{clamp(ir.const_int(a))};
  if (seen == nullptr) return std::nullopt;
  pinned = true;
  if (seen->is_int() && ir[a].type == IRType::Int) return std::vector<int>{clamp(seen->as_int())};
  if (!seen->is_list() || ir[a].type != IRType::List || seen->as_list()->items.size() > kMaxRank) return std::nullopt;
  std::vector<int> out;
  for (const Value& x : seen->as_list()->items) {
    if (!x.is_int()) return std::nullopt;
    out.push_back(clamp(x.as_int()));
  }
  return out;
}

}  // namespace

std::optional<OpId> graph_op(const CallTarget& t) {
  switch (t.kind()) {
    case CallTarget::Kind::Builtin:
    case CallTarget::Kind::BuiltinKw: {  // by name: parsed IR carries no BuiltinDef
      const OpDef* def = find_op(t.name);
      if (!def || !def->builtin) return std::nullopt;
      // No tensor operand while recording: an op on plain numbers (exp(1.0)),
      // unless the op always makes a tensor.
      const bool makes_tensor = def->shape != nullptr && def->scalar == nullptr;
      return t.seen.empty() && !makes_tensor ? std::nullopt : std::optional<OpId>(def->id);
    }
    default: break;
  }
  if (t.seen.empty()) return std::nullopt;  // operators on plain numbers
  switch (t.kind()) {
    case CallTarget::Kind::Arith: return arith_op(t.as<call::Arith>().op);
    case CallTarget::Kind::Compare: return graph_op(to_binary(t.as<call::Compare>().op));
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
                                   const std::vector<IRRef>& args, const std::vector<const Value*>* seen) {
  BoundCall b;
  if (!t.is<call::Builtin>() && !t.is<call::BuiltinKw>()) {
    for (size_t i = 0; i < args.size(); ++i) b.inputs.push_back(i);  // operators: inputs only
    return b;
  }
  static const std::vector<std::string> kNoKeywords;
  const call::BuiltinKw* kwcall = std::get_if<call::BuiltinKw>(&t.what);
  const size_t nkw = kwcall ? kwcall->nkw : 0;
  const std::vector<std::string>& kw = kwcall ? kwcall->kw : kNoKeywords;
  if (nkw > args.size() || kw.size() != nkw) return std::nullopt;
  const size_t npos = args.size() - nkw, nattrs = def.attrs.size();
  if (npos < static_cast<size_t>(def.min_inputs) || npos > static_cast<size_t>(def.max_inputs) + nattrs) return std::nullopt;
  const size_t nin = std::min(npos, static_cast<size_t>(def.max_inputs));
  for (size_t i = 0; i < nin; ++i) {
    const ValueArgRow* row = value_arg(def.id, i);
    if (row == nullptr) {
      b.inputs.push_back(i);
      continue;
    }
    b.value_args.emplace_back(i, row->how);
    if (row->how == ValueArg::Shape || row->how == ValueArg::Tensors || row->how == ValueArg::Scalars)
      b.inputs.push_back(i);
    if (row->how != ValueArg::Axis && row->how != ValueArg::Axes) continue;
    bool pinned = false;
    const std::optional<std::vector<int>> ints =
        axis_ints(ir, args[i], seen && i < seen->size() ? (*seen)[i] : nullptr, pinned);
    if (!ints || (row->how == ValueArg::Axis && ints->size() != 1)) return std::nullopt;
    if (pinned) b.pinned.push_back(i);
    if (row->how == ValueArg::Axis) b.attrs.axis = ints->front();
    else b.attrs.axes.insert(b.attrs.axes.end(), ints->begin(), ints->end());
  }
  // Each attribute's argument position, or none (its default).
  std::vector<std::optional<size_t>> at(nattrs);
  for (size_t i = nin; i < npos; ++i) at[i - nin] = i;
  for (size_t k = 0; k < nkw; ++k) {
    size_t j = 0;
    while (j < nattrs && kw[k] != def.attrs[j].name) ++j;
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
    if (std::find(std::begin(kValueOnlyAttrs), std::end(kValueOnlyAttrs), name) != std::end(kValueOnlyAttrs)) continue;
    if (name == "step") {  // arange's: an input, whose kind gives the dtype
      if (at[j]) b.attrs.step = true;
      continue;
    }
    if (def.attrs[j].type == AttrType::OptTensor) {  // weight, bias: a tensor input or nil
      if (!at[j] || ir[args[*at[j]]].op == IROp::KNIL) continue;
      if (ir[args[*at[j]]].type != IRType::Tensor) return std::nullopt;
      (name == "weight" ? b.attrs.weight : b.attrs.bias) = true;
      continue;
    }
    std::optional<Value> v = constant(j);
    if (!v && at[j] && seen && *at[j] < seen->size() && pinnable(ir[args[*at[j]]].type, (*seen)[*at[j]])) {
      v = *(*seen)[*at[j]];  // not a constant: its value as recorded, guarded to stay
      b.pinned.push_back(*at[j]);
    }
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
  if (b.attrs.step) b.inputs.push_back(*at[attr_index("step")]);
  return b;
}

}  // namespace tessera::jit
