// Elementwise kernels: unary math, binary arithmetic/comparison with NumPy
// broadcasting, where, cast.
//
// Float results are computed in double and rounded once on store (for f16 and
// bf16 through f32, matching "compute in f32, round once"; for + - * / and
// sqrt the double result rounded to f32 equals the f32 operation exactly).
// Integer and bool results are computed in int64 with two's-complement
// wrap-around and narrowed on store.
#include "vm/core/number_ops.h"
#include <cmath>
#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/kernels.h"

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

std::optional<ScalarKind> scalar_kind(const Value& v) {
  if (v.is_float()) return ScalarKind::Float;
  if (v.is_int()) return ScalarKind::Int;
  if (v.is_bool()) return ScalarKind::Bool;
  return std::nullopt;
}

// The dtype two operands promote to (before op-specific adjustments).
DType operand_promotion(const Value& a, const Value& b) {
  if (a.is_tensor() && b.is_tensor()) return promote_dtypes(a.as_tensor()->dtype, b.as_tensor()->dtype);
  if (a.is_tensor()) return promote_with_scalar(a.as_tensor()->dtype, *scalar_kind(b));
  if (b.is_tensor()) return promote_with_scalar(b.as_tensor()->dtype, *scalar_kind(a));
  return promote_dtypes(scalar_dtype(*scalar_kind(a)), scalar_dtype(*scalar_kind(b)));
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double unary_f(Unary op, double x) {
  switch (op) {
    case Unary::Neg: return -x;
    case Unary::Abs: return std::fabs(x);
    case Unary::Exp: return std::exp(x);
    case Unary::Log: return std::log(x);
    case Unary::Sqrt: return std::sqrt(x);
    case Unary::Rsqrt: return 1.0 / std::sqrt(x);
    case Unary::Tanh: return std::tanh(x);
    case Unary::Sigmoid: return sigmoid(x);
    case Unary::Relu: return x > 0 ? x : (std::isnan(x) ? x : 0.0);
    case Unary::Gelu: return gelu(x);
    case Unary::Silu: return x * sigmoid(x);
    case Unary::Sin: return std::sin(x);
    case Unary::Cos: return std::cos(x);
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

bool keeps_int(Unary op) { return op == Unary::Neg || op == Unary::Abs || op == Unary::Relu; }

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

// Fast path: f32 tensors of the output's shape (or scalars) into f32.
bool try_binary_f32(Binary op, const Operand& a, const Operand& b, TensorObj& out) {
  if (out.dtype != DType::F32) return false;
  if (op != Binary::Add && op != Binary::Sub && op != Binary::Mul && op != Binary::Div) return false;
  auto ok = [&](const Operand& o) {
    return !o.t || (o.t->dtype == DType::F32 && o.t->shape == out.shape);
  };
  if (!ok(a) || !ok(b)) return false;
  const float* pa = a.t ? a.t->ptr<float>() : nullptr;
  const float* pb = b.t ? b.t->ptr<float>() : nullptr;
  // A scalar operand is rounded to f32 first, as it would be on a GPU.
  const float sa = static_cast<float>(a.f), sb = static_cast<float>(b.f);
  float* po = out.ptr<float>();
  const int64_t n = out.numel;
  auto run = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa ? pa[i] : sa, pb ? pb[i] : sb);
  };
  switch (op) {
    case Binary::Add: run([](float x, float y) { return x + y; }); break;
    case Binary::Sub: run([](float x, float y) { return x - y; }); break;
    case Binary::Mul: run([](float x, float y) { return x * y; }); break;
    default: run([](float x, float y) { return x / y; }); break;
  }
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
  if (in.dtype == DType::F32 && out.dtype == DType::F32) {
    const float* p = in.ptr<float>();
    float* o = out.ptr<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(unary_f(op, p[i]));
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

DType binary_dtype(Binary op, const Value& a, const Value& b) {
  if (is_comparison(op)) return DType::Bool;
  DType d = operand_promotion(a, b);
  if (op == Binary::Div && !dtype_is_float(d)) return DType::F32;
  return d;
}

void binary_kernel(Binary op, const Value& av, const Value& bv, TensorObj& out) {
  Operand a(av), b(bv);
  if (try_binary_f32(op, a, b, out)) return;
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

DType where_dtype(const Value& a, const Value& b) { return operand_promotion(a, b); }

void where_kernel(const Value& cv, const Value& av, const Value& bv, TensorObj& out) {
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
    if (n) std::memcpy(out.data, in.data, in.nbytes());
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
  if (in.numel) std::memcpy(tensor_of(out).data, in.data, in.nbytes());
  return out;
}

}  // namespace tessera
