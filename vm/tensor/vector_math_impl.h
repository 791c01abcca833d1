// The vector-math primitives of vector_math.h, written once over a vector
// type and included by one translation unit per ISA. The including file
// defines:
//   TESSERA_VM_ISA      namespace and name of the build (avx2, sse2)
//   TESSERA_VM_VF       the float vector type (__m256, __m128)
//   TESSERA_VM_SLEEF(f) SLEEF's function of that width (Sleef_##f##f8_u10)
//   TESSERA_VM_SLEEF35(f) its 3.5-ULP function (Sleef_##f##f8_u35), for tanh
//                         (vmath::sleef_accuracy says which)
//   TESSERA_VM_SQRT(v)  the hardware square root
// It includes no C++ library header: an inline library function compiled
// here for AVX2 could otherwise be picked by the linker for baseline code.
#include <sleef.h>

#include "vm/tensor/vector_math.h"

namespace tessera::vmath::TESSERA_VM_ISA {
namespace {

using VF = TESSERA_VM_VF;
typedef int32_t VI __attribute__((vector_size(sizeof(VF))));
constexpr int64_t W = sizeof(VF) / sizeof(float);
// Sums accumulate this many elements in f32 lanes before adding into double.
constexpr int64_t kBlock = vmath::kSumBlock;
constexpr int64_t kSumLanes = vmath::kSumLanes;

inline VF load(const float* p) {
  VF v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, VF v) { __builtin_memcpy(p, &v, sizeof v); }
// Lane by lane (the compiler makes one broadcast): VF{} + x would turn
// -0.0 into +0.0.
inline VF splat(float x) {
  VF v;
  for (int j = 0; j < W; ++j) v[j] = x;
  return v;
}
inline VI lanes_nan(VF v) { return v != v; }
inline VF nan_aware(VF x, VF y, VF r) { return (lanes_nan(x) | lanes_nan(y)) ? x + y : r; }
// The lanes added in order, in double (continuing from s).
inline double hsum(VF v, double s = 0) {
  for (int64_t i = 0; i < W; ++i) s += v[i];
  return s;
}

// f (SLEEF's sin or cos) with each lane's result independent of the other
// lanes (vector_math.h, kTrigFastMax).
template <typename F>
inline VF trig_lanewise(VF v, F f) {
  const VI small = (v < kTrigFastMax) & (v > -kTrigFastMax);  // false for NaN
  VF r = f(small ? v : VF{});
  bool any_big = false;
  for (int j = 0; j < W; ++j) any_big = any_big || small[j] == 0;
  return any_big ? (small ? r : f(v)) : r;
}

// out[i] = f(x[i]); the tail is padded to a full vector so that every element
// takes the same path.
template <typename F>
inline void map1(const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W) store(out + i, f(load(x + i)));
  if (i < n) {
    float buf[W] = {};
    for (int64_t j = 0; j < n - i; ++j) buf[j] = x[i + j];
    VF r = f(load(buf));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = r[j];
  }
}

// Operand read as a vector at element i: a broadcast scalar or an array.
template <bool Scalar>
inline VF operand(const float* p, int64_t i, VF s) {
  if constexpr (Scalar) return s;
  else return load(p + i);
}

template <bool AS, bool BS, typename F, typename Out>
inline void map2_loop(const float* a, const float* b, int64_t n, F f, Out put) {
  const VF sa = splat(a[0]), sb = splat(b[0]);
  int64_t i = 0;
  for (; i + W <= n; i += W) put(i, f(operand<AS>(a, i, sa), operand<BS>(b, i, sb)), W);
  if (i < n) {
    float ba[W] = {}, bb[W] = {};
    for (int64_t j = 0; j < n - i; ++j) {
      ba[j] = AS ? a[0] : a[i + j];
      bb[j] = BS ? b[0] : b[i + j];
    }
    put(i, f(load(ba), load(bb)), n - i);
  }
}

template <typename F, typename Out>
inline void map2(const float* a, bool as, const float* b, bool bs, int64_t n, F f, Out put) {
  if (as && bs) map2_loop<true, true>(a, b, n, f, put);
  else if (as) map2_loop<true, false>(a, b, n, f, put);
  else if (bs) map2_loop<false, true>(a, b, n, f, put);
  else map2_loop<false, false>(a, b, n, f, put);
}

VF sigmoid(VF x) { return 1.0f / (1.0f + TESSERA_VM_SLEEF(exp)(-x)); }
// max(x, 0) + log1p(e^-|x|), as softplus_ref (scalar_math.h) in f32.
VF softplus(VF x) {
  const VF neg_abs = -(VF)((VI)x & 0x7fffffff);
  return (x > 0.0f ? x : VF{}) + TESSERA_VM_SLEEF(log1p)(TESSERA_VM_SLEEF(exp)(neg_abs));
}

void unary(Unary op, const float* x, float* out, int64_t n) {
  switch (op) {
#define TESSERA_UNARY(Name, name, display, builtin, keeps, kflags, fmath, sleef, scalar, vector, ...) \
    case Unary::Name: return map1(x, out, n, [](VF v) { return (vector); });
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
}

void binary(Binary op, const float* a, bool as, const float* b, bool bs, float* out, int64_t n) {
  auto put = [out](int64_t i, VF r, int64_t k) {
    if (k == W) store(out + i, r);
    else for (int64_t j = 0; j < k; ++j) out[i + j] = r[j];
  };
  switch (op) {
    case Binary::Add: return map2(a, as, b, bs, n, [](VF x, VF y) { return x + y; }, put);
    case Binary::Sub: return map2(a, as, b, bs, n, [](VF x, VF y) { return x - y; }, put);
    case Binary::Mul: return map2(a, as, b, bs, n, [](VF x, VF y) { return x * y; }, put);
    case Binary::Div: return map2(a, as, b, bs, n, [](VF x, VF y) { return x / y; }, put);
    case Binary::Pow: return map2(a, as, b, bs, n, [](VF x, VF y) { return TESSERA_VM_SLEEF(pow)(x, y); }, put);
    // NaN propagates (NumPy minimum/maximum); ties keep x.
    case Binary::Min:
      return map2(a, as, b, bs, n, [](VF x, VF y) { return nan_aware(x, y, y < x ? y : x); }, put);
    case Binary::Max:
      return map2(a, as, b, bs, n, [](VF x, VF y) { return nan_aware(x, y, y > x ? y : x); }, put);
    default: return;  // not in binary_in_f32
  }
}

void compare(Binary op, const float* a, bool as, const float* b, bool bs, uint8_t* out, int64_t n) {
  // c gives a lane mask (all ones or zero).
  auto put = [out](int64_t i, VI m, int64_t k) {
    for (int64_t j = 0; j < k; ++j) out[i + j] = m[j] != 0;
  };
  auto cmp = [&](auto c) { map2(a, as, b, bs, n, c, put); };
  switch (op) {
    case Binary::Eq: return cmp([](VF x, VF y) { return x == y; });
    case Binary::Ne: return cmp([](VF x, VF y) { return x != y; });
    case Binary::Lt: return cmp([](VF x, VF y) { return x < y; });
    case Binary::Le: return cmp([](VF x, VF y) { return x <= y; });
    case Binary::Gt: return cmp([](VF x, VF y) { return x > y; });
    case Binary::Ge: return cmp([](VF x, VF y) { return x >= y; });
    default: return;
  }
}

// Sum of f(x[i]) in the order vector_math.h fixes for every ISA: element i
// goes to f32 lane i % 16 (a partial last chunk is padded with zeros), each
// block of kBlock elements adds its 16 lanes in order in double, and the
// blocks add in double.
template <typename F>
inline double block_sum(const float* x, int64_t n, F f) {
  constexpr int64_t V = kSumLanes / W;  // vectors per 16 lanes
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = start + kBlock < n ? start + kBlock : n;
    VF acc[V] = {};
    int64_t i = start;
    for (; i + kSumLanes <= end; i += kSumLanes)
      for (int64_t v = 0; v < V; ++v) acc[v] += f(load(x + i + v * W));
    if (i < end) {
      float buf[kSumLanes] = {};
      for (int64_t j = 0; j < end - i; ++j) buf[j] = x[i + j];
      for (int64_t v = 0; v < V; ++v) {
        float r[W];
        store(r, f(load(buf + v * W)));
        // Padding lanes add exactly zero whatever f(0) is.
        for (int64_t j = 0; j < W; ++j)
          if (v * W + j >= end - i) r[j] = 0.0f;
        acc[v] += load(r);
      }
    }
    double s = 0;
    for (int64_t v = 0; v < V; ++v) s = hsum(acc[v], s);
    total += s;
  }
  return total;
}

double sum(const float* x, int64_t n) { return block_sum(x, n, [](VF v) { return v; }); }
double sum_squares(const float* x, int64_t n) { return block_sum(x, n, [](VF v) { return v * v; }); }
double sum_sq_dev(const float* x, float c, int64_t n) {
  const VF vc = splat(c);
  return block_sum(x, n, [vc](VF v) { VF d = v - vc; return d * d; });
}

int64_t first_nan(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] != x[i]) return i;
  return -1;
}

