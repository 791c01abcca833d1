// Edge cases of the inline scalar helpers (expectations checked with Python).
#include "vm/core/number_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tessera {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(NumberOps, WrappingAddSubMulNeg) {
  EXPECT_EQ(int_add(kMax, 1), kMin);
  EXPECT_EQ(int_sub(kMin, 1), kMax);
  EXPECT_EQ(int_mul(kMax, 2), -2);
  EXPECT_EQ(int_mul(kMin, -1), kMin);
  EXPECT_EQ(int_neg(kMin), kMin);
  EXPECT_EQ(int_neg(5), -5);
}

TEST(NumberOps, FlooredIntDivisionAndModulo) {
  struct Case { int64_t a, b, q, r; };
  const Case cases[] = {
      {7, 2, 3, 1},   {-7, 2, -4, 1},   {7, -2, -4, -1}, {-7, -2, 3, -1},
      {6, 3, 2, 0},   {-6, 3, -2, 0},   {0, -5, 0, 0},
      {kMin, 7, -1317624576693539402, 6}, {kMax, -10, -922337203685477581, -3},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(int_floordiv(c.a, c.b), c.q) << c.a << " // " << c.b;
    EXPECT_EQ(int_mod(c.a, c.b), c.r) << c.a << " % " << c.b;
  }
  EXPECT_EQ(int_floordiv(kMin, -1), kMin);  // wraps, no trap
  EXPECT_EQ(int_mod(kMin, -1), 0);
  EXPECT_EQ(int_floordiv(kMin, 1), kMin);
  EXPECT_EQ(int_mod(kMin, kMin), 0);
  EXPECT_EQ(int_mod(kMax, kMin), -1);  // Python: (2**63-1) % -2**63 == -1
}

TEST(NumberOps, IntPow) {
  EXPECT_EQ(int_pow(2, 10), 1024);
  EXPECT_EQ(int_pow(0, 0), 1);
  EXPECT_EQ(int_pow(-2, 3), -8);
  EXPECT_EQ(int_pow(2, 63), kMin);  // wraps
  EXPECT_EQ(int_pow(2, 64), 0);
  EXPECT_EQ(int_pow(3, 40), -6289078614652622815);  // 3**40 mod 2**64, signed
  EXPECT_EQ(int_pow(-3, 41), 420491770248316829);
  EXPECT_EQ(int_pow(1, kMax), 1);  // huge exponent: O(log e)
  EXPECT_EQ(int_pow(-1, kMax), -1);
}

TEST(NumberOps, FloatFloorDivAndMod) {
  struct Case { double a, b, q, r; };
  const Case cases[] = {
      {7.5, 2.0, 3.0, 1.5},   {-7.5, 2.0, -4.0, 0.5}, {7.5, -2.0, -4.0, -0.5},
      {-7.5, -2.0, 3.0, -1.5}, {1.0, 0.1, 9.0, 0.09999999999999995},
      {0.5, 0.1, 4.0, 0.09999999999999998},
      {5.0, kInf, 0.0, 5.0},  {-5.0, kInf, -1.0, kInf}, {5.0, -kInf, -1.0, -kInf},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(float_floordiv(c.a, c.b), c.q) << c.a << " // " << c.b;
    EXPECT_EQ(float_mod(c.a, c.b), c.r) << c.a << " % " << c.b;
  }
  // Signs of zero results follow Python.
  EXPECT_TRUE(std::signbit(float_floordiv(-0.0, 1.0)));
  EXPECT_FALSE(std::signbit(float_mod(-0.0, 1.0)));
  EXPECT_TRUE(std::signbit(float_mod(6.0, -3.0)));
  EXPECT_FALSE(std::signbit(float_mod(-6.0, 3.0)));
  EXPECT_TRUE(std::signbit(float_floordiv(0.0, -1.0)));
  EXPECT_EQ(float_floordiv(1e300, 1e-300), kInf);
  // Zero divisor: IEEE instead of Python's exception.
  EXPECT_EQ(float_floordiv(1.0, 0.0), kInf);
  EXPECT_EQ(float_floordiv(-1.0, 0.0), -kInf);
  EXPECT_TRUE(std::isnan(float_floordiv(0.0, 0.0)));
  EXPECT_TRUE(std::isnan(float_mod(1.0, 0.0)));
  EXPECT_TRUE(std::isnan(float_mod(kInf, 2.0)));
  EXPECT_TRUE(std::isnan(float_floordiv(kInf, 2.0)));
  EXPECT_TRUE(std::isnan(float_mod(kNan, 2.0)));
}

TEST(NumberOps, IntFloatCompareIsExact) {
  const double two53 = 9007199254740992.0;
  EXPECT_EQ(int_float_compare(9007199254740993, two53), 1);  // 2**53+1 > 2.0**53
  EXPECT_EQ(int_float_compare(9007199254740992, two53), 0);
  EXPECT_EQ(int_float_compare(kMax, 9223372036854775808.0), -1);
  EXPECT_EQ(int_float_compare(kMin, -9223372036854775808.0), 0);
  EXPECT_EQ(int_float_compare(kMin, -9223372036854777856.0), 1);
  EXPECT_EQ(int_float_compare(1, 1.5), -1);
  EXPECT_EQ(int_float_compare(2, 1.5), 1);
  EXPECT_EQ(int_float_compare(-1, -1.5), 1);
  EXPECT_EQ(int_float_compare(-2, -1.5), -1);
  EXPECT_EQ(int_float_compare(0, -0.0), 0);
  EXPECT_EQ(int_float_compare(kMax, kInf), -1);
  EXPECT_EQ(int_float_compare(kMin, -kInf), 1);
  EXPECT_EQ(int_float_compare(0, kNan), kCmpUnordered);
  EXPECT_EQ(float_compare(kNan, kNan), kCmpUnordered);
  EXPECT_EQ(float_compare(1.0, 2.0), -1);
  EXPECT_EQ(int_compare(kMin, kMax), -1);
}

}  // namespace
}  // namespace tessera
