// Region: its values, symbols and the rules by which operations join it
// (region.h); the text form is region_text.cpp, binding and the reference
// run region_run.cpp.
#include "vm/graph/region.h"

#include <stdexcept>

#include "vm/core/error.h"
#include "vm/tensor/elementwise_ops.h"

namespace tessera {

namespace {

void rename(std::vector<int>& dims, int from, int to) {
  for (int& d : dims)
    if (d == from) d = to;
}

std::vector<int> dims_of(const RegionType& t) { return t.tensor ? t.dims : std::vector<int>{}; }

bool float_tensor(const RegionType& t) { return t.tensor && dtype_is_float(t.dtype); }
bool int_tensor(const RegionType& t) { return t.tensor && dtype_is_int(t.dtype); }

// Whether a kernel computes binary op b on x and y (result dtype `out`) as
// the interpreter does.
bool kernel_computes(Binary b, const RegionType& x, const RegionType& y, DType out) {
  if (is_comparison(b)) {
    // Both float tensors, or both int (tensor or int scalar): the
    // interpreter compares them exactly in their own type.
    auto int_operand = [](const RegionType& t) { return int_tensor(t) || (!t.tensor && t.scalar == ScalarKind::Int); };
    return (float_tensor(x) && float_tensor(y)) || (int_operand(x) && int_operand(y));
  }
  // The f32 path: every tensor operand a float tensor.
  if (dtype_is_float(out)) return (!x.tensor || float_tensor(x)) && (!y.tensor || float_tensor(y));
  return b != Binary::Pow && b != Binary::Div;  // integer pow raises on negative exponents
}

}  // namespace

int Region::add_tensor_input(DType dt, std::vector<int> dims) {
  for (int d : dims)
    if (d != kDimOne && (d < 0 || d >= num_symbols)) throw std::invalid_argument("region input: unknown symbol");
  inputs.push_back(RegionType{true, dt, std::move(dims)});
  values_.push_back(ValueRef{true, static_cast<int>(inputs.size() - 1)});
  return num_values() - 1;
}

int Region::add_scalar_input(ScalarKind k) {
  RegionType t;
  t.tensor = false;
  t.scalar = k;
  inputs.push_back(t);
  values_.push_back(ValueRef{true, static_cast<int>(inputs.size() - 1)});
  return num_values() - 1;
}

int Region::add_shape_input(std::vector<int> dims) {
  for (int d : dims)
    if (d != kDimOne && d != kDimInfer && (d < 0 || d >= num_symbols)) throw std::invalid_argument("region input: unknown symbol");
  RegionType t;
  t.tensor = false;
  t.shape = true;
  t.dims = std::move(dims);
  inputs.push_back(std::move(t));
  values_.push_back(ValueRef{true, static_cast<int>(inputs.size() - 1)});
  return num_values() - 1;
}

std::optional<std::vector<int>> Region::broadcast(std::vector<int> a, std::vector<int> b,
                                                  std::vector<std::pair<int, int>>& merges) const {
  for (const auto& [keep, drop] : merges) {
    rename(a, drop, keep);
    rename(b, drop, keep);
  }
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t ia = i + a.size() - rank, ib = i + b.size() - rank;  // wrap below 0: absent
    int da = i < rank - a.size() ? kDimOne : a[ia];
    const int db = i < rank - b.size() ? kDimOne : b[ib];
    if (da != db && da != kDimOne && db != kDimOne) {
      // Two symbols the program makes equal: one, if they were equal where fusion saw them.
      const auto size = [&](int s) { return static_cast<size_t>(s) < symbol_sizes.size() ? symbol_sizes[s] : -1; };
      if (size(da) < 0 || size(da) != size(db)) return std::nullopt;
      const int keep = std::min(da, db), drop = std::max(da, db);
      merges.emplace_back(keep, drop);
      rename(a, drop, keep);
      rename(b, drop, keep);
      rename(out, drop, keep);
      da = keep;
    }
    out[i] = da == kDimOne ? db : da;
  }
  return out;
}

void Region::replace_symbol(int from, int to) {
  for (RegionType& t : inputs) rename(t.dims, from, to);
  for (RegionOp& o : ops) rename(o.type.dims, from, to);
}

