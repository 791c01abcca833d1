// The CPU emitter (codegen/kernel/cpu/): kernel IR compiled with LLVM and run
// over its grid, against the interpreter's kernels (vm/tensor), which it must
// match bit for bit where it computes the same thing in the same order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel/cpu/cpu_compiler.h"
#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/kernel_text.h"
#include "codegen/kernel/kernel_verify.h"
#include "vm/tensor/dtype.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/vector_math.h"

namespace tessera::kir {
namespace {

CpuKernelCompiler& compiler() {
  static CpuKernelCompiler c;
  return c;
}

std::vector<float> wave(int64_t n, float scale = 2.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.2f);
  return v;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// y = tanh(x * 1.3 + 0.5) over N elements in programs of 256.
Kernel elementwise_kernel() {
  Kernel k;
  k.name = "ew";
  k.dims = {"N"};
  k.params = {Param{"x", Elem::F32, {{0, 0}}, false}, Param{"y", Elem::F32, {{0, 0}}, true}};
  k.grid = {Extent{1, {0}, 256}};
  KernelBuilder b(k);
  ValueId base = b.binary(KOp::Mul, b.program_id(0), b.const_int(256));
  ValueId off = b.binary(KOp::Add, b.splat(base, {256}), b.range(256));
  ValueId in = b.cmp(Pred::Lt, off, b.splat(b.dim(0), {256}));
  ValueId x = b.load(0, off, in);
  ValueId t = b.binary(KOp::Add, b.binary(KOp::Mul, x, b.splat(b.const_float(1.3), {256})),
                       b.splat(b.const_float(0.5), {256}));
  b.store(1, off, b.unary(KOp::Tanh, t), in);
  return k;
}

TEST(CpuKernel, ElementwiseChainEqualsTheInterpretersKernels) {
  Kernel k = elementwise_kernel();
  CompiledKernel ck = compiler().compile(k);
  for (int64_t n : {1, 7, 256, 1000, 4099}) {
    std::vector<float> x = wave(n), y(static_cast<size_t>(n) + 3, -7.0f);
    for (int threads : {1, 0}) {
      launch(k, ck.fn, {x.data(), y.data()}, {n}, threads);
      // The interpreter: x * 1.3, + 0.5, tanh, each an f32 operation.
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) want[i] = x[i] * 1.3f + 0.5f;
      vmath::table().unary(Unary::Tanh, want.data(), want.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(bits(y[i]), bits(want[i])) << "n " << n << " i " << i;
      for (int j = 0; j < 3; ++j) EXPECT_EQ(y[n + j], -7.0f) << "wrote past the end";
    }
  }
  EXPECT_GT(ck.compile_ms, 0.0);
}

TEST(CpuKernel, EveryUnaryFunctionEqualsTheInterpreters) {
  const char* text = R"(kernel @u
  dims N
  in %x : f32[N]
  out %y : f32[N]
  grid [1]
{
  %r = range : tile<40xi64>
  %v = load %x[%r] : tile<40xf32>
  %o = OP %v : tile<40xf32>
  store %y[%r], %o
}
)";
  // Every row of the elementwise table, by its kernel IR name.
  for (int ui = 0; ui < kNumUnary; ++ui) {
    const Unary u = static_cast<Unary>(ui);
    const char* name = unary_op_name(u);
    std::string src = text;
    src.replace(src.find("OP"), 2, name);
    Kernel k = parse(src);
    CompiledKernel ck = compiler().compile(k);
    std::vector<float> x = wave(40), y(40);
    x[3] = -0.0f;
    x[5] = std::numeric_limits<float>::quiet_NaN();
    // Softplus's and erf's large-magnitude branches, exp's overflow.
    x[7] = 95.0f, x[8] = -95.0f, x[9] = std::numeric_limits<float>::infinity();
    if (u == Unary::Log || u == Unary::Sqrt || u == Unary::Rsqrt)
      for (float& v : x) v = std::fabs(v) + 0.25f;
    launch(k, ck.fn, {x.data(), y.data()}, {40});
    std::vector<float> want(40);
    vmath::table().unary(u, x.data(), want.data(), 40);
    for (int i = 0; i < 40; ++i) EXPECT_EQ(bits(y[i]), bits(want[i])) << name << " " << i;
  }
}

// A row sum over a whole tile follows the interpreter's summation order.
TEST(CpuKernel, SumsInTheInterpretersOrder) {
  Kernel k = parse(R"(kernel @rowsum
  dims R
  in %x : f32[R, 3000]
  out %y : f32[R]
  grid [R]
{
  %row = program_id 0 : i64
  %n = const 3000 : i64
  %base = mul %row, %n : i64
  %b = splat %base : tile<3000xi64>
  %r = range : tile<3000xi64>
  %off = add %b, %r : tile<3000xi64>
  %v = load %x[%off] : tile<3000xf32>
  %s = reduce.sum %v, axis 0 : f32
  store %y[%row], %s
}
)");
  CompiledKernel ck = compiler().compile(k);
  std::vector<float> x = wave(2 * 3000, 100.0f), y(2);
  launch(k, ck.fn, {x.data(), y.data()}, {2});
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(bits(y[r]), bits(static_cast<float>(vmath::table().sum(x.data() + r * 3000, 3000)))) << r;
}

TEST(CpuKernel, MaxAndArgmaxKeepTheFirstNaN) {
  Kernel k = parse(R"(kernel @ext
  dims N
  in %x : f32[N]
  out %m : f32[N]
  out %a : i64[N]
  grid [1]
{
  %r = range : tile<37xi64>
  %v = load %x[%r] : tile<37xf32>
  %mx = reduce.max %v, axis 0 : f32
  %am = reduce.argmax %v, axis 0 : i64
  %z = const 0 : i64
  store %m[%z], %mx
  store %a[%z], %am
}
)");
  CompiledKernel ck = compiler().compile(k);
  std::vector<float> x = wave(37), m(1);
  std::vector<int64_t> a(1);
  x[20] = 9.0f;
  x[30] = 9.0f;
  launch(k, ck.fn, {x.data(), m.data(), a.data()}, {37});
  EXPECT_EQ(m[0], 9.0f);
  EXPECT_EQ(a[0], 20);
  x[25] = -std::numeric_limits<float>::quiet_NaN();
  x[33] = std::numeric_limits<float>::quiet_NaN();
  launch(k, ck.fn, {x.data(), m.data(), a.data()}, {37});
  EXPECT_EQ(bits(m[0]), bits(vmath::table().max(x.data(), 37)));
  EXPECT_EQ(a[0], vmath::table().argmax(x.data(), 37));
  EXPECT_EQ(a[0], 25);
}

// Softmax over rows with an online (running max and sum) first pass, the way
// a GPU block does it; equal to the interpreter's up to rounding.
TEST(CpuKernel, OnlineSoftmaxRows) {
  Kernel k = parse(R"(kernel @softmax_rows
  dims N, D
  in %x : f32[N, D]
  out %y : f32[N, D]
  grid [N]
{
  %row = program_id 0 : i64
  %d = dim D : i64
  %base = mul %row, %d : i64
  %zero = const 0 : i64
  %step = const 64 : i64
  %ninf = const -inf : f32
  %fzero = const 0 : f32
  %lanes = range : tile<64xi64>
  %m, %s = for %k = %zero to %d step %step iter(%m0 = %ninf, %s0 = %fzero) {
    %kk = splat %k : tile<64xi64>
    %col = add %kk, %lanes : tile<64xi64>
    %dd = splat %d : tile<64xi64>
    %in = cmp.lt %col, %dd : tile<64xi1>
    %off = add %kk, %lanes : tile<64xi64>
    %bb = splat %base : tile<64xi64>
    %o2 = add %bb, %off : tile<64xi64>
    %pad = splat %ninf : tile<64xf32>
    %v = load %x[%o2], mask %in, other %pad : tile<64xf32>
    %cm = reduce.max %v, axis 0 : f32
    %m1 = max %m0, %cm : f32
    %sh = sub %m0, %m1 : f32
    %sc = exp %sh : f32
    %s1 = mul %s0, %sc : f32
    %mm = splat %m1 : tile<64xf32>
    %dv = sub %v, %mm : tile<64xf32>
    %e = exp %dv : tile<64xf32>
    %cs = reduce.sum %e, axis 0 : f32
    %s2 = add %s1, %cs : f32
    yield %m1, %s2
  }
  for %k2 = %zero to %d step %step {
    %kk2 = splat %k2 : tile<64xi64>
    %col2 = add %kk2, %lanes : tile<64xi64>
    %dd2 = splat %d : tile<64xi64>
    %in2 = cmp.lt %col2, %dd2 : tile<64xi1>
    %bb2 = splat %base : tile<64xi64>
    %off2 = add %bb2, %col2 : tile<64xi64>
    %v2 = load %x[%off2], mask %in2 : tile<64xf32>
    %ms = splat %m : tile<64xf32>
    %d2 = sub %v2, %ms : tile<64xf32>
    %e2 = exp %d2 : tile<64xf32>
    %ss = splat %s : tile<64xf32>
    %p = div %e2, %ss : tile<64xf32>
    store %y[%off2], %p, mask %in2
    yield
  }
}
)");
  CompiledKernel ck = compiler().compile(k);
  const int64_t n = 5, d = 300;
  std::vector<float> x = wave(n * d, 4.0f), y(n * d);
  launch(k, ck.fn, {x.data(), y.data()}, {n, d});
  for (int64_t r = 0; r < n; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < d; ++c) mx = std::max(mx, double(x[r * d + c]));
    for (int64_t c = 0; c < d; ++c) sum += std::exp(x[r * d + c] - mx);
    for (int64_t c = 0; c < d; ++c) EXPECT_NEAR(y[r * d + c], std::exp(x[r * d + c] - mx) / sum, 2e-7) << r << " " << c;
  }
}