// max (Max=true) or min of x, ignoring NaN; *saw_nan says whether one was seen.
template <bool Max>
inline float extreme(const float* x, int64_t n, bool* saw_nan) {
  VF best = splat(x[0]);
  VI nan{};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    VF v = load(x + i);
    nan |= lanes_nan(v);
    best = (Max ? v > best : v < best) ? v : best;
  }
  float r = x[0];
  for (int64_t j = 0; j < W; ++j)
    if (Max ? best[j] > r : best[j] < r) r = best[j];
  for (; i < n; ++i) {
    if (x[i] != x[i]) nan[0] = -1;
    if (Max ? x[i] > r : x[i] < r) r = x[i];
  }
  bool any = false;
  for (int64_t j = 0; j < W; ++j) any |= nan[j] != 0;
  *saw_nan = any || r != r;
  return r;
}

// The first element equal to r: the lanes find the extreme's value, but
// which of +0 and -0 is the first in element order they do not know.
float first_equal(const float* x, int64_t n, float r) {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] == r) return x[i];
  return r;
}

float max(const float* x, int64_t n) {
  bool nan;
  float r = extreme<true>(x, n, &nan);
  if (nan) return x[first_nan(x, n)];
  return r == 0.0f ? first_equal(x, n, r) : r;
}
float min(const float* x, int64_t n) {
  bool nan;
  float r = extreme<false>(x, n, &nan);
  if (nan) return x[first_nan(x, n)];
  return r == 0.0f ? first_equal(x, n, r) : r;
}