void Region::compact_symbols() {
  std::vector<int> renumber(static_cast<size_t>(num_symbols), -1);
  std::vector<int64_t> sizes;
  int next = 0;
  auto visit = [&](std::vector<int>& dims) {
    for (int& d : dims) {
      if (d == kDimOne) continue;
      int& n = renumber.at(static_cast<size_t>(d));
      if (n < 0) {
        n = next++;
        sizes.push_back(static_cast<size_t>(d) < symbol_sizes.size() ? symbol_sizes[d] : -1);
      }
      d = n;
    }
  };
  // In value order, so that the text names symbols as they appear.
  for (int v = 0; v < num_values(); ++v) visit(is_input(v) ? inputs[index_of(v)].dims : ops[index_of(v)].type.dims);
  num_symbols = next;
  symbol_sizes = std::move(sizes);
}

const RegionType& Region::type(int v) const {
  return is_input(v) ? inputs.at(static_cast<size_t>(index_of(v))) : op_of(v).type;
}

int Region::value_of_input(size_t i) const {
  for (int v = 0; v < num_values(); ++v)
    if (values_[v].input && values_[v].index == static_cast<int>(i)) return v;
  throw std::invalid_argument("region: no input " + std::to_string(i));
}

int Region::value_of_op(size_t i) const {
  for (int v = 0; v < num_values(); ++v)
    if (!values_[v].input && values_[v].index == static_cast<int>(i)) return v;
  throw std::invalid_argument("region: no operation " + std::to_string(i));
}

std::optional<int> Region::add(OpId op, std::vector<int> args, const RegionAttrs& attrs) {
  // Refused: the region as it was (the steps below may have merged symbols).
  Region before = *this;
  std::optional<int> v;
  try {
    v = add_op(op, std::move(args), attrs);
  } catch (const RuntimeError&) {
    // The type rules raise as the interpreter does (a dtype an operation
    // does not take); fusion's limits never get that far.
    if (!types_only) throw;
  }
  if (!v) *this = std::move(before);
  return v;
}

