// The interpreter's kernels that split work across cores (parallel_rows.h):
// on tensors large enough to be split, every element equals what the same
// kernel computes on a piece too small to be split (one row, one range).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "vm/tensor/kernels.h"
#include "vm/tensor/parallel_rows.h"

namespace tessera {
namespace {

Value wave(Shape shape, double phase) {
  Value v = make_tensor(DType::F32, std::move(shape));
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, 2.0 * std::sin(0.013 * static_cast<double>(i) + phase));
  return v;
}

// Rows [r, r + 1) of a [rows, cols] f32 tensor as a tensor of its own.
Value row_of(const Value& v, int64_t r) {
  const TensorObj& t = *v.as_tensor();
  const int64_t cols = t.shape.back();
  Value out = make_tensor(DType::F32, {1, cols});
  std::memcpy(out.as_tensor()->data(), static_cast<const float*>(t.data()) + r * cols, static_cast<size_t>(cols) * 4);
  return out;
}

bool row_equals(const Value& big, int64_t r, const Value& small) {
  const int64_t cols = small.as_tensor()->numel;
  return std::memcmp(static_cast<const float*>(big.as_tensor()->data()) + r * cols, small.as_tensor()->data(),
                     static_cast<size_t>(cols) * 4) == 0;
}

constexpr int64_t kRows = 300, kCols = 1000;  // 300,000 elements: split
static_assert(kRows * kCols >= 4 * kParallelMinElements);

TEST(ParallelRows, SoftmaxAndNormsEqualTheirOneRowResults) {
  const Value x = wave({kRows, kCols}, 0.3), w = wave({kCols}, 1.1), b = wave({kCols}, 2.3);
  Value sm = make_tensor(DType::F32, {kRows, kCols}), ln = make_tensor(DType::F32, {kRows, kCols});
  Value rn = make_tensor(DType::F32, {kRows, kCols});
  softmax_kernel(*x.as_tensor(), 1, *sm.as_tensor());
  layer_norm_kernel(*x.as_tensor(), w.as_tensor(), b.as_tensor(), 1e-5, *ln.as_tensor());
  rms_norm_kernel(*x.as_tensor(), w.as_tensor(), 1e-5, *rn.as_tensor());
  for (int64_t r : {0, 1, 77, 150, 299}) {
    const Value row = row_of(x, r);
    Value s1 = make_tensor(DType::F32, {1, kCols}), l1 = make_tensor(DType::F32, {1, kCols});
    Value r1 = make_tensor(DType::F32, {1, kCols});
    softmax_kernel(*row.as_tensor(), 1, *s1.as_tensor());
    layer_norm_kernel(*row.as_tensor(), w.as_tensor(), b.as_tensor(), 1e-5, *l1.as_tensor());
    rms_norm_kernel(*row.as_tensor(), w.as_tensor(), 1e-5, *r1.as_tensor());
    EXPECT_TRUE(row_equals(sm, r, s1)) << "softmax row " << r;
    EXPECT_TRUE(row_equals(ln, r, l1)) << "layer_norm row " << r;
    EXPECT_TRUE(row_equals(rn, r, r1)) << "rms_norm row " << r;
  }
}

TEST(ParallelRows, ElementwiseRangesEqualSmallPieces) {
  const int64_t n = kRows * kCols;
  const Value x = wave({n}, 0.7), y = wave({n}, 1.9);
  Value u = make_tensor(DType::F32, {n}), s = make_tensor(DType::F32, {n}), c = make_tensor(DType::F32, {n});
  unary_kernel(Unary::Tanh, *x.as_tensor(), *u.as_tensor());
  binary_kernel(Binary::Pow, x, y, *s.as_tensor());
  binary_kernel(Binary::Mul, x, Value::number(1.3), *c.as_tensor());
  // Odd-sized pieces at odd offsets: each element must not depend on where a range starts.
  for (int64_t at : {int64_t{0}, int64_t{13}, n / 2 + 5, n - 999}) {
    const int64_t len = std::min<int64_t>(999, n - at);
    Value xs = make_tensor(DType::F32, {len}), ys = make_tensor(DType::F32, {len});
    std::memcpy(xs.as_tensor()->data(), static_cast<const float*>(x.as_tensor()->data()) + at, static_cast<size_t>(len) * 4);
    std::memcpy(ys.as_tensor()->data(), static_cast<const float*>(y.as_tensor()->data()) + at, static_cast<size_t>(len) * 4);
    Value u1 = make_tensor(DType::F32, {len}), s1 = make_tensor(DType::F32, {len}), c1 = make_tensor(DType::F32, {len});
    unary_kernel(Unary::Tanh, *xs.as_tensor(), *u1.as_tensor());
    binary_kernel(Binary::Pow, xs, ys, *s1.as_tensor());
    binary_kernel(Binary::Mul, xs, Value::number(1.3), *c1.as_tensor());
    auto same = [&](const Value& big, const Value& small) {
      return std::memcmp(static_cast<const float*>(big.as_tensor()->data()) + at, small.as_tensor()->data(),
                         static_cast<size_t>(len) * 4) == 0;
    };
    EXPECT_TRUE(same(u, u1)) << "tanh at " << at;
    EXPECT_TRUE(same(s, s1)) << "pow at " << at;
    EXPECT_TRUE(same(c, c1)) << "mul at " << at;
  }
}

}  // namespace
}  // namespace tessera