int64_t argmax(const float* x, int64_t n) {
  bool nan;
  float m = extreme<true>(x, n, &nan);
  if (nan) return first_nan(x, n);
  int64_t i = 0;
  const VF vm = splat(m);
  for (; i + W <= n; i += W) {
    VI hit = load(x + i) == vm;
    for (int64_t j = 0; j < W; ++j)
      if (hit[j]) return i + j;
  }
  for (; i < n; ++i)
    if (x[i] == m) return i;
  return 0;
}

double exp_shifted(const float* x, float m, float* out, int64_t n) {
  const VF vm = splat(m);
  map1(x, out, n, [vm](VF v) { return TESSERA_VM_SLEEF(exp)(v - vm); });
  return sum(out, n);
}

void accumulate(double* acc, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

template <bool Max>
inline void extreme_into(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    VF a = load(acc + i), v = load(x + i);
    VI take = (lanes_nan(v) | (Max ? v > a : v < a)) & ~lanes_nan(a);
    store(acc + i, take ? v : a);
  }
  for (; i < n; ++i)
    if (acc[i] == acc[i] && (x[i] != x[i] || (Max ? x[i] > acc[i] : x[i] < acc[i]))) acc[i] = x[i];
}
void max_into(float* acc, const float* x, int64_t n) { extreme_into<true>(acc, x, n); }
void min_into(float* acc, const float* x, int64_t n) { extreme_into<false>(acc, x, n); }

