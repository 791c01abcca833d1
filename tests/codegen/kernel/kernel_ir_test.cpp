// The kernel IR (codegen/kernel/): text in, text out; the builder; what the
// verifier refuses and what the parser reports.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel/kernel_text.h"
#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir {
namespace {

// Softmax over rows of [N, D] as a K2 kernel: one program per row, the row
// walked in chunks of 256 twice (running max and sum, then the output).
const char* kSoftmaxRows = R"(kernel @softmax_rows
  dims N, D
  in %x : f32[N, D]
  out %y : f32[N, D]
  grid [N]
{
  %row = program_id 0 : i64
  %d = dim D : i64
  %base = mul %row, %d : i64
  %zero = const 0 : i64
  %step = const 256 : i64
  %ninf = const -inf : f32
  %fzero = const 0 : f32
  %lanes = range : tile<256xi64>
  %m, %s = for %k = %zero to %d step %step iter(%m0 = %ninf, %s0 = %fzero) {
    %kk = splat %k : tile<256xi64>
    %col = add %kk, %lanes : tile<256xi64>
    %dd = splat %d : tile<256xi64>
    %in = cmp.lt %col, %dd : tile<256xi1>
    %bb = splat %base : tile<256xi64>
    %off = add %bb, %col : tile<256xi64>
    %pad = splat %ninf : tile<256xf32>
    %v = load %x[%off], mask %in, other %pad : tile<256xf32>
    %cm = reduce.max %v, axis 0 : f32
    %m1 = max %m0, %cm : f32
    %sh = sub %m0, %m1 : f32
    %sc = exp %sh : f32
    %s1 = mul %s0, %sc : f32
    %mm = splat %m1 : tile<256xf32>
    %dv = sub %v, %mm : tile<256xf32>
    %e = exp %dv : tile<256xf32>
    %cs = reduce.sum %e, axis 0 : f32
    %s2 = add %s1, %cs : f32
    yield %m1, %s2
  }
  for %k2 = %zero to %d step %step {
    %kk2 = splat %k2 : tile<256xi64>
    %col2 = add %kk2, %lanes : tile<256xi64>
    %dd2 = splat %d : tile<256xi64>
    %in2 = cmp.lt %col2, %dd2 : tile<256xi1>
    %bb2 = splat %base : tile<256xi64>
    %off2 = add %bb2, %col2 : tile<256xi64>
    %v2 = load %x[%off2], mask %in2 : tile<256xf32>
    %ms = splat %m : tile<256xf32>
    %d2 = sub %v2, %ms : tile<256xf32>
    %e2 = exp %d2 : tile<256xf32>
    %ss = splat %s : tile<256xf32>
    %p = div %e2, %ss : tile<256xf32>
    store %y[%off2], %p, mask %in2
    yield
  }
}
)";

// One step of attention as a GPU block would run it: a 64-row query tile
// against a 64-key tile, scores by a dot with the transposed keys, an online
// softmax update, and the value dot. Dims fixed: a K3 kernel.
const char* kAttentionStep = R"(kernel @attention_step
  dims S=256, D=64
  in %q : f16[S, D]
  in %k : f16[S, D]
  out %o : f32[S, D]
  grid [cdiv(S, 64), 2*S]
{
  %qb = program_id 0 : i64
  %rows = range : tile<64xi64>
  %cols = range : tile<64xi64>
  %r2 = broadcast %rows, axis 1 : tile<64x64xi64>
  %c2 = broadcast %cols, axis 0 : tile<64x64xi64>
  %dd = dim D : i64
  %d2 = splat %dd : tile<64x64xi64>
  %ro = mul %r2, %d2 : tile<64x64xi64>
  %off = add %ro, %c2 : tile<64x64xi64>
  %qt = load %q[%off] : tile<64x64xf16>
  %kt = load %k[%off] : tile<64x64xf16>
  %ktt = trans %kt : tile<64x64xf16>
  %z = const 0 : f32
  %acc0 = splat %z : tile<64x64xf32>
  %sc = dot %qt, %ktt, %acc0 : tile<64x64xf32>
  %mx = reduce.max %sc, axis 1 : tile<64xf32>
  %arg = reduce.argmax %sc, axis 1 : tile<64xi64>
  %mb = broadcast %mx, axis 1 : tile<64x64xf32>
  %sh = sub %sc, %mb : tile<64x64xf32>
  %p = exp %sh : tile<64x64xf32>
  %ph = cast %p : tile<64x64xf16>
  %vt = load %k[%off] : tile<64x64xf16>
  %out = dot %ph, %vt, %acc0 : tile<64x64xf32>
  %scale = const 0.125 : f32
  %sct = splat %scale : tile<64x64xf32>
  %res = mul %out, %sct : tile<64x64xf32>
  store %o[%off], %res
}
)";

