#include "vm/graph/op_impl.h"

#include <cstring>

#include "vm/core/error.h"
#include "vm/core/nvtx_ranges.h"
#include "vm/graph/collectives.h"

namespace tessera::opimpl {

namespace {

std::string prefix(const OpCall& c) { return std::string(c.name()) + ": "; }

// arange(stop) or arange(start, stop): the (start, stop) pair.
std::pair<Value, Value> arange_bounds(const OpCall& c) {
  if (c.inputs.size() == 1) return {Value::integer(0), c.inputs[0]};
  return {c.inputs[0], c.inputs[1]};
}

std::vector<int> transpose_dims(const OpCall& c) {
  const TensorObj& t = c.tensor(0);
  for (size_t i = 1; i <= 2; ++i)
    if (!c.inputs[i].is_int())
      throw RuntimeError(prefix(c) + "dims must be int, got " + type_name(c.inputs[i]));
  int d0 = normalize_axis(c.inputs[1].as_int(), t.rank(), c.name());
  int d1 = normalize_axis(c.inputs[2].as_int(), t.rank(), c.name());
  std::vector<int> dims(t.rank());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int>(i);
  std::swap(dims[d0], dims[d1]);
  return dims;
}

std::vector<int> permute_dims(const OpCall& c) {
  const TensorObj& t = c.tensor(0);
  const Value& v = c.inputs[1];
  auto fail = [&]() {
    throw RuntimeError(prefix(c) + "dims must be a permutation of 0.." + std::to_string(t.rank()) +
                       " for a tensor of shape " + shape_str(t.shape));
  };
  if (!v.is_list() || v.as_list()->items.size() != t.rank()) fail();
  std::vector<int> dims;
  std::vector<bool> seen(t.rank(), false);
  for (const Value& x : v.as_list()->items) {
    if (!x.is_int()) fail();
    int d = normalize_axis(x.as_int(), t.rank(), c.name());
    if (seen[d]) fail();
    seen[d] = true;
    dims.push_back(d);
  }
  return dims;
}

const TensorObj* opt_tensor(const OpCall& c, const char* name) {
  const Value& v = c.attr(name);
  return v.is_nil() ? nullptr : v.as_tensor();
}

}  // namespace

// ------------------------------------------------------------ shape inference

Shape shape_from_list(const OpCall& c) { return parse_shape(c.inputs[0], c.name()); }

Shape shape_full(const OpCall& c) {
  const Value& v = c.inputs[1];
  if (!v.is_number() && !v.is_bool())
    throw RuntimeError(prefix(c) + "value must be a number or bool, got " + type_name(v));
  return parse_shape(c.inputs[0], c.name());
}

Shape shape_arange(const OpCall& c) {
  auto [start, stop] = arange_bounds(c);
  return {arange_count(start, stop, c.attr("step"), c.name())};
}

Shape shape_tensor(const OpCall& c) { return nested_list_layout(c.inputs[0], c.name()).shape; }

Shape shape_same(const OpCall& c) {
  if (!c.inputs[0].is_tensor() && c.def->scalar)
    throw RuntimeError(prefix(c) + "expected number or tensor, got " + type_name(c.inputs[0]));
  return c.tensor(0).shape;
}

Shape shape_broadcast2(const OpCall& c) {
  check_operand(c.inputs[0], c.name());
  check_operand(c.inputs[1], c.name());
  return broadcast_shapes(operand_shape(c.inputs[0]), operand_shape(c.inputs[1]), c.name());
}

Shape shape_where(const OpCall& c) { return where_shape(c.inputs[0], c.inputs[1], c.inputs[2], c.name()); }

std::optional<int> reduce_axis(const OpCall& c) {
  const Value& a = c.attr("axis");
  if (a.is_nil()) return std::nullopt;
  return normalize_axis(a.as_int(), c.tensor(0).rank(), c.name());
}

Shape shape_reduce(const OpCall& c) {
  return reduce_shape(c.tensor(0).shape, reduce_axis(c), c.attr("keepdim").as_bool());
}

Shape shape_matmul(const OpCall& c) { return matmul_shape(c.tensor(0).shape, c.tensor(1).shape, c.name()); }

Shape shape_softmax(const OpCall& c) {
  const TensorObj& t = c.tensor(0);
  normalize_axis(c.attr("axis").as_int(), t.rank(), c.name());
  return t.shape;
}

Shape shape_norm(const OpCall& c) {
  const TensorObj& x = c.tensor(0);
  check_norm_param(x, opt_tensor(c, "weight"), "weight", c.name());
  if (c.def->id == OpId::LayerNorm) check_norm_param(x, opt_tensor(c, "bias"), "bias", c.name());
  return x.shape;
}

Shape shape_attention(const OpCall& c) {
  return attention_shape(c.tensor(0).shape, c.tensor(1).shape, c.tensor(2).shape, c.name());
}

Shape shape_reshape(const OpCall& c) { return reshape_shape(c.tensor(0), c.inputs[1], c.name()); }

Shape shape_transpose(const OpCall& c) { return permute_shape(c.tensor(0).shape, transpose_dims(c)); }

Shape shape_permute(const OpCall& c) { return permute_shape(c.tensor(0).shape, permute_dims(c)); }

Shape shape_concat(const OpCall& c) {
  int ax = 0;
  return concat_shape(c.inputs[0], c.attr("axis").as_int(), c.name(), &ax);
}

Shape shape_slice(const OpCall& c) {
  const TensorObj& t = c.tensor(0);
  SliceBounds b = slice_bounds(t, c.inputs[1], c.inputs[2], c.inputs[3], c.name());
  Shape s = t.shape;
  s[b.axis] = b.stop - b.start;
  return s;
}

namespace {

// all_reduce's and reduce_scatter's op=: one of reduce_op_named's, and a
// number dtype for avg (bool has no average).
ReduceOp reduce_op_of(const OpCall& c) {
  std::string_view op = c.attr("op").as_str()->view();
  std::optional<ReduceOp> r = reduce_op_named(op);
  if (!r)
    throw RuntimeError(prefix(c) + "op must be \"sum\", \"prod\", \"max\", \"min\" or \"avg\", got \"" +
                       std::string(op) + "\"");
  if (*r == ReduceOp::Avg && c.tensor(0).dtype == DType::Bool)
    throw RuntimeError(prefix(c) + "op \"avg\" needs a number dtype, got bool");
  return *r;
}

// A rank given as input `i` (send's dst, recv's src) or as attribute root=.
int rank_arg(const OpCall& c, const Value& v, const char* role) {
  if (!v.is_int()) throw RuntimeError(prefix(c) + role + " must be int, got " + type_name(v));
  if (std::string_view(role) == "root") process_collectives().check_rank(c.name(), role, v.as_int());
  else process_collectives().check_peer(c.name(), role, v.as_int());
  return static_cast<int>(v.as_int());
}

}  // namespace

Shape shape_all_reduce(const OpCall& c) {
  reduce_op_of(c);
  return c.tensor(0).shape;
}

Shape shape_all_gather(const OpCall& c) {
  const TensorObj& t = c.tensor(0);
  if (t.rank() == 0) throw RuntimeError(prefix(c) + "needs a tensor of rank 1 or more, got a scalar tensor");
  Shape s = t.shape;
  s[static_cast<size_t>(normalize_axis(c.attr("axis").as_int(), t.rank(), c.name()))] *= process_collectives().size();
  return s;
}

Shape shape_reduce_scatter(const OpCall& c) {
  reduce_op_of(c);
  const TensorObj& t = c.tensor(0);
  if (t.rank() == 0) throw RuntimeError(prefix(c) + "needs a tensor of rank 1 or more, got a scalar tensor");
  const int ax = normalize_axis(c.attr("axis").as_int(), t.rank(), c.name());
  const int64_t w = process_collectives().size();
  Shape s = t.shape;
  if (s[static_cast<size_t>(ax)] % w != 0)
    throw RuntimeError(prefix(c) + "dim " + std::to_string(ax) + " of shape " + shape_str(t.shape) + " (" +
                       std::to_string(s[static_cast<size_t>(ax)]) + ") is not a multiple of the world size " +
                       std::to_string(w));
  s[static_cast<size_t>(ax)] /= w;
  return s;
}

Shape shape_broadcast_from(const OpCall& c) {
  rank_arg(c, c.attr("root"), "root");
  return c.tensor(0).shape;
}

Shape shape_recv(const OpCall& c) {
  rank_arg(c, c.inputs[1], "src");
  return c.tensor(0).shape;
}

// ------------------------------------------------------------ dtype inference

DType dtype_from_attr(const OpCall& c) { return c.attr("dtype").as_dtype(); }

DType dtype_arange(const OpCall& c) {
  const Value& d = c.attr("dtype");
  if (!d.is_nil()) return d.as_dtype();
  auto [start, stop] = arange_bounds(c);
  return start.is_int() && stop.is_int() && c.attr("step").is_int() ? DType::I64 : DType::F32;
}

DType dtype_tensor(const OpCall& c) {
  const Value& d = c.attr("dtype");
  if (!d.is_nil()) return d.as_dtype();
  return nested_list_layout(c.inputs[0], c.name()).inferred;
}

DType dtype_random(const OpCall& c) {
  DType d = c.attr("dtype").as_dtype();
  if (!dtype_is_float(d)) throw RuntimeError(prefix(c) + "dtype must be a float dtype, got " + dtype_name(d));
  return d;
}

DType dtype_same(const OpCall& c) { return c.tensor(0).dtype; }
DType dtype_promote2(const OpCall& c) { return promote_dtypes(c.tensor(0).dtype, c.tensor(1).dtype); }
DType dtype_where(const OpCall& c) { return where_dtype(c.inputs[1], c.inputs[2]); }
DType dtype_float(const OpCall& c) { return float_result_dtype(c.tensor(0).dtype); }
DType dtype_attention(const OpCall& c) {
  DType d = promote_dtypes(promote_dtypes(c.tensor(0).dtype, c.tensor(1).dtype), c.tensor(2).dtype);
  return float_result_dtype(d);
}
DType dtype_concat(const OpCall& c) { return concat_dtype(c.inputs[0]); }

// -------------------------------------------------------------------- kernels

Value k_zeros(const OpCall&, TensorObj* out) {
  if (out->numel) std::memset(out->data(), 0, out->nbytes());
  return {};
}
Value k_ones(const OpCall&, TensorObj* out) {
  fill_kernel(*out, Value::integer(1));
  return {};
}
Value k_full(const OpCall& c, TensorObj* out) {
  fill_kernel(*out, c.inputs[1]);
  return {};
}
Value k_arange(const OpCall& c, TensorObj* out) {
  arange_kernel(arange_bounds(c).first, c.attr("step"), *out);
  return {};
}
Value k_tensor(const OpCall& c, TensorObj* out) {
  from_list_kernel(c.inputs[0], *out);
  return {};
}
Value k_randn(const OpCall& c, TensorObj* out) {
  randn_kernel(static_cast<uint64_t>(c.attr("seed").as_int()), *out);
  return {};
}
Value k_rand(const OpCall& c, TensorObj* out) {
  rand_kernel(static_cast<uint64_t>(c.attr("seed").as_int()), *out);
  return {};
}
Value k_shape(const OpCall& c, TensorObj*) {
  std::vector<Value> dims;
  for (int64_t d : c.tensor(0).shape) dims.push_back(Value::integer(d));
  return make_list(std::move(dims));
}
Value k_ndim(const OpCall& c, TensorObj*) { return Value::integer(static_cast<int64_t>(c.tensor(0).rank())); }
Value k_numel(const OpCall& c, TensorObj*) { return Value::integer(c.tensor(0).numel); }
Value k_dtype(const OpCall& c, TensorObj*) { return Value::dtype(c.tensor(0).dtype); }
Value k_item(const OpCall& c, TensorObj*) {
  const TensorObj& t = c.tensor(0);
  if (t.numel != 1)
    throw RuntimeError(prefix(c) + "expected a tensor with one element, got " + std::to_string(t.numel) +
                       " elements");
  return tensor_element_value(t, 0);
}
Value k_allclose(const OpCall& c, TensorObj*) {
  return Value::boolean(allclose(c.inputs[0], c.inputs[1], c.attr("rtol").to_double(),
                                 c.attr("atol").to_double(), c.name()));
}
Value k_where(const OpCall& c, TensorObj* out) {
  where_kernel(c.inputs[0], c.inputs[1], c.inputs[2], *out);
  return {};
}
Value k_cast(const OpCall& c, TensorObj* out) {
  cast_kernel(c.tensor(0), *out);
  return {};
}
Value k_matmul(const OpCall& c, TensorObj* out) {
  matmul_kernel(c.tensor(0), c.tensor(1), *out);
  return {};
}
Value k_softmax(const OpCall& c, TensorObj* out) {
  const TensorObj& t = c.tensor(0);
  softmax_kernel(t, normalize_axis(c.attr("axis").as_int(), t.rank(), c.name()), *out);
  return {};
}
Value k_layer_norm(const OpCall& c, TensorObj* out) {
  layer_norm_kernel(c.tensor(0), opt_tensor(c, "weight"), opt_tensor(c, "bias"), c.attr("eps").to_double(), *out);
  return {};
}
Value k_rms_norm(const OpCall& c, TensorObj* out) {
  rms_norm_kernel(c.tensor(0), opt_tensor(c, "weight"), c.attr("eps").to_double(), *out);
  return {};
}
Value k_attention(const OpCall& c, TensorObj* out) {
  const Value& s = c.attr("scale");
  std::optional<double> scale;
  if (!s.is_nil()) scale = s.to_double();
  attention_kernel(c.tensor(0), c.tensor(1), c.tensor(2), c.attr("causal").as_bool(), scale, *out);
  return {};
}
Value k_copy(const OpCall& c, TensorObj* out) {
  copy_kernel(c.tensor(0), *out);
  return {};
}
// The collectives (vm/graph/collectives.h), each a `comm` range for Nsight.
Value k_all_reduce(const OpCall& c, TensorObj* out) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  process_collectives().all_reduce(c.tensor(0), reduce_op_of(c), *out);
  return {};
}
Value k_all_gather(const OpCall& c, TensorObj* out) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  const TensorObj& t = c.tensor(0);
  process_collectives().all_gather(t, normalize_axis(c.attr("axis").as_int(), t.rank(), c.name()), *out);
  return {};
}
Value k_reduce_scatter(const OpCall& c, TensorObj* out) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  const TensorObj& t = c.tensor(0);
  process_collectives().reduce_scatter(t, reduce_op_of(c), normalize_axis(c.attr("axis").as_int(), t.rank(), c.name()),
                                       *out);
  return {};
}
Value k_broadcast_from(const OpCall& c, TensorObj* out) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  process_collectives().broadcast(c.tensor(0), rank_arg(c, c.attr("root"), "root"), *out);
  return {};
}
Value k_barrier(const OpCall&, TensorObj*) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  process_collectives().barrier();
  return {};
}
Value k_send(const OpCall& c, TensorObj*) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  const TensorObj& t = c.tensor(0);
  if (!c.inputs[1].is_int()) throw RuntimeError(prefix(c) + "dst must be int, got " + type_name(c.inputs[1]));
  process_collectives().send(t, static_cast<int>(c.inputs[1].as_int()));
  return {};
}
Value k_recv(const OpCall& c, TensorObj* out) {
  const nvtx::Range comm(nvtx::Phase::Comm);
  process_collectives().recv(*out, rank_arg(c, c.inputs[1], "src"));
  return {};
}
Value k_transpose(const OpCall& c, TensorObj* out) {
  permute_kernel(c.tensor(0), transpose_dims(c), *out);
  return {};
}
Value k_permute(const OpCall& c, TensorObj* out) {
  permute_kernel(c.tensor(0), permute_dims(c), *out);
  return {};
}
Value k_concat(const OpCall& c, TensorObj* out) {
  int ax = 0;
  concat_shape(c.inputs[0], c.attr("axis").as_int(), c.name(), &ax);
  concat_kernel(c.inputs[0], ax, *out);
  return {};
}
Value k_slice(const OpCall& c, TensorObj* out) {
  slice_kernel(c.tensor(0), slice_bounds(c.tensor(0), c.inputs[1], c.inputs[2], c.inputs[3], c.name()), *out);
  return {};
}
Value k_world_size(const OpCall&, TensorObj*) { return Value::integer(process_collectives().size()); }
Value k_world_rank(const OpCall&, TensorObj*) { return Value::integer(process_collectives().rank()); }

}  // namespace tessera::opimpl