std::optional<int> Region::add_op(OpId op, std::vector<int> args, const RegionAttrs& attrs) {
  const OpDef& def = op_def(op);
  const FusionClass fc = def.fusion;
  std::vector<RegionType> ts;
  for (int a : args) {
    if (a < 0 || a >= num_values()) throw std::invalid_argument("region op: unknown argument");
    ts.push_back(type(a));
  }
  if (std::optional<int> v; types_only && add_value_shaped(op, args, ts, attrs, v)) return v;
  for (const RegionType& t : ts)
    if (t.shape) return std::nullopt;  // only the operations above take a shape
  if (!fc.elementwise() && !fc.row() && fc.kind != FusionKind::MatMul && fc.kind != FusionKind::Attention)
    return std::nullopt;
  if (fc.kind == FusionKind::MatMul) return add_matmul(std::move(args), ts);
  if (fc.kind == FusionKind::Attention) return add_attention(std::move(args), ts, attrs);
  if (fc.row()) return add_row_op(op, std::move(args), ts, attrs);
  const DType cast_to = attrs.cast_to;
  RegionType out;
  std::optional<std::vector<int>> dims;
  std::vector<std::pair<int, int>> merges;  // symbols the op's broadcast makes one
  switch (fc.kind) {
    case FusionKind::Unary: {
      if (ts.size() != 1 || !ts[0].tensor) return std::nullopt;
      const Unary u = fc.unary();
      // Float tensors compute in f32; ints only where they stay ints (others take a double loop).
      if (!types_only && !float_tensor(ts[0]) && !(keeps_int(u) && int_tensor(ts[0]))) return std::nullopt;
      out.dtype = unary_dtype(u, ts[0].dtype, def.display);
      dims = ts[0].dims;
      break;
    }
    case FusionKind::Binary: {
      if (ts.size() != 2 || (!ts[0].tensor && !ts[1].tensor)) return std::nullopt;
      const Binary b = fc.binary();
      if (!types_only && (b == Binary::IDiv || b == Binary::Mod)) return std::nullopt;  // floor semantics in double, or raising
      // Bool operands: the interpreter's int loops (types only: its dtype rule).
      for (const RegionType& t : ts)
        if (!types_only && (t.tensor ? t.dtype == DType::Bool : t.scalar == ScalarKind::Bool)) return std::nullopt;
      out.dtype = binary_dtype(b, ts[0].kind(), ts[1].kind());
      if (!types_only && !kernel_computes(b, ts[0], ts[1], out.dtype)) return std::nullopt;
      dims = broadcast(dims_of(ts[0]), dims_of(ts[1]), merges);
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
      if (!types_only && !f32_path && !int_path) return std::nullopt;
      dims = broadcast(dims_of(ts[0]), dims_of(ts[1]), merges);
      if (dims) dims = broadcast(*dims, dims_of(ts[2]), merges);
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
  if (has_row_ops() && !types_only) {  // a row kernel's producer or consumer
    for (int a : args)
      if (terminal(a)) return std::nullopt;
  }
  for (const auto& [keep, drop] : merges) replace_symbol(drop, keep);
  out.dims = std::move(*dims);
  if (has_row_ops() && !types_only && !fit_rows(out.dims, row_dims())) return std::nullopt;
  RegionAttrs kept;
  kept.cast_to = cast_to;
  return push_op(RegionOp{op, std::move(args), kept, std::move(out)});
}

int Region::push_op(RegionOp o) {
  ops.push_back(std::move(o));
  values_.push_back(ValueRef{false, static_cast<int>(ops.size() - 1)});
  return num_values() - 1;
}

std::optional<int> Region::add_row_op(OpId op, std::vector<int> args, const std::vector<RegionType>& ts,
                                      const RegionAttrs& attrs) {
  const FusionClass fc = op_def(op).fusion;
  const bool norm = fc.kind == FusionKind::LayerNorm || fc.kind == FusionKind::RmsNorm;
  const size_t params = norm ? static_cast<size_t>(attrs.weight) + static_cast<size_t>(attrs.bias) : 0;
  if (ts.size() != 1 + params || (fc.kind == FusionKind::RmsNorm && attrs.bias)) return std::nullopt;
  // Float tensors only: integer inputs take the interpreter's double and int64 loops.
  if (!ts[0].tensor || (!types_only && !float_tensor(ts[0]))) return std::nullopt;
  const std::vector<int>& dims = ts[0].dims;
  const int rank = static_cast<int>(dims.size());
  // An axis the interpreter takes (else it raises); a kernel's is the last
  // (the rows a kernel program walks; other axes keep the interpreter's
  // column loops).
  const auto axis_ok = [&](int ax) { return ax >= 0 && ax < rank && (types_only || ax == rank - 1); };
  RegionAttrs kept;
  RegionType out;
  out.dtype = float_result_dtype(ts[0].dtype);
  if (fc.kind == FusionKind::Reduce) {
    out.dtype = reduce_dtype(fc.reduce(), ts[0].dtype);
    kept.keepdim = attrs.keepdim;
    if (attrs.axis) {
      const int ax = *attrs.axis < 0 ? *attrs.axis + rank : *attrs.axis;
      if (!axis_ok(ax)) return std::nullopt;
      kept.axis = ax;
    }
  } else {
    // softmax, layer_norm, rms_norm: along the last axis of a tensor of rank >= 1.
    if (rank == 0) return std::nullopt;
    if (fc.kind == FusionKind::Softmax) {
      const int ax = attrs.axis ? (*attrs.axis < 0 ? *attrs.axis + rank : *attrs.axis) : rank - 1;
      if (!axis_ok(ax)) return std::nullopt;
      kept.axis = ax;
    } else {
      kept.eps = attrs.eps;
      kept.weight = attrs.weight;
      kept.bias = attrs.bias;
      // weight and bias: float tensors of shape [D], D the last dim (the
      // interpreter raises on any other shape, so they do not fuse).
      std::vector<std::pair<int, int>> merges;
      for (size_t p = 1; p < ts.size(); ++p) {
        if (!float_tensor(ts[p]) || ts[p].dims.size() != 1) return std::nullopt;
        int a = ts[p].dims[0], b = dims.back();
        for (const auto& [keep, drop] : merges) {
          if (a == drop) a = keep;
          if (b == drop) b = keep;
        }
        if (a == b) continue;
        if (a == kDimOne || b == kDimOne) return std::nullopt;
        const auto size = [&](int s) { return static_cast<size_t>(s) < symbol_sizes.size() ? symbol_sizes[s] : -1; };
        if (size(a) < 0 || size(a) != size(b)) return std::nullopt;
        merges.emplace_back(std::min(a, b), std::max(a, b));
      }
      for (const auto& [keep, drop] : merges) replace_symbol(drop, keep);
    }
  }
  // One row structure per kernel: every row operation on the same dims, in
  // the same mode, and every value so far fits it.
  if (!types_only && !fits_row_structure(args[0], fc.kind == FusionKind::Reduce && !kept.axis)) return std::nullopt;
  // The result's dims, after the merges.
  out.dims = type(args[0]).dims;
  if (fc.kind == FusionKind::Reduce) {
    if (!kept.axis) out.dims = kept.keepdim ? std::vector<int>(out.dims.size(), kDimOne) : std::vector<int>{};
    else if (kept.keepdim) out.dims[static_cast<size_t>(*kept.axis)] = kDimOne;
    else out.dims.erase(out.dims.begin() + *kept.axis);
  }
  return push_op(RegionOp{op, std::move(args), kept, std::move(out)});
}

bool Region::fits_row_structure(int arg, bool all_axes) {
  if (terminal(arg)) return false;
  if (has_row_ops()) return type(arg).dims == row_dims() && all_axes == reduces_all_axes();
  // Every result so far against the dims the new operation makes the row
  // dims (an input's dims broadcast to those of the results that read it,
  // and a leading matmul's operands are not read by the kernel).
  for (const RegionOp& o : ops)
    if (!fit_rows(o.type.dims, type(arg).dims)) return false;
  return true;
}

bool Region::fit_rows(std::vector<int> d, std::vector<int> row) {
  if (d.size() > row.size()) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    const int a = d[i], b = row[i + row.size() - d.size()];
    if (a == kDimOne || a == b) continue;
    // Symbols of one size where the program did not make them one (two
    // reads of one global, say): one symbol, which bind_symbols checks.
    const auto size = [&](int x) { return static_cast<size_t>(x) < symbol_sizes.size() ? symbol_sizes[x] : -1; };
    if (b == kDimOne || size(a) < 0 || size(a) != size(b)) return false;
    const int keep = std::min(a, b), drop = std::max(a, b);
    replace_symbol(drop, keep);
    rename(d, drop, keep);
    rename(row, drop, keep);
  }
  return true;
}

std::optional<int> Region::add_matmul(std::vector<int> args, const std::vector<RegionType>& ts) {
  // The first operation only (its operands must be in memory for BLAS), of
  // two float tensors (integer products take the interpreter's int64 loops).
  if ((!ops.empty() && !types_only) || ts.size() != 2) return std::nullopt;
  for (const RegionType& t : ts)
    if (!t.tensor || t.dtype == DType::Bool || (!types_only && !float_tensor(t))) return std::nullopt;
  std::vector<int> a = ts[0].dims, b = ts[1].dims;
  if (a.empty() || b.empty()) return std::nullopt;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), kDimOne);
  if (b_vec) b.push_back(kDimOne);
  // The inner dims: one symbol (the interpreter raises where they differ).
  int ka = a.back(), kb = b[b.size() - 2];
  if (ka != kb) {
    const auto size = [&](int x) { return static_cast<size_t>(x) < symbol_sizes.size() ? symbol_sizes[x] : -1; };
    if (ka == kDimOne || kb == kDimOne || size(ka) < 0 || size(ka) != size(kb)) return std::nullopt;
    const int keep = std::min(ka, kb), drop = std::max(ka, kb);
    replace_symbol(drop, keep);
    rename(a, drop, keep);
    rename(b, drop, keep);
  }
  std::vector<std::pair<int, int>> merges;
  std::optional<std::vector<int>> batch = broadcast(std::vector<int>(a.begin(), a.end() - 2),
                                                    std::vector<int>(b.begin(), b.end() - 2), merges);
  if (!batch) return std::nullopt;
  for (const auto& [keep, drop] : merges) {
    replace_symbol(drop, keep);
    rename(a, drop, keep);
    rename(b, drop, keep);
  }
  RegionType out;
  out.dtype = promote_dtypes(ts[0].dtype, ts[1].dtype);
  out.dims = *batch;
  if (!a_vec) out.dims.push_back(a[a.size() - 2]);
  if (!b_vec) out.dims.push_back(b.back());
  return push_op(RegionOp{OpId::MatMul, std::move(args), RegionAttrs{}, std::move(out)});
}