// Gathers (non-unit strides), masked loads with `other`, half-precision
// loads and stores with casts, and a dot of micro-tiles.
TEST(CpuKernel, StridedHalfPrecisionAndDot) {
  Kernel k = parse(R"(kernel @mix
  dims N
  in %a : f32[N]
  in %h : bf16[N]
  out %o : f16[N]
  out %c : f32[N]
  grid [1]
{
  %r = range : tile<8xi64>
  %three = const 3 : i64
  %t3 = splat %three : tile<8xi64>
  %off = mul %r, %t3 : tile<8xi64>
  %lim = const 20 : i64
  %tl = splat %lim : tile<8xi64>
  %in = cmp.lt %off, %tl : tile<8xi1>
  %nine = const 9 : f32
  %other = splat %nine : tile<8xf32>
  %g = load %a[%off], mask %in, other %other : tile<8xf32>
  %hb = load %h[%r] : tile<8xbf16>
  %hf = cast %hb : tile<8xf32>
  %sum = add %g, %hf : tile<8xf32>
  %half = cast %sum : tile<8xf16>
  store %o[%r], %half
  %row = broadcast %hf, axis 0 : tile<2x8xf32>
  %col = trans %row : tile<8x2xf32>
  %z = const 0 : f32
  %acc = splat %z : tile<2x2xf32>
  %p = dot %row, %col, %acc : tile<2x2xf32>
  %r4 = range : tile<4xi64>
  %p1 = reduce.sum %p, axis 1 : tile<2xf32>
  %r2 = range : tile<2xi64>
  store %c[%r2], %p1
}
)");
  CompiledKernel ck = compiler().compile(k);
  std::vector<float> a = wave(24);
  std::vector<uint16_t> h(8), o(8);
  for (int i = 0; i < 8; ++i) h[i] = f32_to_bf16(0.5f * static_cast<float>(i) - 1.25f);
  std::vector<float> c(2);
  launch(k, ck.fn, {a.data(), h.data(), o.data(), c.data()}, {24});
  float dotv = 0;
  for (int i = 0; i < 8; ++i) {
    const float g = 3 * i < 20 ? a[3 * i] : 9.0f;
    EXPECT_EQ(o[i], f32_to_f16(g + bf16_to_f32(h[i]))) << i;
    dotv += bf16_to_f32(h[i]) * bf16_to_f32(h[i]);
  }
  EXPECT_FLOAT_EQ(c[0], 2 * dotv);
  EXPECT_FLOAT_EQ(c[1], 2 * dotv);
}

