#include <cmath>
#include <cstring>
#include <limits>

#include "test_util.h"

namespace tessera {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::I32), 4u);
  EXPECT_EQ(dtype_size(DType::I64), 8u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
}

TEST(F16, BasicValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
}

TEST(F16, RoundToNearestEven) {
  // Halfway between 1 and 1+2^-10: ties to the even mantissa (1.0).
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Halfway between 1+2^-10 (odd) and 1+2^-9: rounds up to even.
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  // Mantissa carry into the exponent: 2 - 2^-12 rounds to 2.0.
  EXPECT_EQ(f32_to_f16(2.0f - std::ldexp(1.0f, -12)), 0x4000);
}

TEST(F16, OverflowToInf) {
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);  // below the midpoint
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // midpoint ties to even = inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_LT(f16_to_f32(0xfc00), 0);
}

TEST(F16, Subnormals) {
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);       // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);       // tie -> even (0)
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -26)), 0x0001);       // 0.75 ulp -> 1
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);       // 1.5 ulp tie -> 2 (even)
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);       // smallest normal
  EXPECT_EQ(f32_to_f16(std::ldexp(1023.0f, -24)), 0x03ff);    // largest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1023.5f, -24)), 0x0400);    // rounds up into normal range
  EXPECT_EQ(f32_to_f16(1e-30f), 0x0000);
  EXPECT_EQ(f32_to_f16(-1e-30f), 0x8000);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x83ff), -std::ldexp(1023.0f, -24));
}

TEST(F16, NaN) {
  uint16_t h = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x3ff, 0);
  EXPECT_TRUE(std::isnan(f16_to_f32(h)));
  // A signalling NaN whose payload lives only in the low bits stays a NaN.
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(from_bits(0x7f800001)))));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
}

TEST(F16, RoundTripEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

TEST(BF16, Conversion) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // overflow -> inf
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(from_bits(0x7f800001)))));  // payload in low bits
  EXPECT_EQ(f32_to_bf16(from_bits(0x00010000)), 0x0001);  // subnormal kept
  EXPECT_EQ(bf16_to_f32(0x3fc0), 1.5f);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(f32_to_bf16(f), h);
    }
  }
}

TEST(Promotion, TensorTensorTable) {
  using D = DType;
  struct Row { D a, b, r; };
  const Row rows[] = {
      {D::F32, D::F32, D::F32}, {D::F16, D::BF16, D::F32}, {D::F16, D::F32, D::F32},
      {D::BF16, D::F32, D::F32}, {D::F16, D::I64, D::F16}, {D::BF16, D::Bool, D::BF16},
      {D::I32, D::I64, D::I64},  {D::Bool, D::I32, D::I32}, {D::Bool, D::Bool, D::Bool},
      {D::I64, D::F32, D::F32},  {D::F16, D::F16, D::F16},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(promote_dtypes(r.a, r.b), r.r) << dtype_name(r.a) << "," << dtype_name(r.b);
    EXPECT_EQ(promote_dtypes(r.b, r.a), r.r);
  }
}

TEST(Promotion, TensorScalar) {
  EXPECT_EQ(promote_with_scalar(DType::F16, ScalarKind::Float), DType::F16);  // never widened
  EXPECT_EQ(promote_with_scalar(DType::I32, ScalarKind::Float), DType::F32);
  EXPECT_EQ(promote_with_scalar(DType::I64, ScalarKind::Float), DType::F32);
  EXPECT_EQ(promote_with_scalar(DType::Bool, ScalarKind::Float), DType::F32);
  EXPECT_EQ(promote_with_scalar(DType::I32, ScalarKind::Int), DType::I32);
  EXPECT_EQ(promote_with_scalar(DType::Bool, ScalarKind::Int), DType::I64);
  EXPECT_EQ(promote_with_scalar(DType::Bool, ScalarKind::Bool), DType::Bool);
  EXPECT_EQ(promote_with_scalar(DType::BF16, ScalarKind::Int), DType::BF16);
}

}  // namespace
}  // namespace tessera
