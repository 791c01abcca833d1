// The vectorized f32 primitives (vm/tensor/vector_math.h): each build (AVX-512
// and AVX2 where the CPU has them, SSE2 always) against a double-precision reference,
// at lengths that leave every tail size, with the NaN, -0 and tie rules the
// reference kernels have.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "vm/tensor/broadcast.h"
#include "vm/tensor/vector_math.h"

namespace tessera {
namespace {

std::vector<const vmath::Table*> builds() {
  std::vector<const vmath::Table*> t{&vmath::sse2_table()};
  if (vmath::cpu_has_avx2()) t.push_back(&vmath::avx2_table());
  if (vmath::cpu_has_avx512()) t.push_back(&vmath::avx512_table());
  return t;
}

std::vector<float> wave(int64_t n, float scale = 3.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}

double ref_unary(Unary op, double x) {
  switch (op) {
    case Unary::Neg: return -x;
    case Unary::Abs: return std::fabs(x);
    case Unary::Exp: return std::exp(x);
    case Unary::Log: return std::log(x);
    case Unary::Sqrt: return std::sqrt(x);
    case Unary::Rsqrt: return 1.0 / std::sqrt(x);
    case Unary::Tanh: return std::tanh(x);
    case Unary::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Unary::Relu: return x > 0 ? x : 0.0;
    case Unary::Gelu: return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
    case Unary::Silu: return x / (1.0 + std::exp(-x));
    case Unary::Sin: return std::sin(x);
    case Unary::Cos: return std::cos(x);
    case Unary::Softplus: return std::log1p(std::exp(x));  // the textbook form: |x| <= 3 here
    case Unary::Erf: return std::erf(x);
  }
  return 0;
}

bool needs_positive(Unary op) { return op == Unary::Log || op == Unary::Sqrt || op == Unary::Rsqrt; }

TEST(VectorMath, UnaryMatchesDoubleReferenceAtEveryTailLength) {
  for (const vmath::Table* vm : builds())
    for (int op = 0; op < kNumUnary; ++op)
      for (int64_t n : {1, 3, 4, 7, 8, 9, 17, 100}) {
        auto u = static_cast<Unary>(op);
        std::vector<float> x = wave(n);
        if (needs_positive(u))
          for (float& v : x) v = std::fabs(v) + 0.5f;
        std::vector<float> out(static_cast<size_t>(n), -1.0f);
        vm->unary(u, x.data(), out.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const double want = ref_unary(u, x[i]);
          EXPECT_NEAR(out[i], want, 4e-7 * std::max(1.0, std::fabs(want)))
              << vm->isa << " op " << op << " n " << n << " i " << i;
        }
      }
}

// SLEEF's vector sin and cos take a slower path for the whole vector when
// one lane is 125 or more, or NaN, which may round the other lanes
// differently: the primitives make each lane's result its own, whatever
// its neighbours (a kernel's tiles group the elements otherwise). 7.615268
// is such a value: the two paths differ in its last bit.
TEST(VectorMath, SinAndCosOfAnElementDoNotDependOnItsNeighbours) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const vmath::Table* vm : builds())
    for (Unary u : {Unary::Sin, Unary::Cos})
      for (float x : {7.615268f, 0.5f, -3.25f, 124.9f, 125.0f, 300.0f, 1.0e6f}) {
        float alone = 0;
        vm->unary(u, &x, &alone, 1);
        for (float neighbour : {0.0f, x, 200.0f, -5000.0f, nan, std::numeric_limits<float>::infinity()}) {
          std::vector<float> in(37, neighbour), out(37);
          for (size_t i : {0u, 5u, 16u, 36u}) in[i] = x;
          vm->unary(u, in.data(), out.data(), 37);
          for (size_t i : {0u, 5u, 16u, 36u})
            EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(alone))
                << vm->isa << " op " << static_cast<int>(u) << " x " << x << " neighbour " << neighbour << " at " << i;
        }
      }
}

TEST(VectorMath, ReluSendsNegativeZeroToZeroAndKeepsNaN) {
  for (const vmath::Table* vm : builds()) {
    float x[3] = {-0.0f, std::numeric_limits<float>::quiet_NaN(), -2.0f}, out[3];
    vm->unary(Unary::Relu, x, out, 3);
    EXPECT_FALSE(std::signbit(out[0])) << vm->isa;
    EXPECT_TRUE(std::isnan(out[1])) << vm->isa;
    EXPECT_EQ(out[2], 0.0f) << vm->isa;
  }
}