TEST(CpuKernel, IntegerIndexMathNeverTraps) {
  Kernel k = parse(R"(kernel @idx
  dims N
  in %x : i64[N]
  out %q : i64[N]
  out %m : i64[N]
  grid [1]
{
  %r = range : tile<4xi64>
  %v = load %x[%r] : tile<4xi64>
  %t = const 7 : i64
  %s = splat %t : tile<4xi64>
  %d = div %s, %v : tile<4xi64>
  %e = rem %s, %v : tile<4xi64>
  store %q[%r], %d
  store %m[%r], %e
}
)");
  CompiledKernel ck = compiler().compile(k);
  std::vector<int64_t> x = {2, 0, -1, 3}, q(4), m(4);
  launch(k, ck.fn, {x.data(), q.data(), m.data()}, {4});
  EXPECT_EQ(q, (std::vector<int64_t>{3, 0, -7, 2}));
  EXPECT_EQ(m, (std::vector<int64_t>{1, 0, 0, 1}));
}

// Reductions of 1-D tiles of every size, folded strip by strip in a run's
// loop: sums (f32, and f64 not rounded), max, min and argmax equal the
// interpreter's primitives bit for bit, with NaNs, infinities and zeros of
// both signs where the first in element order must win.
TEST(CpuKernel, StripReductionsOfEverySizeEqualTheInterpreters) {
  const char* text = R"(kernel @red
  dims N
  in %x : f32[N]
  out %s : f32[N]
  out %d : f64[N]
  out %mx : f32[N]
  out %mn : f32[N]
  out %am : i64[N]
  grid [1]
{
  %r = range : tile<SIZExi64>
  %n = dim N : i64
  %nn = splat %n : tile<SIZExi64>
  %in = cmp.lt %r, %nn : tile<SIZExi1>
  %v = load %x[%r], mask %in : tile<SIZExf32>
  %two = const 2 : f32
  %tt = splat %two : tile<SIZExf32>
  %w = mul %v, %tt : tile<SIZExf32>
  %sum = reduce.sum %w, axis 0 : f32
  %dsum = reduce.sum %w, axis 0 : f64
  %max = reduce.max %v, axis 0 : f32
  %min = reduce.min %v, axis 0 : f32
  %arg = reduce.argmax %v, axis 0 : i64
  %z = const 0 : i64
  store %s[%z], %sum
  store %d[%z], %dsum
  store %mx[%z], %max
  store %mn[%z], %min
  store %am[%z], %arg
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 3, 8, 16, 17, 100, 1023, 1024, 1025, 2048, 3001}) {
    std::string src = text;
    for (size_t at; (at = src.find("SIZE")) != std::string::npos;) src.replace(at, 4, std::to_string(n));
    Kernel k = parse(src);
    CompiledKernel ck = compiler().compile(k);
    for (int variant = 0; variant < 5; ++variant) {
      std::vector<float> x = wave(n, 50.0f);
      if (variant == 1)  // zeros of both signs as the extremes, -0 first in element order
        for (int64_t i = 0; i < n; ++i) x[i] = i % 5 == 3 ? -0.0f : i % 7 == 2 ? 0.0f : -1.0f - static_cast<float>(i % 3);
      if (variant == 2 && n > 2) x[n / 2] = -nan, x[n - 1] = nan;
      if (variant == 3) x.assign(static_cast<size_t>(n), -inf);
      if (variant == 4)
        for (int64_t i = 0; i < n; ++i) x[i] = i % 9 == 4 ? 0.0f : i % 9 == 1 ? -0.0f : 1.0f + static_cast<float>(i % 4);
      float s = 0, mx = 0, mn = 0;
      double d = 0;
      int64_t am = -1;
      launch(k, ck.fn, {x.data(), &s, &d, &mx, &mn, &am}, {n});
      std::vector<float> w(x);
      for (float& e : w) e *= 2.0f;
      const vmath::Table& t = vmath::table();
      // The same bits; NaNs only as NaNs (which NaN an addition keeps is
      // the compiler's choice, and printing shows every NaN as `nan`).
      auto same = [](double a, double b) { return (a != a && b != b) || std::memcmp(&a, &b, sizeof a) == 0; };
      auto same_f = [](float a, float b) { return (a != a && b != b) || bits(a) == bits(b); };
      EXPECT_TRUE(same(d, t.sum(w.data(), n))) << "n " << n << " variant " << variant;
      EXPECT_TRUE(same_f(s, static_cast<float>(t.sum(w.data(), n)))) << "n " << n << " variant " << variant;
      EXPECT_TRUE(same_f(mx, t.max(x.data(), n))) << "n " << n << " variant " << variant;
      EXPECT_TRUE(same_f(mn, t.min(x.data(), n))) << "n " << n << " variant " << variant;
      EXPECT_EQ(am, t.argmax(x.data(), n)) << "n " << n << " variant " << variant;
    }
  }
}

