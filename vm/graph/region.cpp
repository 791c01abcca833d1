#include "vm/graph/region.h"

#include <stdexcept>

#include "vm/core/error.h"

namespace tessera {

namespace {

// Right-aligned broadcast of symbolic dims; nullopt where two different
// symbols meet (their sizes may differ: not one kernel's shape).
std::optional<std::vector<int>> broadcast_dims(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int da = i < rank - a.size() ? kDimOne : a[i - (rank - a.size())];
    const int db = i < rank - b.size() ? kDimOne : b[i - (rank - b.size())];
    if (da != db && da != kDimOne && db != kDimOne) return std::nullopt;
    out[i] = da == kDimOne ? db : da;
  }
  return out;
}

std::vector<int> dims_of(const RegionType& t) { return t.tensor ? t.dims : std::vector<int>{}; }

bool float_tensor(const RegionType& t) { return t.tensor && dtype_is_float(t.dtype); }
bool int_tensor(const RegionType& t) { return t.tensor && dtype_is_int(t.dtype); }

}  // namespace

int Region::add_tensor_input(DType dt, std::vector<int> dims) {
  for (int d : dims)
    if (d != kDimOne && (d < 0 || d >= num_symbols)) throw std::invalid_argument("region input: unknown symbol");
  inputs.push_back(RegionType{true, dt, std::move(dims)});
  return static_cast<int>(inputs.size() - 1);
}

int Region::add_scalar_input(ScalarKind k) {
  RegionType t;
  t.tensor = false;
  t.scalar = k;
  inputs.push_back(t);
  return static_cast<int>(inputs.size() - 1);
}

const RegionType& Region::type(int v) const { return is_input(v) ? inputs.at(static_cast<size_t>(v)) : op_of(v).type; }

std::optional<int> Region::add(OpId op, std::vector<int> args, DType cast_to) {
  const OpDef& def = op_def(op);
  const FusionClass fc = def.fusion;
  if (!fc.elementwise()) return std::nullopt;
  std::vector<RegionType> ts;
  for (int a : args) {
    if (a < 0 || a >= value_of_op(ops.size())) throw std::invalid_argument("region op: unknown argument");
    ts.push_back(type(a));
  }
  RegionType out;
  std::optional<std::vector<int>> dims;
  switch (fc.kind) {
    case FusionKind::Unary: {
      if (ts.size() != 1 || !ts[0].tensor) return std::nullopt;
      const Unary u = fc.unary();
      const bool keeps_int = u == Unary::Neg || u == Unary::Abs || u == Unary::Relu;
      // Float tensors compute in f32; ints only where they stay ints (others take a double loop).
      if (!float_tensor(ts[0]) && !(keeps_int && int_tensor(ts[0]))) return std::nullopt;
      out.dtype = unary_dtype(u, ts[0].dtype, def.display);
      dims = ts[0].dims;
      break;
    }
    case FusionKind::Binary: {
      if (ts.size() != 2 || (!ts[0].tensor && !ts[1].tensor)) return std::nullopt;
      const Binary b = fc.binary();
      if (b == Binary::IDiv || b == Binary::Mod) return std::nullopt;  // floor semantics in double, or raising
      for (const RegionType& t : ts)
        if (t.tensor ? t.dtype == DType::Bool : t.scalar == ScalarKind::Bool) return std::nullopt;
      out.dtype = binary_dtype(b, ts[0].kind(), ts[1].kind());
      if (is_comparison(b)) {
        // Both float tensors, or both int (tensor or int scalar): the
        // interpreter compares them exactly in their own type.
        const bool fl = float_tensor(ts[0]) && float_tensor(ts[1]);
        const bool in = (int_tensor(ts[0]) || (!ts[0].tensor && ts[0].scalar == ScalarKind::Int)) &&
                        (int_tensor(ts[1]) || (!ts[1].tensor && ts[1].scalar == ScalarKind::Int));
        if (!fl && !in) return std::nullopt;
      } else if (dtype_is_float(out.dtype)) {
        // The f32 path: every tensor operand a float tensor.
        for (const RegionType& t : ts)
          if (t.tensor && !dtype_is_float(t.dtype)) return std::nullopt;
      } else if (b == Binary::Pow || b == Binary::Div) {
        return std::nullopt;  // integer pow raises on negative exponents
      }
      dims = broadcast_dims(dims_of(ts[0]), dims_of(ts[1]));
      break;
    }
    case FusionKind::Where: {
      if (ts.size() != 3) return std::nullopt;
      const bool cond_bool = ts[0].tensor ? ts[0].dtype == DType::Bool : ts[0].scalar == ScalarKind::Bool;
      if (!cond_bool) return std::nullopt;
      out.dtype = where_dtype(ts[1].kind(), ts[2].kind());
      // The interpreter's f32 path (f32 result, float or scalar operands) or all-int tensors.
      const bool f32_path = out.dtype == DType::F32 && (!ts[1].tensor || float_tensor(ts[1])) &&
                            (!ts[2].tensor || float_tensor(ts[2]));
      const bool int_path = int_tensor(ts[1]) && int_tensor(ts[2]);
      if (!f32_path && !int_path) return std::nullopt;
      dims = broadcast_dims(dims_of(ts[0]), dims_of(ts[1]));
      if (dims) dims = broadcast_dims(*dims, dims_of(ts[2]));
      break;
    }
    case FusionKind::Cast:
      if (ts.size() != 1 || !ts[0].tensor) return std::nullopt;
      out.dtype = cast_to;
      dims = ts[0].dims;
      break;
    default: return std::nullopt;
  }
  if (!dims) return std::nullopt;
  out.dims = std::move(*dims);
  ops.push_back(RegionOp{op, std::move(args), cast_to, std::move(out)});
  return value_of_op(ops.size() - 1);
}

