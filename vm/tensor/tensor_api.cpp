// The interpreter's entry points for operators, indexing and len on tensors.
#include "vm/tensor/tensor_api.h"

#include <cmath>
#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/kernels.h"

namespace tessera {

namespace {

// Flat offset of the element (or sub-array) selected by n int indices.
int64_t index_offset(const TensorObj& t, const Value* idx, size_t n) {
  if (n > t.rank())
    throw RuntimeError("too many indices for tensor of rank " + std::to_string(t.rank()) + ": got " +
                       std::to_string(n));
  int64_t off = 0;
  for (size_t d = 0; d < n; ++d) {
    if (!idx[d].is_int()) throw RuntimeError(std::string("tensor indices must be int, got ") + type_name(idx[d]));
    int64_t i = idx[d].as_int();
    if (i < 0 || i >= t.shape[d])
      throw RuntimeError("index out of range: " + std::to_string(i) + " (axis " + std::to_string(d) + " of length " +
                         std::to_string(t.shape[d]) + ")");
    off = off * t.shape[d] + i;
  }
  return off;
}

}  // namespace

Value tensor_binary(BinOp op, const Value& a, const Value& b) {
  if (op == BinOp::MatMul) {
    // Spelled "matmul" like the built-in: `a @ b` and matmul(a, b) are one op.
    for (const Value* v : {&a, &b})
      if (!v->is_tensor()) throw RuntimeError(std::string("matmul: expected tensor, got ") + type_name(*v));
    const TensorObj &x = *a.as_tensor(), &y = *b.as_tensor();
    Value out = make_tensor(promote_dtypes(x.dtype, y.dtype), matmul_shape(x.shape, y.shape, "matmul"), false);
    matmul_kernel(x, y, tensor_of(out));
    return out;
  }
  return binary_op(to_binary(op), a, b, binop_symbol(op));
}

Value tensor_compare(CmpOp op, const Value& a, const Value& b) {
  return binary_op(to_binary(op), a, b, cmpop_symbol(op));
}

Value tensor_neg(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  Value out = make_tensor(unary_dtype(Unary::Neg, t.dtype, "-"), t.shape, false);
  unary_kernel(Unary::Neg, t, tensor_of(out));
  return out;
}

Value tensor_get_index(const Value& v, const Value* idx, size_t n) {
  const TensorObj& t = *v.as_tensor();
  int64_t off = index_offset(t, idx, n);
  if (n == t.rank()) return tensor_element_value(t, off);
  // A sub-array: the trailing dims, contiguous in storage.
  Shape sub(t.shape.begin() + static_cast<std::ptrdiff_t>(n), t.shape.end());
  Value out = make_tensor(t.dtype, sub, false);
  TensorObj& o = tensor_of(out);
  if (o.numel)
    std::memcpy(o.data(), static_cast<const unsigned char*>(t.data()) + off * o.numel * dtype_size(t.dtype), o.nbytes());
  return out;
}

void tensor_set_index(const Value& tv, const Value* idx, size_t n, const Value& v) {
  TensorObj& t = *tv.as_tensor();
  if (n != t.rank())
    throw RuntimeError("tensor store needs " + std::to_string(t.rank()) + " indices, got " + std::to_string(n));
  int64_t off = index_offset(t, idx, n);
  // "an f32 tensor", "a bool tensor"
  const std::string dn = std::string(t.dtype == DType::Bool || t.dtype == DType::BF16 ? "a " : "an ") +
                         dtype_name(t.dtype);
  if (t.dtype == DType::Bool) {
    if (!v.is_bool()) throw RuntimeError(std::string("cannot store ") + type_name(v) + " in " + dn + " tensor");
    t.set_i(off, v.as_bool());
  } else if (v.is_bool()) {
    t.set_i(off, v.as_bool() ? 1 : 0);  // NumPy-like: true/false store as 1/0
  } else if (v.is_int()) {
    t.set_i(off, v.as_int());
  } else if (v.is_float()) {
    double x = v.as_float();
    if (dtype_is_int(t.dtype)) {
      // Like int(x): truncate toward zero; values with no integer are errors.
      double tr = std::trunc(x);
      if (!std::isfinite(x) || tr >= 9223372036854775808.0 || tr < -9223372036854775808.0)
        throw RuntimeError(std::string("cannot store ") + (std::isnan(x) ? "nan" : "out-of-range float") +
                           " in " + dn + " tensor");
      t.set_i(off, static_cast<int64_t>(tr));
    } else {
      t.set_f(off, x);
    }
  } else {
    throw RuntimeError(std::string("cannot store ") + type_name(v) + " in " + dn + " tensor");
  }
}

int64_t tensor_len(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  if (t.rank() == 0) throw RuntimeError("len() of a 0-d tensor");
  return t.shape[0];
}

}  // namespace tessera