// An rms_norm row as the row kernels compute it: the sum of squares in
// double (reduce.sum to f64), 1 / sqrt(mean + eps) in double, rounded to f32.
const char* kRmsRow = R"(kernel @rms_row
  dims N, D=64
  in %x : f32[N, D]
  out %y : f32[N, D]
  grid [N]
{
  %row = program_id 0 : i64
  %d = dim D : i64
  %base = mul %row, %d : i64
  %b = splat %base : tile<64xi64>
  %r = range : tile<64xi64>
  %off = add %b, %r : tile<64xi64>
  %v = load %x[%off] : tile<64xf32>
  %sq = mul %v, %v : tile<64xf32>
  %ss = reduce.sum %sq, axis 0 : f64
  %n = cast %d : f64
  %ms = div %ss, %n : f64
  %eps = const 1e-06 : f64
  %me = add %ms, %eps : f64
  %rt = sqrt %me : f64
  %one = const 1 : f64
  %inv = div %one, %rt : f64
  %i32 = cast %inv : f32
  %it = splat %i32 : tile<64xf32>
  %o = mul %v, %it : tile<64xf32>
  store %y[%off], %o
}
)";

// Blocks of a row-major [R, C] matrix, as it is and transposed (the text
// form of load_block and its .t suffix).
const char* kBlocks = R"(kernel @blocks
  dims R, C
  in %m : f16[R, C]
  out %y : f16[R, C]
  grid [1]
{
  %r = dim R : i64
  %c = dim C : i64
  %zero = const 0 : i64
  %one = const 1 : i64
  %a = load_block %m[%zero, %one, %zero, %r, %c, %c] : tile<16x32xf16>
  %b = load_block.t %m[%zero, %zero, %one, %r, %c, %c] : tile<32x16xf16>
}
)";

Kernel parsed(const char* text) {
  Kernel k = parse(text);
  auto errors = verify(k);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return k;
}

TEST(KernelIR, TextRoundTrips) {
  for (const char* text : {kSoftmaxRows, kAttentionStep, kRmsRow, kBlocks}) {
    Kernel k = parsed(text);
    EXPECT_EQ(print(k), text);
  }
}

TEST(KernelIR, HeaderOfK2AndK3Kernels) {
  Kernel k2 = parsed(kSoftmaxRows);
  EXPECT_EQ(k2.dims, (std::vector<std::string>{"N", "D"}));
  EXPECT_FALSE(k2.specialized());
  ASSERT_EQ(k2.params.size(), 2u);
  EXPECT_TRUE(k2.params[1].output);
  EXPECT_EQ(k2.params[0].shape, (std::vector<DimRef>{{0, 0}, {1, 0}}));
  Kernel k3 = parsed(kAttentionStep);
  EXPECT_TRUE(k3.specialized());
  EXPECT_EQ(*k3.dim_values[0], 256);
  ASSERT_EQ(k3.grid.size(), 2u);
  EXPECT_EQ(k3.grid[0], (Extent{1, {0}, 64}));
  EXPECT_EQ(k3.grid[1], (Extent{2, {0}, 1}));
}

