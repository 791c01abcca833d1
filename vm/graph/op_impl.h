// Adapters between the op table's uniform signatures (OpCall) and the
// vm/tensor kernels: one shape, dtype, scalar and kernel function per column
// entry of ops.def. Templates cover families (unary, binary, reductions).
#pragma once

#include "vm/graph/op_table.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/kernels.h"

namespace tessera::opimpl {

// ---- shape inference
Shape shape_from_list(const OpCall& c);
Shape shape_full(const OpCall& c);
Shape shape_arange(const OpCall& c);
Shape shape_tensor(const OpCall& c);
Shape shape_same(const OpCall& c);
Shape shape_broadcast2(const OpCall& c);
Shape shape_where(const OpCall& c);
Shape shape_reduce(const OpCall& c);
Shape shape_matmul(const OpCall& c);
Shape shape_softmax(const OpCall& c);
Shape shape_norm(const OpCall& c);
Shape shape_attention(const OpCall& c);
Shape shape_reshape(const OpCall& c);
Shape shape_transpose(const OpCall& c);
Shape shape_permute(const OpCall& c);
Shape shape_concat(const OpCall& c);
Shape shape_slice(const OpCall& c);
Shape shape_all_reduce(const OpCall& c);
Shape shape_all_gather(const OpCall& c);
Shape shape_reduce_scatter(const OpCall& c);
Shape shape_broadcast_from(const OpCall& c);
Shape shape_recv(const OpCall& c);

// ---- dtype inference
DType dtype_from_attr(const OpCall& c);
DType dtype_arange(const OpCall& c);
DType dtype_tensor(const OpCall& c);
DType dtype_random(const OpCall& c);
DType dtype_same(const OpCall& c);
DType dtype_promote2(const OpCall& c);
DType dtype_where(const OpCall& c);
DType dtype_float(const OpCall& c);
DType dtype_attention(const OpCall& c);
DType dtype_concat(const OpCall& c);
template <Unary U> DType dtype_unary(const OpCall& c) { return unary_dtype(U, c.tensor(0).dtype, c.name()); }
template <Binary B> DType dtype_binary(const OpCall& c) { return binary_dtype(B, c.inputs[0], c.inputs[1]); }
template <Reduce R> DType dtype_reduce(const OpCall& c) { return reduce_dtype(R, c.tensor(0).dtype); }

// ---- scalar forms
template <Unary U> Value scalar_unary(std::span<const Value> a) { return unary_scalar(U, a[0], unary_display(U)); }
template <Binary B> Value scalar_minmax(std::span<const Value> a) {
  return minmax_scalar(B, a[0], a[1], B == Binary::Min ? "min" : "max");
}

// ---- kernels
Value k_zeros(const OpCall& c, TensorObj* out);
Value k_ones(const OpCall& c, TensorObj* out);
Value k_full(const OpCall& c, TensorObj* out);
Value k_arange(const OpCall& c, TensorObj* out);
Value k_tensor(const OpCall& c, TensorObj* out);
Value k_randn(const OpCall& c, TensorObj* out);
Value k_rand(const OpCall& c, TensorObj* out);
Value k_shape(const OpCall& c, TensorObj* out);
Value k_ndim(const OpCall& c, TensorObj* out);
Value k_numel(const OpCall& c, TensorObj* out);
Value k_dtype(const OpCall& c, TensorObj* out);
Value k_item(const OpCall& c, TensorObj* out);
Value k_allclose(const OpCall& c, TensorObj* out);
Value k_where(const OpCall& c, TensorObj* out);
Value k_cast(const OpCall& c, TensorObj* out);
Value k_matmul(const OpCall& c, TensorObj* out);
Value k_softmax(const OpCall& c, TensorObj* out);
Value k_layer_norm(const OpCall& c, TensorObj* out);
Value k_rms_norm(const OpCall& c, TensorObj* out);
Value k_attention(const OpCall& c, TensorObj* out);
Value k_copy(const OpCall& c, TensorObj* out);
Value k_all_reduce(const OpCall& c, TensorObj* out);
Value k_all_gather(const OpCall& c, TensorObj* out);
Value k_reduce_scatter(const OpCall& c, TensorObj* out);
Value k_broadcast_from(const OpCall& c, TensorObj* out);
Value k_barrier(const OpCall& c, TensorObj* out);
Value k_send(const OpCall& c, TensorObj* out);
Value k_recv(const OpCall& c, TensorObj* out);
Value k_transpose(const OpCall& c, TensorObj* out);
Value k_permute(const OpCall& c, TensorObj* out);
Value k_concat(const OpCall& c, TensorObj* out);
Value k_slice(const OpCall& c, TensorObj* out);
Value k_world_size(const OpCall& c, TensorObj* out);
Value k_world_rank(const OpCall& c, TensorObj* out);
template <Unary U> Value k_unary(const OpCall& c, TensorObj* out) {
  unary_kernel(U, c.tensor(0), *out);
  return {};
}
template <Binary B> Value k_binary(const OpCall& c, TensorObj* out) {
  binary_kernel(B, c.inputs[0], c.inputs[1], *out);
  return {};
}
std::optional<int> reduce_axis(const OpCall& c);
template <Reduce R> Value k_reduce(const OpCall& c, TensorObj* out) {
  reduce_kernel(R, c.tensor(0), reduce_axis(c), *out, c.name());
  return {};
}

}  // namespace tessera::opimpl