// Rows of c in fours, columns in vectors: four accumulators in registers
// take each vector of b's row k, so a load serves four rows. (A scalar
// times a vector broadcasts the scalar exactly, -0 included.)
inline VF load_part(const float* p, int64_t cols) {
  if (cols == W) return load(p);
  VF v = {};
  for (int64_t q = 0; q < cols; ++q) v[q] = p[q];
  return v;
}
inline void store_part(float* p, VF v, int64_t cols) {
  if (cols == W) return store(p, v);
  for (int64_t q = 0; q < cols; ++q) p[q] = v[q];
}

void dot(int64_t m, int64_t n, int64_t kk, const float* a, const float* b, float* c) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const float *a0 = a + i * kk, *a1 = a0 + kk, *a2 = a1 + kk, *a3 = a2 + kk;
    int64_t j = 0;
    // Two vectors of columns at a time where whole: eight independent sums.
    for (; j + 2 * W <= n; j += 2 * W) {
      float* c0 = c + i * n + j;
      VF x0 = load(c0), y0 = load(c0 + W), x1 = load(c0 + n), y1 = load(c0 + n + W);
      VF x2 = load(c0 + 2 * n), y2 = load(c0 + 2 * n + W), x3 = load(c0 + 3 * n), y3 = load(c0 + 3 * n + W);
      for (int64_t k = 0; k < kk; ++k) {
        const VF bx = load(b + k * n + j), by = load(b + k * n + j + W);
        x0 += a0[k] * bx;
        y0 += a0[k] * by;
        x1 += a1[k] * bx;
        y1 += a1[k] * by;
        x2 += a2[k] * bx;
        y2 += a2[k] * by;
        x3 += a3[k] * bx;
        y3 += a3[k] * by;
      }
      store(c0, x0), store(c0 + W, y0), store(c0 + n, x1), store(c0 + n + W, y1);
      store(c0 + 2 * n, x2), store(c0 + 2 * n + W, y2), store(c0 + 3 * n, x3), store(c0 + 3 * n + W, y3);
    }
    for (; j < n; j += W) {
      const int64_t cols = n - j < W ? n - j : W;
      float* c0 = c + i * n + j;
      VF acc0 = load_part(c0, cols), acc1 = load_part(c0 + n, cols), acc2 = load_part(c0 + 2 * n, cols),
         acc3 = load_part(c0 + 3 * n, cols);
      for (int64_t k = 0; k < kk; ++k) {
        const VF bv = load_part(b + k * n + j, cols);
        acc0 += a0[k] * bv;
        acc1 += a1[k] * bv;
        acc2 += a2[k] * bv;
        acc3 += a3[k] * bv;
      }
      store_part(c0, acc0, cols);
      store_part(c0 + n, acc1, cols);
      store_part(c0 + 2 * n, acc2, cols);
      store_part(c0 + 3 * n, acc3, cols);
    }
  }
  for (; i < m; ++i)
    for (int64_t j = 0; j < n; j += W) {
      const int64_t cols = n - j < W ? n - j : W;
      VF acc = load_part(c + i * n + j, cols);
      for (int64_t k = 0; k < kk; ++k) acc += a[i * kk + k] * load_part(b + k * n + j, cols);
      store_part(c + i * n + j, acc, cols);
    }
}

}  // namespace

extern const Table kTable;
const Table kTable = {
    TESSERA_VM_ISA_NAME, static_cast<int>(W), unary, binary, compare, sum, sum_squares, sum_sq_dev,
    max, min, argmax, exp_shifted, accumulate, max_into, min_into, dot,
};

}  // namespace tessera::vmath::TESSERA_VM_ISA
