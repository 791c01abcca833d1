// Array primitives over contiguous f32 data for the interpreter's tensor
// kernels: the inner loops, vectorized for the widest SIMD the CPU has.
//
// Design: the primitives are written once (vector_math_impl.h, GCC vector
// types plus SLEEF's vector math for exp/log/log1p/tanh/erf/sin/cos/pow) and
// compiled three times, for AVX-512 (16 lanes), AVX2 (8 lanes) and baseline
// SSE2 (4 lanes); the widest build the CPU reports at run time is used.
// Transcendentals go through SLEEF's 1-ULP (u10) functions for every element,
// tails included (padded to a full vector), so a result does not depend on
// where an element falls in the array. `TESSERA_SIMD=avx2` or `sse2` in the
// environment forces a narrower table (tests run each).
//
// Float semantics (spec §1 allows rounding differences): every operation is
// an f32 operation rounded to f32; transcendentals are SLEEF's, 1 ULP but
// tanh 3.5 ULP (sleef_accuracy). Sums have one order on every ISA, so that
// code that computes elements one at a time (the JIT's tensor sinking) can
// reproduce them exactly: element i of a block of 1024 goes to f32 lane
// i % kSumLanes; a block adds its lanes 0..15 in order in double (from +0.0);
// the blocks add in double.
#pragma once

#include <cstdint>
#include <string_view>

#include "vm/tensor/op_kinds.h"

namespace tessera::vmath {

constexpr int64_t kSumLanes = 16;
constexpr int64_t kSumBlock = 1024;

struct Table {
  const char* isa;  // "avx512", "avx2" or "sse2"
  int lanes;
  // out[i] = op(x[i]).
  void (*unary)(Unary op, const float* x, float* out, int64_t n);
  // out[i] = a[i] op b[i]; an operand flagged scalar is read once (a[0]) and
  // broadcast. Only the ops binary_in_f32(op) accepts.
  void (*binary)(Binary op, const float* a, bool a_scalar, const float* b, bool b_scalar, float* out,
                 int64_t n);
  // out[i] = a[i] op b[i] for the comparisons Eq..Ge, as 0/1 bytes.
  void (*compare)(Binary op, const float* a, bool a_scalar, const float* b, bool b_scalar, uint8_t* out,
                  int64_t n);
  double (*sum)(const float* x, int64_t n);
  double (*sum_squares)(const float* x, int64_t n);
  // Sum of (x[i] - c)^2, the second pass of a variance.
  double (*sum_sq_dev)(const float* x, float c, int64_t n);
  // The first maximum in element order (of +0 and -0, the one that comes
  // first), or the first NaN if there is one (n >= 1): what a sequential
  // fold with `>` gives, so that code folding in any order of lanes can
  // reproduce it.
  float (*max)(const float* x, int64_t n);
  float (*min)(const float* x, int64_t n);
  // Index of the first maximum, or of the first NaN (n >= 1), as NumPy.
  int64_t (*argmax)(const float* x, int64_t n);
  // out[i] = exp(x[i] - m); returns the sum of out.
  double (*exp_shifted)(const float* x, float m, float* out, int64_t n);
  // acc[i] += x[i] (column sums in double).
  void (*accumulate)(double* acc, const float* x, int64_t n);
  // acc[i] = max/min(acc[i], x[i]), NaN-propagating (a NaN in acc stays).
  void (*max_into)(float* acc, const float* x, int64_t n);
  void (*min_into)(float* acc, const float* x, int64_t n);
  // c[i][j] += a[i][0] * b[0][j] + a[i][1] * b[1][j] + ..., added in order
  // of k, each product rounded before its addition (so every build, and the
  // generated kernels that call this, give the same bits): a [m, kk],
  // b [kk, n], c [m, n], row-major and contiguous. The matrix micro-kernel
  // of attention's tiles (nn.cpp) and of the kernel IR's `dot`.
  void (*dot)(int64_t m, int64_t n, int64_t kk, const float* a, const float* b, float* c);
};

// The accuracy of SLEEF's function `fn` (its name: "exp", "tanh", ...) that
// the primitives call, and generated kernels with them: the 1-ULP ("u10")
// function, but tanh's 3.5-ULP one ("u35"): SLEEF's 1-ULP tanh costs three
// times as much (1.4 against 0.44 ns an element with AVX-512), most of an
// elementwise chain's time.
constexpr const char* sleef_accuracy(std::string_view fn) { return fn == "tanh" ? "u35" : "u10"; }

// SLEEF's sin and cos take one of two paths for a whole vector: a fast one
// when every lane is below this in magnitude (SLEEF's TRIGRANGEMAX2f), a
// slower one otherwise (a lane of 125 or more, or a NaN), and the two may
// round a small lane differently. So that an element's result does not
// depend on its neighbours (a kernel's tiles group elements unlike the
// interpreter's flat loops), the primitives and generated kernels call
// them lane by lane in effect: the small lanes on the fast path (the others
// replaced by 0), the others, if any, on the slow one.
constexpr float kTrigFastMax = 125.0f;

// op(x) for one element, computed by the table's vector code (a lane of a
// padded vector), so that it equals the element the tensor kernels compute.
float unary_one(Unary op, float x);

// The table for this CPU (chosen once): the widest build it runs, or the
// one TESSERA_SIMD names (avx2, sse2).
const Table& table();
// The builds, for tests that compare them.
const Table& avx512_table();  // only valid when cpu_has_avx512()
const Table& avx2_table();    // only valid when cpu_has_avx2()
const Table& sse2_table();
bool cpu_has_avx512();
bool cpu_has_avx2();

// Whether `op` is computed by Table::binary (the others take the reference path).
inline bool binary_in_f32(Binary op) {
  switch (op) {
    case Binary::Add: case Binary::Sub: case Binary::Mul: case Binary::Div:
    case Binary::Min: case Binary::Max: case Binary::Pow: return true;
    default: return false;
  }
}

}  // namespace tessera::vmath
