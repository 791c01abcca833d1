// Running a region: binding its symbols to input values and the reference
// run with the interpreter's kernels (region.h).
#include <stdexcept>

#include "vm/graph/region.h"

namespace tessera {

std::optional<std::vector<int64_t>> bind_symbols(const Region& r, std::span<const Value> inputs) {
  if (inputs.size() != r.inputs.size()) return std::nullopt;
  std::vector<int64_t> sym(static_cast<size_t>(r.num_symbols), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RegionType& t = r.inputs[i];
    const Value& v = inputs[i];
    if (!t.tensor) {
      const bool ok = t.scalar == ScalarKind::Float ? v.is_float() : t.scalar == ScalarKind::Int ? v.is_int() : v.is_bool();
      if (!ok) return std::nullopt;
      continue;
    }
    if (!v.is_tensor()) return std::nullopt;
    const TensorObj& x = *v.as_tensor();
    if (x.dtype != t.dtype || x.rank() != t.dims.size()) return std::nullopt;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const int s = t.dims[d];
      const int64_t n = x.shape[d];
      if (s == kDimOne) {
        if (n != 1) return std::nullopt;
      } else if (sym[s] < 0) {
        // A symbol stands for a size other than 1: a 1 would broadcast
        // where the kernel does not.
        if (n == 1) return std::nullopt;
        sym[s] = n;
      } else if (sym[s] != n) {
        return std::nullopt;
      }
    }
  }
  for (int64_t& s : sym)
    if (s < 0) s = 0;  // a symbol no input has (not made by fusion)
  // amax, amin and argmax of an empty axis raise in the interpreter.
  for (const RegionOp& o : r.ops) {
    const FusionClass fc = op_def(o.op).fusion;
    if (fc.kind != FusionKind::Reduce || fc.reduce() == Reduce::Sum || fc.reduce() == Reduce::Mean) continue;
    const std::vector<int>& dims = r.type(o.args[0]).dims;
    for (size_t d = o.attrs.axis ? static_cast<size_t>(*o.attrs.axis) : 0; d < dims.size(); ++d)
      if (dims[d] != kDimOne && sym[dims[d]] == 0) return std::nullopt;
  }
  // Grouped-query attention raises unless q's heads are k's times g > 1
  // (or as many: then it is plain attention).
  for (const RegionOp& o : r.ops)
    if (const auto h = attention_group_heads(r, o)) {
      const int64_t hq = sym[static_cast<size_t>(h->first)], hkv = sym[static_cast<size_t>(h->second)];
      if (hq != hkv && !attention_groups_heads(hq, hkv)) return std::nullopt;
    }
  return sym;
}

std::vector<Value> run_region_reference(const Region& r, std::span<const Value> inputs) {
  if (inputs.size() != r.inputs.size()) throw std::invalid_argument("region: wrong number of inputs");
  std::vector<Value> vals;
  for (int v = 0; v < r.num_values(); ++v) {
    if (r.is_input(v)) {
      vals.push_back(inputs[static_cast<size_t>(r.index_of(v))]);
      continue;
    }
    const RegionOp& o = r.op_of(v);
    // The inputs, then the attributes positionally, in the op table's order.
    std::vector<Value> args{vals.at(static_cast<size_t>(o.args[0]))};
    size_t next = 1;
    const auto param = [&](bool given) { return given ? vals.at(static_cast<size_t>(o.args.at(next++))) : Value::nil(); };
    switch (op_def(o.op).fusion.kind) {
      case FusionKind::Cast: args.push_back(Value::dtype(o.attrs.cast_to)); break;
      case FusionKind::Reduce:
        args.push_back(o.attrs.axis ? Value::integer(*o.attrs.axis) : Value::nil());
        args.push_back(Value::boolean(o.attrs.keepdim));
        break;
      case FusionKind::Softmax: args.push_back(Value::integer(o.attrs.axis.value_or(-1))); break;
      case FusionKind::LayerNorm:
        args.push_back(param(o.attrs.weight));
        args.push_back(param(o.attrs.bias));
        args.push_back(Value::number(o.attrs.eps));
        break;
      case FusionKind::RmsNorm:
        args.push_back(param(o.attrs.weight));
        args.push_back(Value::number(o.attrs.eps));
        break;
      case FusionKind::Attention:
        for (; next < o.args.size(); ++next) args.push_back(vals.at(static_cast<size_t>(o.args[next])));
        args.push_back(Value::boolean(o.attrs.causal));
        args.push_back(o.attrs.scale ? Value::number(*o.attrs.scale) : Value::nil());
        break;
      default:
        for (; next < o.args.size(); ++next) args.push_back(vals.at(static_cast<size_t>(o.args[next])));
    }
    CallArgs ca;
    ca.pos = args;
    vals.push_back(call_op(op_def(o.op), ca));
  }
  std::vector<Value> out;
  for (int v : r.outputs) out.push_back(vals.at(static_cast<size_t>(v)));
  return out;
}

Value run_leading_step(const Region& r, std::span<const Value> inputs) {
  const RegionOp& step = r.ops.front();
  std::vector<Value> args;
  for (int a : step.args) args.push_back(inputs[static_cast<size_t>(r.index_of(a))]);
  if (step.op == OpId::Attention) {
    args.push_back(Value::boolean(step.attrs.causal));
    args.push_back(step.attrs.scale ? Value::number(*step.attrs.scale) : Value::nil());
  }
  CallArgs ca;
  ca.pos = args;
  return call_op(op_def(step.op), ca);
}

}  // namespace tessera
