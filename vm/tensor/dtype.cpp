#include "vm/tensor/dtype.h"

#include <cstring>

namespace tessera {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::Bool: return 1;
  }
  return 1;
}

namespace {
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Shifts `m` right by `s` bits rounding to nearest, ties to even.
uint32_t shift_round_even(uint32_t m, uint32_t s) {
  if (s == 0) return m;
  if (s >= 32) return 0;
  uint32_t res = m >> s;
  uint32_t rem = m & ((1u << s) - 1);
  uint32_t half = 1u << (s - 1);
  if (rem > half || (rem == half && (res & 1))) ++res;
  return res;
}
}  // namespace

uint16_t f32_to_f16(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)  // NaN: quiet it, keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
  // 65520 is the midpoint between the largest half (65504) and 2^16; ties go
  // to even, i.e. to infinity, so everything from there up overflows.
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);
  uint32_t e = ax >> 23;
  if (e < 113) {  // below 2^-14: half subnormal (or zero)
    if (e == 0) return sign;  // f32 zero/subnormal is far below half's range
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    // value = m * 2^(e-150); in units of 2^-24 that is m >> (126 - e).
    return static_cast<uint16_t>(sign | shift_round_even(m, 126 - e));
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t res = ((e - 112) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (res & 1))) ++res;  // carry may bump the exponent
  return static_cast<uint16_t>(sign | res);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f;
  uint32_t m = h & 0x3ff;
  if (e == 0) {
    float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t f32_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1);  // ties to even; overflow carries to inf
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bf16_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

namespace {
int float_rank(DType d) { return d == DType::F32 ? 2 : 1; }  // f16 and bf16 are peers
int int_rank(DType d) { return d == DType::I64 ? 2 : d == DType::I32 ? 1 : 0; }
}  // namespace

DType promote_dtypes(DType a, DType b) {
  if (a == b) return a;
  bool fa = dtype_is_float(a), fb = dtype_is_float(b);
  if (fa && fb) {
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == rb) return DType::F32;  // f16 with bf16: neither holds the other
    return ra > rb ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  return int_rank(a) >= int_rank(b) ? a : b;
}

DType promote_with_scalar(DType t, ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return t;
    case ScalarKind::Int: return t == DType::Bool ? DType::I64 : t;
    case ScalarKind::Float: return dtype_is_float(t) ? t : DType::F32;
  }
  return t;
}

DType scalar_dtype(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int: return DType::I64;
    case ScalarKind::Float: return DType::F32;
  }
  return DType::F32;
}

}  // namespace tessera
