// Scalar arithmetic helpers with the language's exact semantics (spec §3, §4).
//
// Header-only, inline and dependency-free so that the interpreter's fast paths
// and the JIT's runtime helpers compute exactly what the generic slow path
// (vm/builtins/value_ops.cpp) computes: one definition of every edge case.
//
// Int semantics: 64-bit two's complement with wrap-around. Signed overflow is
// undefined behaviour in C++, so every wrapping operation goes through
// uint64_t. Float semantics: IEEE-754 binary64, with `//` and `%` floored as in
// Python; where Python raises (float division by zero) we return the IEEE
// result instead (documented in docs/language-notes.md).
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera {

inline int64_t int_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t int_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t int_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// -INT64_MIN wraps to INT64_MIN.
inline int64_t int_neg(int64_t a) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
}

// Floored division (Python `//`). Precondition: b != 0 (the caller raises
// "division by zero"). INT64_MIN // -1 wraps to INT64_MIN instead of trapping.
inline int64_t int_floordiv(int64_t a, int64_t b) {
  if (b == -1) return int_neg(a);  // the one case where C++ `/` overflows
  int64_t q = a / b;
  // C++ truncates toward zero; step down when the exact quotient was negative
  // and not whole.
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Floored modulo (Python `%`): the result has the sign of the divisor.
// Precondition: b != 0.
inline int64_t int_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 traps on x86; the answer is 0
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;  // |r| < |b|, so no overflow
  return r;
}

// a ** e for e >= 0, wrapping, by repeated squaring (O(log e) even for huge
// exponents). 0 ** 0 == 1. Negative exponents are the caller's business
// (they give a float: see float_pow).
inline int64_t int_pow(int64_t base, int64_t e) {
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  uint64_t n = static_cast<uint64_t>(e);
  while (n != 0) {
    if (n & 1) result *= b;
    b *= b;
    n >>= 1;
  }
  return static_cast<int64_t>(result);
}

inline double float_pow(double a, double b) { return std::pow(a, b); }

// Python's float `%`: fmod, then move the remainder to the divisor's sign.
// Edge cases: x % 0.0 is nan; inf % y is nan; x % inf is x when the signs
// agree (5.0 % inf == 5.0) and inf otherwise (-5.0 % inf == inf, as Python);
// a zero result takes the divisor's sign (-0.0 for a negative divisor).
inline double float_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0.0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}

// Python's float `//` (the algorithm of CPython's float_divmod), so that
// a == (a // b) * b + a % b as closely as rounding allows: 1.0 // 0.1 is 9.0
// (not floor(1.0 / 0.1) == 10.0). For b == 0 Python raises; we return the
// IEEE quotient floor(a / b): ±inf, or nan for 0.0 // 0.0 and nan // 0.0.
inline double float_floordiv(double a, double b) {
  if (b == 0.0) return std::floor(a / b);
  double m = std::fmod(a, b);
  double div = (a - m) / b;
  if (m != 0.0 && ((b < 0) != (m < 0))) div -= 1.0;  // nan m: comparison false
  if (div != 0.0) {
    double fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;  // div is within rounding of a whole number
    return fl;
  }
  return std::copysign(0.0, a / b);
}

// Result of comparing two numbers: -1 (less), 0 (equal), 1 (greater), or
// kCmpUnordered when a NaN is involved (every ordering and == are false, != is
// true).
constexpr int kCmpUnordered = 2;

// Exact comparison of an int with a float, as Python does: no rounding of the
// int to double, so 2**53 + 1 > 2.0**53 and INT64_MAX < 2.0**63.
inline int int_float_compare(int64_t i, double f) {
  if (std::isnan(f)) return kCmpUnordered;
  constexpr double kTwo63 = 9223372036854775808.0;  // 2**63, exact
  if (f >= kTwo63) return -1;                        // including +inf
  if (f < -kTwo63) return 1;                         // including -inf
  // |f| < 2**63 or f == -2**63: its integer part fits in int64 exactly.
  double t = std::trunc(f);
  int64_t ti = static_cast<int64_t>(t);
  if (i < ti) return -1;
  if (i > ti) return 1;
  double frac = f - t;  // exact (Sterbenz); same sign as f when non-zero
  if (frac > 0) return -1;
  if (frac < 0) return 1;
  return 0;
}

inline int float_compare(double a, double b) {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a == b) return 0;
  return kCmpUnordered;
}

inline int int_compare(int64_t a, int64_t b) { return (a > b) - (a < b); }

}  // namespace tessera