TEST(VectorMath, BinaryWithScalarOperandsAndNaNPropagatingMinMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const vmath::Table* vm : builds()) {
    std::vector<float> a = wave(13), b = wave(13, 2.0f), out(13);
    const float two = 2.0f;
    vm->binary(Binary::Sub, a.data(), false, &two, true, out.data(), 13);
    for (int i = 0; i < 13; ++i) EXPECT_EQ(out[i], a[i] - 2.0f) << vm->isa;
    vm->binary(Binary::Div, &two, true, b.data(), false, out.data(), 13);
    for (int i = 0; i < 13; ++i) EXPECT_EQ(out[i], 2.0f / b[i]) << vm->isa;
    a[5] = nan;
    b[9] = nan;
    vm->binary(Binary::Max, a.data(), false, b.data(), false, out.data(), 13);
    for (int i = 0; i < 13; ++i) {
      if (i == 5 || i == 9) EXPECT_TRUE(std::isnan(out[i])) << vm->isa << " " << i;
      else EXPECT_EQ(out[i], std::max(a[i], b[i])) << vm->isa << " " << i;
    }
  }
}

// A broadcast scalar keeps its sign of zero: -0.5 * -0.0 is +0.0 in every
// lane, the whole vectors' included (the differential fuzzer found the
// splat turning -0.0 into +0.0 on arrays of 8 elements and more).
TEST(VectorMath, ScalarOperandKeepsTheSignOfZero) {
  for (const vmath::Table* vm : builds()) {
    std::vector<float> a(19, -0.5f), out(19);
    const float nz = -0.0f;
    vm->binary(Binary::Mul, a.data(), false, &nz, true, out.data(), 19);
    for (int i = 0; i < 19; ++i) EXPECT_FALSE(std::signbit(out[i])) << vm->isa << " " << i;
    vm->binary(Binary::Mul, &nz, true, a.data(), false, out.data(), 19);
    for (int i = 0; i < 19; ++i) EXPECT_FALSE(std::signbit(out[i])) << vm->isa << " " << i;
    vm->binary(Binary::Add, &nz, true, &nz, true, out.data(), 19);  // -0.0 + -0.0 is -0.0
    for (int i = 0; i < 19; ++i) EXPECT_TRUE(std::signbit(out[i])) << vm->isa << " " << i;
  }
}

TEST(VectorMath, ComparisonsGiveBytes) {
  for (const vmath::Table* vm : builds()) {
    std::vector<float> a = wave(11);
    const float zero = 0.0f;
    std::vector<uint8_t> out(11, 7);
    vm->compare(Binary::Ge, a.data(), false, &zero, true, out.data(), 11);
    for (int i = 0; i < 11; ++i) EXPECT_EQ(out[i], a[i] >= 0.0f ? 1 : 0) << vm->isa;
  }
}

TEST(VectorMath, SumsAreAccurateOverManyBlocks) {
  for (const vmath::Table* vm : builds()) {
    const int64_t n = 100003;
    std::vector<float> x = wave(n);
    double want = 0, want_sq = 0, want_dev = 0;
    for (float v : x) want += v, want_sq += double(v) * v, want_dev += (v - 0.25) * (v - 0.25);
    EXPECT_NEAR(vm->sum(x.data(), n), want, 1e-6 * n) << vm->isa;
    EXPECT_NEAR(vm->sum_squares(x.data(), n), want_sq, 1e-6 * want_sq) << vm->isa;
    EXPECT_NEAR(vm->sum_sq_dev(x.data(), 0.25f, n), want_dev, 1e-6 * want_dev) << vm->isa;
    EXPECT_EQ(vm->sum(x.data(), 0), 0.0) << vm->isa;
  }
}

// Every build sums in the one documented order (element i of a block of
// 1024 into f32 lane i % 16, lanes in order in double, blocks in double),
// each term rounded on its own: a square or a deviation is not fused into
// the addition (an FMA would change the bits; generated kernels do not fuse).
TEST(VectorMath, SumsOfSquaresFollowTheOrderWithoutFusedMultiplyAdd) {
  auto reference = [](const std::vector<float>& x, auto term) {
    double total = 0;
    for (size_t start = 0; start < x.size(); start += 1024) {
      float lanes[16] = {};
      for (size_t i = start; i < std::min(x.size(), start + 1024); ++i) {
        volatile float t = term(x[i]);  // rounded to f32 before the addition
        lanes[(i - start) % 16] += t;
      }
      double s = 0;
      for (float l : lanes) s += l;
      total += s;
    }
    return total;
  };
  for (const vmath::Table* vm : builds())
    for (int64_t n : {5, 16, 1000, 1024, 3001}) {
      std::vector<float> x = wave(n, 1.7f);
      const float c = 0.3137f;
      EXPECT_EQ(vm->sum_squares(x.data(), n), reference(x, [](float v) { return v * v; })) << vm->isa << " " << n;
      EXPECT_EQ(vm->sum_sq_dev(x.data(), c, n), reference(x, [c](float v) {
                  volatile float d = v - c;
                  return d * d;
                })) << vm->isa << " " << n;
    }
}