// The builder types what it emits; its kernel prints, parses back and verifies.
TEST(KernelIR, BuilderMakesAnElementwiseKernel) {
  Kernel k;
  k.name = "axpb";
  k.dims = {"N"};
  k.params = {Param{"x", Elem::BF16, {{0, 0}}, false}, Param{"y", Elem::F32, {{0, 0}}, true}};
  k.grid = {Extent{1, {0}, 1024}};
  KernelBuilder b(k);
  ValueId pid = b.named(b.program_id(0), "pid");
  ValueId base = b.binary(KOp::Mul, pid, b.const_int(1024));
  ValueId off = b.named(b.binary(KOp::Add, b.splat(base, {1024}), b.range(1024)), "off");
  ValueId in = b.cmp(Pred::Lt, off, b.splat(b.dim(0), {1024}));
  ValueId x = b.cast(b.load(0, off, in), Elem::F32);
  ValueId y = b.unary(KOp::Tanh, b.binary(KOp::Add, b.binary(KOp::Mul, x, b.splat(b.const_float(1.3), {1024})),
                                             b.splat(b.const_float(0.5), {1024})));
  b.store(1, off, y, in);
  EXPECT_TRUE(verify(k).empty());
  const std::string text = print(k);
  EXPECT_NE(text.find("%off = add %"), std::string::npos) << text;
  EXPECT_NE(text.find("load %x[%off], mask %"), std::string::npos) << text;
  EXPECT_NE(text.find(": tile<1024xbf16>"), std::string::npos) << text;
  EXPECT_NE(text.find("grid [cdiv(N, 1024)]"), std::string::npos) << text;
  Kernel again = parsed(text.c_str());
  EXPECT_EQ(print(again), text);
}

TEST(KernelIR, BuilderLoopsCarryValues) {
  Kernel k;
  k.name = "rowsum";
  k.dims = {"N", "D"};
  k.params = {Param{"x", Elem::F32, {{0, 0}, {1, 0}}, false}, Param{"y", Elem::F32, {{0, 0}}, true}};
  k.grid = {Extent{1, {0}, 1}};
  KernelBuilder b(k);
  ValueId row = b.program_id(0);
  ValueId d = b.dim(1);
  ValueId zero = b.const_int(0);
  auto args = b.begin_for(zero, d, b.const_int(1), {b.const_float(0.0)});
  ValueId v = b.load(0, b.binary(KOp::Add, b.binary(KOp::Mul, row, d), args[0]));
  auto out = b.end_for({b.binary(KOp::Add, args[1], v)});
  b.store(1, row, out[0]);
  EXPECT_TRUE(verify(k).empty());
  Kernel again = parsed(print(k).c_str());
  EXPECT_EQ(print(again), print(k));
  // Builder misuse throws where it happens.
  EXPECT_THROW(b.binary(KOp::Add, row, v), std::invalid_argument);
  EXPECT_THROW(b.unary(KOp::Exp, row), std::invalid_argument);
  EXPECT_THROW(b.end_for({}), std::invalid_argument);
}