// The interpreter's max and min give the first extreme in element order:
// of +0 and -0 the one that comes first, whatever lane the SIMD code put it in.
TEST(CpuKernel, InterpreterExtremesAreTheFirstInElementOrder) {
  std::vector<float> x(40, -3.0f);
  x[1] = 0.0f;   // lane 1
  x[8] = -0.0f;  // lane 0 of the second vector
  EXPECT_EQ(bits(vmath::table().max(x.data(), 40)), bits(0.0f));
  x[1] = -0.0f;
  x[8] = 0.0f;
  EXPECT_EQ(bits(vmath::table().max(x.data(), 40)), bits(-0.0f));
  std::vector<float> y(40, 3.0f);
  y[9] = -0.0f;
  y[2] = 0.0f;
  EXPECT_EQ(bits(vmath::table().min(y.data(), 40)), bits(0.0f));
  EXPECT_EQ(vmath::table().argmax(x.data(), 40), 1);
}

// An f32 dot is the interpreter's micro-kernel (vector-math `dot`), bit for
// bit: attention's tiles computed by a kernel equal the interpreter's.
TEST(CpuKernel, DotIsTheInterpretersMicroKernel) {
  Kernel d;
  d.name = "dot";
  d.dims = {"N"};
  d.params = {Param{"a", Elem::F32, {{0, 0}}, false}, Param{"b", Elem::F32, {{0, 0}}, false},
              Param{"c", Elem::F32, {{0, 0}}, false}, Param{"y", Elem::F32, {{0, 0}}, true}};
  d.grid = {Extent{1, {}, 1}};
  KernelBuilder b(d);
  // A [rows, cols] tile of a param at offsets i * cols + j (row and column
  // indices broadcast to the tile's shape).
  auto tile2d = [&](int param, int64_t rows, int64_t cols) {
    ValueId ri = b.broadcast(b.range(rows), 1, cols);                      // [rows, cols]: i
    ValueId cj = b.broadcast(b.range(cols), 0, rows);                      // [rows, cols]: j
    ValueId off = b.binary(KOp::Add, b.binary(KOp::Mul, ri, b.splat(b.const_int(cols), {rows, cols})), cj);
    return std::make_pair(b.load(param, off), off);
  };
  auto [ta, oa] = tile2d(0, 5, 7);
  auto [tb, ob] = tile2d(1, 7, 9);
  auto [tc, oc] = tile2d(2, 5, 9);
  (void)oa;
  (void)ob;
  b.store(3, oc, b.dot(ta, tb, tc));
  CompiledKernel ck = compiler().compile(d);
  std::vector<float> av = wave(35, 1.3f), bv = wave(63, 0.7f), cv = wave(45, 0.2f), y(45);
  launch(d, ck.fn, {av.data(), bv.data(), cv.data(), y.data()}, {64});
  std::vector<float> want = cv;
  vmath::table().dot(5, 9, 7, av.data(), bv.data(), want.data());
  for (int i = 0; i < 45; ++i) EXPECT_EQ(bits(y[i]), bits(want[i])) << i;
}