std::string region_type_str(const RegionType& t) {
  if (!t.tensor) return t.scalar == ScalarKind::Float ? "float" : t.scalar == ScalarKind::Int ? "int" : "bool";
  std::string s = std::string(dtype_name(t.dtype)) + "[";
  for (size_t i = 0; i < t.dims.size(); ++i)
    s += (i ? ", " : "") + (t.dims[i] == kDimOne ? std::string("1") : "s" + std::to_string(t.dims[i]));
  return s + "]";
}

std::string Region::str() const {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) s += "%" + std::to_string(i) + " = input : " + region_type_str(inputs[i]) + "\n";
  for (size_t i = 0; i < ops.size(); ++i) {
    const RegionOp& o = ops[i];
    s += "%" + std::to_string(value_of_op(i)) + " = " + op_def(o.op).name + "(";
    for (size_t a = 0; a < o.args.size(); ++a) s += (a ? ", %" : "%") + std::to_string(o.args[a]);
    if (o.op == OpId::Cast) s += std::string(", ") + dtype_name(o.cast_to);
    s += ") : " + region_type_str(o.type) + "\n";
  }
  s += "outputs";
  for (int v : outputs) s += " %" + std::to_string(v);
  return s + "\n";
}

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
  return sym;
}

std::vector<Value> run_region_reference(const Region& r, std::span<const Value> inputs) {
  std::vector<Value> vals(inputs.begin(), inputs.end());
  for (const RegionOp& o : r.ops) {
    std::vector<Value> args;
    for (int a : o.args) args.push_back(vals.at(static_cast<size_t>(a)));
    if (o.op == OpId::Cast) args.push_back(Value::dtype(o.cast_to));  // cast's dtype, positionally
    CallArgs ca;
    ca.pos = args;
    vals.push_back(call_op(op_def(o.op), ca));
  }
  std::vector<Value> out;
  for (int v : r.outputs) out.push_back(vals.at(static_cast<size_t>(v)));
  return out;
}

}  // namespace tessera