// Each body breaks one rule; the verifier names it.
TEST(KernelIR, VerifierRefusesIllFormedKernels) {
  const std::string head = "kernel @bad\n  dims N\n  in %x : f32[N]\n  out %y : f32[N]\n  grid [N]\n{\n";
  struct Case { const char* body; const char* expect; };
  const Case cases[] = {
      {"  %a = const 1 : f32\n  %b = const 1 : i64\n  %c = add %a, %b : f32\n", "operands differ: f32 and i64"},
      {"  %a = const 1 : i64\n  %c = exp %a : i64\n", "needs a float type"},
      {"  %a = const 1 : i64\n  %v = load %x[%a] : f32\n  store %x[%a], %v\n", "%x is an input"},
      {"  %a = const 1 : f64\n  %e = exp %a : f64\n", "not defined on f64"},
      {"  %a = range : tile<8xi64>\n  %v = load %x[%a] : tile<8xf32>\n  %s = reduce.max %v, axis 0 : f64\n",
       "result is f64, the operands give f32"},
      {"  %a = range : tile<8xi64>\n  %m = const 1 : i1\n  %v = load %x[%a], mask %m : tile<8xf32>\n",
       "the mask must be i1 of the offsets' shape"},
      {"  %a = range : tile<8xi64>\n  %v = load %x[%a] : tile<8xf32>\n  %s = reduce.sum %v, axis 1 : f32\n",
       "folds an axis of a tile"},
      {"  %a = range : tile<8xi64>\n  %v = load %x[%a] : tile<8xf32>\n  %s = reduce.sum %v, axis 0 : i64\n",
       "result is i64, the operands give f32"},
      {"  %p = program_id 1 : i64\n", "the grid has no axis 1"},
      {"  %a = const 0 : i64\n  for %i = %a to %a step %a {\n    %b = const 1 : i64\n  }\n", "must end with yield"},
      {"  %a = const 0 : i64\n  yield\n", "yield ends a loop body"},
      {"  %a = const 0 : i64\n  %b = load_block %x[%a, %a, %a, %a, %a, %a] : tile<4x4xf16>\n",
       "a 2-D tile of the param's element type"},
      {"  %a = const 0 : i64\n  %f = const 0 : f32\n  %b = load_block %x[%a, %a, %f, %a, %a, %a] : tile<4x4xf32>\n",
       "i64 scalars"},
      {"  %a = range : tile<8xi64>\n  %f = cast %a : tile<8xf32>\n  %b = broadcast %f, axis 0 : tile<4x8xf32>\n"
       "  %c = dot %b, %b, %b : tile<4x8xf32>\n",
       "multiplies tile<MxK> by tile<KxN>"},
      {"  %a = const 0 : i64\n  %r = for %i = %a to %a step %a iter(%c = %a) {\n    %f = const 1 : f32\n"
       "    yield %f\n  }\n",
       "yield value 0 changes type"},
  };
  for (const Case& c : cases) {
    Kernel k = parse(head + c.body + "}\n");
    auto errors = verify(k);
    ASSERT_FALSE(errors.empty()) << c.body;
    EXPECT_NE(errors.front().find(c.expect), std::string::npos) << errors.front();
  }
}

TEST(KernelIR, ValuesOfALoopBodyAreNotVisibleAfterIt) {
  Kernel k = parse(R"(kernel @scope
  dims N
  out %y : f32[N]
  grid [N]
{
  %a = const 0 : i64
  for %i = %a to %a step %a {
    %f = const 1 : f32
    yield
  }
  store %y[%a], %f
}
)");
  auto errors = verify(k);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("%f is used before it is defined"), std::string::npos) << errors.front();
}

TEST(KernelIR, ParseErrorsSayWhere) {
  auto error_of = [](const std::string& text) {
    try {
      parse(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "kernel @e\n  dims N\n  in %x : f32[N]\n  grid [N]\n{\n";
  EXPECT_EQ(error_of(head + "  %a = frob %b : f32\n}\n"), "6:8: unknown operation, found 'frob'");
  EXPECT_EQ(error_of(head + "  %a = neg %b : f32\n}\n"), "6:12: %b is not defined, found 'b'");
  EXPECT_EQ(error_of(head + "  %a = const 1 : f8\n}\n"), "6:18: expected an element type (i1 i32 i64 f16 bf16 f32 f64), found 'f8'");
  EXPECT_EQ(error_of(head + "  %a = const 1 : tile<8xf32>\n}\n"), "6:18: a constant is a scalar, found 'tile'");
  EXPECT_EQ(error_of("kernel @e\n  grid [M]\n{\n}\n"), "2:9: no dim named M, found 'M'");
  EXPECT_EQ(error_of(head), "6:1: expected '}' (at the end)");
  EXPECT_EQ(error_of(head + "  %a = cmp.xx %a, %a : i1\n}\n"), "6:8: cmp needs a predicate: cmp.eq ne lt le gt ge, found 'cmp.xx'");
  EXPECT_EQ(error_of(head + "  %a = load_block.x %x[] : tile<8x8xf32>\n}\n"),
            "6:8: load_block's only suffix is .t (transposed), found 'load_block.x'");
}

TEST(KernelIR, OpTableNamesEveryOp) {
  for (int i = 0; i < static_cast<int>(KOp::NumOps); ++i) {
    const KOpInfo& info = op_info(static_cast<KOp>(i));
    ASSERT_NE(info.name, nullptr);
    EXPECT_EQ(op_by_name(info.name), static_cast<KOp>(i));
    EXPECT_LE(info.min_operands, info.max_operands);
  }
}

}  // namespace
}  // namespace tessera::kir