bool Region::unify(int a, int b) {
  if (a == b) return true;
  const auto size = [&](int x) { return static_cast<size_t>(x) < symbol_sizes.size() ? symbol_sizes[x] : -1; };
  if (a == kDimOne || b == kDimOne || size(a) < 0 || size(a) != size(b)) return false;
  replace_symbol(std::max(a, b), std::min(a, b));
  return true;
}

std::optional<int> Region::add_attention(std::vector<int> args, const std::vector<RegionType>& ts,
                                         const RegionAttrs& attrs) {
  // The first operation only, of float tensors of rank >= 2: q [.., Sq, D],
  // k [.., Sk, D], v [.., Sk, Dv] (the interpreter raises on other shapes).
  if (!ops.empty() || ts.size() != 3) return std::nullopt;
  for (const RegionType& t : ts)
    if (!float_tensor(t) || t.dims.size() < 2) return std::nullopt;
  if (!unify(ts[0].dims.back(), ts[1].dims.back())) return std::nullopt;
  if (!unify(type(args[1]).dims[ts[1].dims.size() - 2], type(args[2]).dims[ts[2].dims.size() - 2])) return std::nullopt;
  const std::vector<int> q = type(args[0]).dims, k = type(args[1]).dims, v = type(args[2]).dims;
  std::vector<std::pair<int, int>> merges;
  std::optional<std::vector<int>> batch =
      broadcast(std::vector<int>(q.begin(), q.end() - 2), std::vector<int>(k.begin(), k.end() - 2), merges);
  if (batch) batch = broadcast(*batch, std::vector<int>(v.begin(), v.end() - 2), merges);
  if (!batch && q.size() >= 3 && k.size() >= 3 && v.size() >= 3) {
    // Grouped-query attention (attention_groups_heads): q's head dim (the
    // one before Sq) a symbol other than k's and v's, which are one; the
    // other batch dims broadcast. A region read from text knows no sizes:
    // its two symbols say so, and bind_symbols checks the sizes they take.
    const int hq = q[q.size() - 3], hkv = k[k.size() - 3];
    const auto size = [&](int x) { return static_cast<size_t>(x) < symbol_sizes.size() ? symbol_sizes[x] : -1; };
    const bool sizes_fit = size(hq) < 0 || size(hkv) < 0 || attention_groups_heads(size(hq), size(hkv));
    if (hq != kDimOne && hkv != kDimOne && hq != hkv && sizes_fit && unify(hkv, v[v.size() - 3])) {
      const std::vector<int> gq = type(args[0]).dims, gk = type(args[1]).dims, gv = type(args[2]).dims;
      merges.clear();
      if (gq[gq.size() - 3] != gk[gk.size() - 3]) {
        batch = broadcast(std::vector<int>(gq.begin(), gq.end() - 3), std::vector<int>(gk.begin(), gk.end() - 3),
                          merges);
        if (batch) batch = broadcast(*batch, std::vector<int>(gv.begin(), gv.end() - 3), merges);
        if (batch) batch->push_back(gq[gq.size() - 3]);
      }
    }
  }
  if (!batch) return std::nullopt;
  for (const auto& [keep, drop] : merges) {
    replace_symbol(drop, keep);
    rename(*batch, drop, keep);
  }
  RegionType out;
  out.dtype = float_result_dtype(promote_dtypes(promote_dtypes(ts[0].dtype, ts[1].dtype), ts[2].dtype));
  out.dims = *batch;
  out.dims.push_back(type(args[0]).dims[q.size() - 2]);
  out.dims.push_back(type(args[2]).dims.back());
  RegionAttrs kept;
  kept.causal = attrs.causal;
  kept.scale = attrs.scale;
  return push_op(RegionOp{OpId::Attention, std::move(args), kept, std::move(out)});
}