// load_block: a block of a row-major matrix (with a row stride wider than
// its columns, at an element offset), as it is and transposed, zero outside
// the matrix's rows and columns, at blocks that cross its edges.
TEST(CpuKernel, BlockLoadsAreZeroOutsideTheMatrix) {
  constexpr int64_t R = 8, C = 12, kStride = 16, kBase = 5, kRows = 4, kCols = 8;
  Kernel k;
  k.name = "blocks";
  k.dims = {"r0", "c0"};
  k.params = {Param{"m", Elem::F32, {{-1, kBase + R * kStride}}, false},
              Param{"a", Elem::F32, {{-1, kRows * kCols}}, true}, Param{"t", Elem::F32, {{-1, kCols * kRows}}, true}};
  k.grid = {Extent{}};
  KernelBuilder b(k);
  const ValueId base = b.const_int(kBase), nr = b.const_int(R), nc = b.const_int(C), st = b.const_int(kStride);
  // Flat offsets i * cols + j of a [rows, cols] tile.
  auto flat = [&](int64_t rows, int64_t cols) {
    return b.binary(KOp::Add, b.binary(KOp::Mul, b.broadcast(b.range(rows), 1, cols), b.splat(b.const_int(cols), {rows, cols})),
                    b.broadcast(b.range(cols), 0, rows));
  };
  b.store(1, flat(kRows, kCols), b.load_block(0, base, b.dim(0), b.dim(1), nr, nc, st, kRows, kCols));
  b.store(2, flat(kCols, kRows), b.load_block(0, base, b.dim(0), b.dim(1), nr, nc, st, kCols, kRows, true));
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  CompiledKernel ck = compiler().compile(k);
  std::vector<float> m(static_cast<size_t>(kBase + R * kStride));
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i) + 0.5f;
  for (auto [r0, c0] : {std::pair<int64_t, int64_t>{0, 0}, {6, 7}, {2, 10}, {9, 0}}) {
    std::vector<float> a(kRows * kCols, -1.0f), t(kCols * kRows, -1.0f);
    launch(k, ck.fn, {m.data(), a.data(), t.data()}, {r0, c0}, 1);
    auto want = [&](int64_t r, int64_t c) { return r < R && c < C ? m[static_cast<size_t>(kBase + r * kStride + c)] : 0.0f; };
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kCols; ++j) {
        EXPECT_EQ(a[static_cast<size_t>(i * kCols + j)], want(r0 + i, c0 + j)) << r0 << "," << c0 << " (" << i << "," << j << ")";
        EXPECT_EQ(t[static_cast<size_t>(j * kRows + i)], want(r0 + i, c0 + j)) << r0 << "," << c0 << " transposed";
      }
  }
}

TEST(CpuKernel, WhatTheEmitterDoesNotDoIsAClearError) {
  Kernel k = parse(R"(kernel @h
  dims N
  in %x : f16[N]
  out %y : f16[N]
  grid [1]
{
  %r = range : tile<8xi64>
  %v = load %x[%r] : tile<8xf16>
  %e = exp %v : tile<8xf16>
  store %y[%r], %e
}
)");
  try {
    compiler().compile(k);
    FAIL() << "compiled exp on f16";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cpu emitter: kernel @h: exp on f16: cast to f32 first");
  }
  Kernel bad = parse("kernel @b\n  grid [1]\n{\n  %p = program_id 2 : i64\n}\n");
  EXPECT_THROW(compiler().compile(bad), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kir