// The matrix micro-kernel: c += a b with each product rounded and the
// products added in order of k, the same bits in every build, at sizes with
// partial row groups and column vectors.
TEST(VectorMath, DotAddsRoundedProductsInOrder) {
  for (auto [m, n, kk] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 64}, {5, 37, 9}, {1, 1, 1}, {7, 80, 3}}) {
    std::vector<float> a = wave(m * kk, 1.3f), b = wave(kk * n, 0.7f), c0 = wave(m * n, 0.2f);
    std::vector<float> want = c0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < kk; ++k) {
          volatile float p = a[i * kk + k] * b[k * n + j];  // rounded before the addition
          want[i * n + j] += p;
        }
    for (const vmath::Table* vm : builds()) {
      std::vector<float> c = c0;
      vm->dot(m, n, kk, a.data(), b.data(), c.data());
      EXPECT_EQ(c, want) << vm->isa << " " << m << "x" << n << "x" << kk;
    }
  }
}

TEST(VectorMath, MaxMinArgmaxFollowTheReferenceRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const vmath::Table* vm : builds()) {
    std::vector<float> x = wave(37);
    x[20] = 9.0f;
    x[30] = 9.0f;  // a tie: the first index wins
    EXPECT_EQ(vm->max(x.data(), 37), 9.0f);
    EXPECT_EQ(vm->argmax(x.data(), 37), 20);
    x[33] = -9.0f;
    EXPECT_EQ(vm->min(x.data(), 37), -9.0f);
    // A NaN wins max/min and argmax points at the first one.
    x[25] = nan;
    x[35] = -nan;
    EXPECT_TRUE(std::isnan(vm->max(x.data(), 37)));
    EXPECT_FALSE(std::signbit(vm->min(x.data(), 37))) << "the first NaN is returned, sign included";
    EXPECT_EQ(vm->argmax(x.data(), 37), 25) << vm->isa;
    EXPECT_EQ(vm->argmax(x.data(), 1), 0);
  }
}

TEST(VectorMath, ExpShiftedAndColumnAccumulators) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const vmath::Table* vm : builds()) {
    std::vector<float> x = wave(19), out(19);
    double s = vm->exp_shifted(x.data(), 3.0f, out.data(), 19), want = 0;
    for (int i = 0; i < 19; ++i) {
      EXPECT_NEAR(out[i], std::exp(x[i] - 3.0), 1e-6);
      want += out[i];
    }
    EXPECT_NEAR(s, want, 1e-6 * want);  // f32 lanes, added in double
    std::vector<double> acc(19, 1.0);
    vm->accumulate(acc.data(), x.data(), 19);
    for (int i = 0; i < 19; ++i) EXPECT_EQ(acc[i], 1.0 + x[i]);
    std::vector<float> best = wave(19, -1.0f);
    const std::vector<float> before = best;
    best[3] = nan;  // stays NaN
    x[4] = nan;     // becomes NaN
    vm->max_into(best.data(), x.data(), 19);
    for (int i = 0; i < 19; ++i) {
      if (i == 3 || i == 4) EXPECT_TRUE(std::isnan(best[i])) << vm->isa << " " << i;
      else EXPECT_EQ(best[i], std::max(x[i], before[i])) << vm->isa << " " << i;
    }
  }
}

// for_each_row merges the dims every input can merge: equal shapes are one
// row, a broadcast row vector keeps rows of the last dim.
TEST(VectorMath, RowWalkMergesDims) {
  std::vector<std::string> calls;
  auto walk = [&](const Shape& out, const Shape& a, const Shape& b) {
    calls.clear();
    Shape sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
    for_each_row<2>(out, {&sa, &sb}, [&](int64_t o, int64_t len, int64_t oa, int64_t ob, int64_t ia, int64_t ib) {
      calls.push_back(std::to_string(o) + ":" + std::to_string(len) + ":" + std::to_string(oa) + "/" +
                      std::to_string(ia) + ":" + std::to_string(ob) + "/" + std::to_string(ib));
    });
  };
  walk({2, 3, 4}, {2, 3, 4}, {2, 3, 4});
  EXPECT_EQ(calls, (std::vector<std::string>{"0:24:0/1:0/1"}));
  walk({2, 3}, {2, 3}, {3});
  EXPECT_EQ(calls, (std::vector<std::string>{"0:3:0/1:0/1", "3:3:3/1:0/1"}));
  walk({2, 3}, {2, 1}, {});
  EXPECT_EQ(calls, (std::vector<std::string>{"0:3:0/0:0/0", "3:3:1/0:0/0"}));
  walk({}, {}, {});
  EXPECT_EQ(calls, (std::vector<std::string>{"0:1:0/0:0/0"}));
  walk({2, 1, 3}, {2, 1, 3}, {1, 1, 1});
  EXPECT_EQ(calls, (std::vector<std::string>{"0:6:0/1:0/0"}));
  walk({0, 3}, {0, 3}, {3});
  EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace tessera