std::optional<std::pair<int, int>> attention_group_heads(const Region& r, const RegionOp& o) {
  if (o.op != OpId::Attention || o.args.size() != 3) return std::nullopt;
  const std::vector<int>& q = r.type(o.args[0]).dims;
  const std::vector<int>& k = r.type(o.args[1]).dims;
  if (q.size() < 3 || k.size() < 3) return std::nullopt;
  const int hq = q[q.size() - 3], hkv = k[k.size() - 3];
  if (hq == kDimOne || hkv == kDimOne || hq == hkv) return std::nullopt;
  return std::make_pair(hq, hkv);
}

std::vector<int> Region::row_dims() const {
  for (const RegionOp& o : ops)
    if (op_def(o.op).fusion.row()) return type(o.args[0]).dims;
  return {};
}

bool Region::reduces_all_axes() const {
  for (const RegionOp& o : ops)
    if (op_def(o.op).fusion.row()) return op_def(o.op).fusion.kind == FusionKind::Reduce && !o.attrs.axis;
  return false;
}

bool Region::terminal(int v) const {
  if (is_input(v)) return false;
  const RegionOp& o = op_of(v);
  return op_def(o.op).fusion.kind == FusionKind::Reduce && o.attrs.axis && !o.attrs.keepdim;
}

bool Region::valid_output(int v) const {
  if (!has_row_ops()) return true;
  const std::vector<int> row = row_dims();
  const std::vector<int>& d = type(v).dims;
  if (d == row) return true;
  if (reduces_all_axes()) {
    for (int x : d)
      if (x != kDimOne) return false;
    return true;
  }
  const std::vector<int> lead(row.begin(), row.end() - 1);
  if (terminal(v)) return d == lead;
  std::vector<int> per_row = lead;
  per_row.push_back(kDimOne);
  return d == per_row;
}

bool Region::has_row_ops() const {
  for (const RegionOp& o : ops)
    if (op_def(o.op).fusion.row()) return true;
  return false;
}

}  // namespace tessera
