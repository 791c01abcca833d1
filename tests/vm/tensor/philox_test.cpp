#include "vm/tensor/philox.h"

#include <cmath>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

// Known-answer vectors of Philox-4x32-10 from the Random123 distribution.
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, 0, 0), (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, RandIsDeterministicAndDocumented) {
  Value a = call("rand", {ilist({4, 5})}, {{"seed", Value::integer(7)}});
  Value b = call("rand", {ilist({4, 5})}, {{"seed", Value::integer(7)}});
  Value c = call("rand", {ilist({4, 5})}, {{"seed", Value::integer(8)}});
  EXPECT_EQ(vals(a), vals(b));
  EXPECT_NE(vals(a), vals(c));
  // Element i = (word 0 of block i) >> 8, scaled by 2^-24.
  std::vector<double> va = vals(a);
  for (size_t i = 0; i < va.size(); ++i) {
    uint32_t w = philox4x32_10({static_cast<uint32_t>(i), 0, 0, 0}, 7, 0)[0];
    EXPECT_EQ(va[i], (w >> 8) / 16777216.0);
    EXPECT_GE(va[i], 0.0);
    EXPECT_LT(va[i], 1.0);
  }
  // Pinned first value for seed 0: block 0 word 0 is 0x6627e8d5.
  Value z = call("rand", {ilist({1})});
  EXPECT_EQ(vals(z)[0], (0x6627e8d5u >> 8) / 16777216.0);
}

TEST(Philox, RandnPairsAndMoments) {
  Value a = call("randn", {ilist({3})}, {{"seed", Value::integer(0)}});
  // Elements 0 and 1 share block 0 (words 0 and 1).
  double u1 = ((0x6627e8d5u >> 8) + 1) / 16777216.0, u2 = (0xe169c58du >> 8) / 16777216.0;
  double r = std::sqrt(-2 * std::log(u1));
  EXPECT_EQ(vals(a)[0], static_cast<float>(r * std::cos(2 * M_PI * u2)));
  EXPECT_EQ(vals(a)[1], static_cast<float>(r * std::sin(2 * M_PI * u2)));
  Value big = call("randn", {ilist({20000})}, {{"seed", Value::integer(123)}});
  double s = 0, ss = 0;
  for (double v : vals(big)) s += v, ss += v * v;
  EXPECT_NEAR(s / 20000, 0.0, 0.03);
  EXPECT_NEAR(ss / 20000, 1.0, 0.05);
  // Same seed and shape -> same values, also in other dtypes (rounded once).
  Value h = call("randn", {ilist({3})}, {{"dtype", Value::dtype(DType::F16)}});
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(vals(h)[i], f16_to_f32(f32_to_f16(static_cast<float>(philox_normal(0, i)))));
  EXPECT_EQ(error_of([] { call("rand", {ilist({2})}, {{"dtype", Value::dtype(DType::I64)}}); }),
            "rand: dtype must be a float dtype, got i64");
}

}  // namespace
}  // namespace tessera
