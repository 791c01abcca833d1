// Elementwise kernels: unary math, binary arithmetic/comparison with NumPy
// broadcasting, where, cast.
//
// Float tensors are computed in f32 (half precision widened once, rounded
// once on store) by the vectorized primitives of vector_math.h, row by row
// over the broadcast shape; a scalar operand is rounded to f32 first, except
// that comparisons see it exactly. Integer and bool results are computed in
// int64 with two's-complement wrap-around and narrowed on store; `//`, `%`
// and integer-to-float results keep the double reference loop.
#include "vm/core/number_ops.h"
#include <cmath>
#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/f32_view.h"
#include "vm/tensor/kernels.h"
#include "vm/tensor/parallel_rows.h"
#include "vm/tensor/scalar_math.h"
#include "vm/tensor/vector_math.h"

namespace tessera {

namespace {

// A tensor or a scalar seen as a 0-d tensor.
struct Operand {
  const TensorObj* t = nullptr;
  double f = 0;
  int64_t i = 0;
  bool is_float = false;  // dtype (or scalar kind) is a float type

  explicit Operand(const Value& v) {
    if (v.is_tensor()) {
      t = v.as_tensor();
      is_float = dtype_is_float(t->dtype);
    } else if (v.is_float()) {
      f = v.as_float();
      i = 0;
      is_float = true;
    } else if (v.is_int()) {
      i = v.as_int();
      f = static_cast<double>(i);
    } else {  // bool (callers validated)
      i = v.as_bool() ? 1 : 0;
      f = static_cast<double>(i);
    }
  }
  double lf(int64_t off) const { return t ? t->get_f(off) : f; }
  int64_t li(int64_t off) const { return t ? t->get_i(off) : i; }
};

double unary_f(Unary op, double x) {
  switch (op) {
#define TESSERA_UNARY(Name, name, display, builtin, keeps, kflags, fmath, sleef, scalar, ...) \
    case Unary::Name: return (scalar);
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return x;
}

int64_t unary_i(Unary op, int64_t x) {
  switch (op) {
    case Unary::Neg: return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    case Unary::Abs: return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
    case Unary::Relu: return x > 0 ? x : 0;
    default: return x;  // unreachable: other ops produce floats
  }
}

double floor_div(double x, double y) { return std::floor(x / y); }
double floor_mod(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

double binary_f(Binary op, double x, double y) {
  switch (op) {
    case Binary::Add: return x + y;
    case Binary::Sub: return x - y;
    case Binary::Mul: return x * y;
    case Binary::Div: return x / y;
    case Binary::IDiv: return floor_div(x, y);
    case Binary::Mod: return floor_mod(x, y);
    case Binary::Pow: return std::pow(x, y);
    // NaN propagates (NumPy minimum/maximum).
    case Binary::Min: return std::isnan(x) || std::isnan(y) ? NAN : (y < x ? y : x);
    case Binary::Max: return std::isnan(x) || std::isnan(y) ? NAN : (y > x ? y : x);
    case Binary::Eq: return x == y;
    case Binary::Ne: return x != y;
    case Binary::Lt: return x < y;
    case Binary::Le: return x <= y;
    case Binary::Gt: return x > y;
    case Binary::Ge: return x >= y;
  }
  return 0;
}

int64_t ipow(int64_t base, int64_t e) {
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (e > 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(result);
}

int64_t binary_i(Binary op, int64_t x, int64_t y) {
  auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  switch (op) {
    case Binary::Add: return static_cast<int64_t>(ux + uy);
    case Binary::Sub: return static_cast<int64_t>(ux - uy);
    case Binary::Mul: return static_cast<int64_t>(ux * uy);
    case Binary::IDiv: {
      if (y == 0) throw RuntimeError("division by zero");
      if (x == INT64_MIN && y == -1) return INT64_MIN;  // wraps
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return q;
    }
    case Binary::Mod: {
      if (y == 0) throw RuntimeError("division by zero");
      if (y == -1) return 0;
      int64_t r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
    case Binary::Pow:
      if (y < 0) throw RuntimeError("**: negative exponent with an integer tensor");
      return ipow(x, y);
    case Binary::Min: return y < x ? y : x;
    case Binary::Max: return y > x ? y : x;
    case Binary::Eq: return x == y;
    case Binary::Ne: return x != y;
    case Binary::Lt: return x < y;
    case Binary::Le: return x <= y;
    case Binary::Gt: return x > y;
    case Binary::Ge: return x >= y;
    case Binary::Div: break;  // never integer: `/` gives a float dtype
  }
  return 0;
}

// Whether v takes part in an f32 computation: a float tensor, or a scalar.
// A comparison must see a scalar exactly (the reference compares in double),
// so there only scalars that f32 holds exactly qualify.
bool f32_operand(const Value& v, bool exact) {
  if (v.is_tensor()) return dtype_is_float(v.as_tensor()->dtype);
  if (!exact || !v.is_number()) return true;
  const double d = v.is_float() ? v.as_float() : static_cast<double>(v.as_int());
  return std::isnan(d) || static_cast<double>(static_cast<float>(d)) == d;
}

// The vectorized path: float operands computed in f32, row by row over the
// broadcast shape (vector_math.h). Returns false where the reference path applies.
bool try_binary_f32(Binary op, const Value& av, const Value& bv, TensorObj& out) {
  const bool cmp = is_comparison(op);
  if (!cmp && (!vmath::binary_in_f32(op) || !dtype_is_float(out.dtype))) return false;
  if (!f32_operand(av, cmp) || !f32_operand(bv, cmp)) return false;
  if (cmp && !av.is_tensor() && !bv.is_tensor()) return false;
  F32Operand a(av), b(bv);
  Shape sa = broadcast_strides(operand_shape(av), out.shape);
  Shape sb = broadcast_strides(operand_shape(bv), out.shape);
  std::array<const Shape*, 2> st{&sa, &sb};
  const vmath::Table& vm = vmath::table();
  const float *pa = a.data(), *pb = b.data();
  if (cmp) {
    uint8_t* po = out.ptr<uint8_t>();
    for_each_row<2>(out.shape, st, [&](int64_t o, int64_t len, int64_t oa, int64_t ob, int64_t ia, int64_t ib) {
      vm.compare(op, pa + oa, ia == 0, pb + ob, ib == 0, po + o, len);
    });
    return true;
  }
  F32Output res(out);
  float* po = res.data();
  for_each_row<2>(out.shape, st, [&](int64_t o, int64_t len, int64_t oa, int64_t ob, int64_t ia, int64_t ib) {
    // A long row (a flat operand) in ranges on every core; a scalar operand stays at its element.
    parallel_rows(len, 1, [&](int64_t lo, int64_t hi) {
      vm.binary(op, pa + oa + (ia == 0 ? 0 : lo), ia == 0, pb + ob + (ib == 0 ? 0 : lo), ib == 0, po + o + lo, hi - lo);
    });
  });
  res.finish();
  return true;
}

}  // namespace

bool is_comparison(Binary op) { return op >= Binary::Eq; }

Shape operand_shape(const Value& v) { return v.is_tensor() ? v.as_tensor()->shape : Shape{}; }

void check_operand(const Value& v, const char* name) {
  if (v.is_tensor() || v.is_int() || v.is_float() || v.is_bool()) return;
  throw RuntimeError(std::string(name) + ": expected tensor or number, got " + type_name(v));
}

DType unary_dtype(Unary op, DType in, const char* name) {
  if (keeps_int(op)) {
    if (in == DType::Bool) throw RuntimeError(std::string(name) + ": not supported for bool tensors");
    return in;
  }
  return dtype_is_float(in) ? in : DType::F32;
}

void unary_kernel(Unary op, const TensorObj& in, TensorObj& out) {
  const int64_t n = in.numel;
  if (!dtype_is_float(out.dtype)) {
    for (int64_t i = 0; i < n; ++i) out.set_i(i, unary_i(op, in.get_i(i)));
    return;
  }
  if (dtype_is_float(in.dtype)) {
    F32Input x(in);
    F32Output y(out);
    const vmath::Table& vm = vmath::table();
    parallel_rows(n, 1, [&](int64_t lo, int64_t hi) { vm.unary(op, x.data() + lo, y.data() + lo, hi - lo); });
    y.finish();
    return;
  }
  for (int64_t i = 0; i < n; ++i) out.set_f(i, unary_f(op, in.get_f(i)));
}

Value unary_scalar(Unary op, const Value& x, const char* name) {
  if (x.is_float()) return Value::number(unary_f(op, x.as_float()));
  if (x.is_int()) {
    if (keeps_int(op)) return Value::integer(unary_i(op, x.as_int()));
    return Value::number(unary_f(op, static_cast<double>(x.as_int())));
  }
  throw RuntimeError(std::string(name) + ": expected number or tensor, got " + type_name(x));
}

OperandKind operand_kind(const Value& v) {
  if (v.is_tensor()) return OperandKind{true, v.as_tensor()->dtype};
  const ScalarKind k = v.is_float() ? ScalarKind::Float : v.is_int() ? ScalarKind::Int : ScalarKind::Bool;
  return OperandKind{false, DType::F32, k};
}

DType promote_operands(OperandKind a, OperandKind b) {
  if (a.tensor && b.tensor) return promote_dtypes(a.dtype, b.dtype);
  if (a.tensor) return promote_with_scalar(a.dtype, b.scalar);
  if (b.tensor) return promote_with_scalar(b.dtype, a.scalar);
  return promote_dtypes(scalar_dtype(a.scalar), scalar_dtype(b.scalar));
}

DType binary_dtype(Binary op, OperandKind a, OperandKind b) {
  if (is_comparison(op)) return DType::Bool;
  DType d = promote_operands(a, b);
  if (op == Binary::Div && !dtype_is_float(d)) return DType::F32;
  return d;
}

DType binary_dtype(Binary op, const Value& a, const Value& b) {
  return binary_dtype(op, operand_kind(a), operand_kind(b));
}

void binary_kernel(Binary op, const Value& av, const Value& bv, TensorObj& out) {
  if (try_binary_f32(op, av, bv, out)) return;
  Operand a(av), b(bv);
  Shape sa = broadcast_strides(operand_shape(av), out.shape);
  Shape sb = broadcast_strides(operand_shape(bv), out.shape);
  std::array<const Shape*, 2> st{&sa, &sb};
  // Domain of the computation: comparisons look at the operands, arithmetic
  // at the result dtype.
  bool float_domain = is_comparison(op) ? (a.is_float || b.is_float) : dtype_is_float(out.dtype);
  if (float_domain) {
    bool to_bool = out.dtype == DType::Bool;
    for_each_broadcast<2>(out.shape, st, [&](int64_t i, int64_t oa, int64_t ob) {
      double r = binary_f(op, a.lf(oa), b.lf(ob));
      if (to_bool) out.set_i(i, r != 0);
      else out.set_f(i, r);
    });
  } else {
    for_each_broadcast<2>(out.shape, st, [&](int64_t i, int64_t oa, int64_t ob) {
      out.set_i(i, binary_i(op, a.li(oa), b.li(ob)));
    });
  }
}

Value binary_op(Binary op, const Value& a, const Value& b, const char* name) {
  check_operand(a, name);
  check_operand(b, name);
  Shape s = broadcast_shapes(operand_shape(a), operand_shape(b), name);
  Value out = make_tensor(binary_dtype(op, a, b), std::move(s), false);
  binary_kernel(op, a, b, tensor_of(out));
  return out;
}

Value minmax_scalar(Binary op, const Value& a, const Value& b, const char* name) {
  // Strings order bytewise, as for `<` (spec §4); numbers numerically and
  // exactly (int vs float without rounding). Ties return `a`, as Python does.
  int cmp;  // sign of (b - a)
  if (a.is_str() && b.is_str()) {
    cmp = b.as_str()->view().compare(a.as_str()->view());
  } else {
    for (const Value* v : {&a, &b})
      if (!v->is_number())
        throw RuntimeError(std::string(name) + ": expected number, str or tensor, got " + type_name(*v));
    if (a.is_int() && b.is_int()) cmp = int_compare(b.as_int(), a.as_int());
    else if (b.is_int()) cmp = int_float_compare(b.as_int(), a.as_float());
    else if (a.is_int()) {
      cmp = int_float_compare(a.as_int(), b.as_float());
      if (cmp != kCmpUnordered) cmp = -cmp;
    }
    else cmp = float_compare(b.as_float(), a.as_float());
    if (cmp == kCmpUnordered) return a;  // NaN involved: keep the first operand
  }
  bool b_wins = op == Binary::Min ? cmp < 0 : cmp > 0;
  return b_wins ? b : a;
}

Shape where_shape(const Value& c, const Value& a, const Value& b, const char* name) {
  check_operand(c, name);
  check_operand(a, name);
  check_operand(b, name);
  bool cond_bool = c.is_tensor() ? c.as_tensor()->dtype == DType::Bool : c.is_bool();
  if (!cond_bool)
    throw RuntimeError(std::string(name) + ": condition must be bool, got " +
                       (c.is_tensor() ? std::string(dtype_name(c.as_tensor()->dtype)) + " tensor"
                                      : std::string(type_name(c))));
  Shape s = broadcast_shapes(operand_shape(c), operand_shape(a), name);
  return broadcast_shapes(s, operand_shape(b), name);
}

DType where_dtype(OperandKind a, OperandKind b) { return promote_operands(a, b); }
DType where_dtype(const Value& a, const Value& b) { return where_dtype(operand_kind(a), operand_kind(b)); }

void where_kernel(const Value& cv, const Value& av, const Value& bv, TensorObj& out) {
  if (out.dtype == DType::F32 && f32_operand(av, false) && f32_operand(bv, false)) {
    // cond is a bool tensor or a bool scalar (where_shape checked).
    const uint8_t cs = cv.is_bool() && cv.as_bool();
    const uint8_t* pc = cv.is_tensor() ? cv.as_tensor()->ptr<uint8_t>() : &cs;
    F32Operand a(av), b(bv);
    const float *pa = a.data(), *pb = b.data();
    float* po = out.ptr<float>();
    Shape sc = broadcast_strides(operand_shape(cv), out.shape);
    Shape sa = broadcast_strides(operand_shape(av), out.shape);
    Shape sb = broadcast_strides(operand_shape(bv), out.shape);
    std::array<const Shape*, 3> st{&sc, &sa, &sb};
    for_each_row<3>(out.shape, st, [&](int64_t o, int64_t len, int64_t oc, int64_t oa, int64_t ob, int64_t ic,
                                       int64_t ia, int64_t ib) {
      for (int64_t j = 0; j < len; ++j) po[o + j] = pc[oc + j * ic] ? pa[oa + j * ia] : pb[ob + j * ib];
    });
    return;
  }
  Operand c(cv), a(av), b(bv);
  Shape sc = broadcast_strides(operand_shape(cv), out.shape);
  Shape sa = broadcast_strides(operand_shape(av), out.shape);
  Shape sb = broadcast_strides(operand_shape(bv), out.shape);
  std::array<const Shape*, 3> st{&sc, &sa, &sb};
  bool fl = dtype_is_float(out.dtype);
  for_each_broadcast<3>(out.shape, st, [&](int64_t i, int64_t oc, int64_t oa, int64_t ob) {
    const Operand& src = c.li(oc) ? a : b;
    int64_t off = c.li(oc) ? oa : ob;
    if (fl) out.set_f(i, src.lf(off));
    else out.set_i(i, src.li(off));
  });
}

void cast_kernel(const TensorObj& in, TensorObj& out) {
  const int64_t n = in.numel;
  if (in.dtype == out.dtype) {
    if (n) std::memcpy(out.data(), in.data(), in.nbytes());
    return;
  }
  if (dtype_is_float(out.dtype) && dtype_is_float(in.dtype)) {
    F32Input x(in);
    from_f32(out.dtype, x.data(), out.data(), n);
    return;
  }
  if (dtype_is_float(out.dtype) || dtype_is_float(in.dtype)) {
    for (int64_t i = 0; i < n; ++i) out.set_f(i, in.get_f(i));
  } else {
    for (int64_t i = 0; i < n; ++i) out.set_i(i, in.get_i(i));
  }
}

Value tensor_copy(const TensorObj& in) {
  Value out = make_tensor(in.dtype, in.shape, false);
  if (in.numel) std::memcpy(tensor_of(out).data(), in.data(), in.nbytes());
  return out;
}

}  // namespace tessera
