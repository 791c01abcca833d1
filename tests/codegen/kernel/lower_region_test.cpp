// Regions of elementwise Graph IR operations lowered to kernel IR, compiled
// for the CPU and run, against the interpreter's kernels run one operation
// at a time (run_region_reference): equal bit for bit, K2 and K3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/kernel/cpu/region_kernel.h"
#include "codegen/kernel/kernel_text.h"
#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir {
namespace {

CpuKernelCompiler& compiler() {
  static CpuKernelCompiler c;
  return c;
}

Value wave_tensor(DType dt, Shape shape, float scale, float phase) {
  Value v = make_tensor(dt, shape);
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

std::vector<uint8_t> bytes(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  const auto* p = static_cast<const uint8_t*>(t.data);
  return std::vector<uint8_t>(p, p + t.nbytes());
}

// Runs the region as K2 and as K3 and compares with the interpreter's kernels.
void expect_same_as_interpreter(const Region& r, const std::vector<Value>& inputs) {
  const std::vector<Value> want = run_region_reference(r, inputs);
  auto sym = bind_symbols(r, inputs);
  ASSERT_TRUE(sym.has_value());
  for (bool k3 : {false, true}) {
    RegionLowering opt;
    opt.tile = 256;
    if (k3) opt.symbol_values.assign(sym->begin(), sym->end());
    CpuRegionKernel k(r, compiler(), opt);
    ASSERT_TRUE(verify(k.kernel()).empty());
    for (int threads : {1, 0}) {
      auto got = k.run(inputs, threads);
      ASSERT_TRUE(got.has_value());
      ASSERT_EQ(got->size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got->at(i).as_tensor()->shape, want[i].as_tensor()->shape);
        EXPECT_EQ(got->at(i).as_tensor()->dtype, want[i].as_tensor()->dtype);
        EXPECT_EQ(bytes(got->at(i)), bytes(want[i])) << "output " << i << (k3 ? " K3" : " K2") << "\n" << r.str();
      }
    }
  }
}

// tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 + x * 0.05, the benchmark's chain.
Region chain_region() {
  Region r;
  const int n = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n});
  const int y = r.add_tensor_input(DType::F32, {n});
  const int c13 = r.add_scalar_input(ScalarKind::Float), c02 = r.add_scalar_input(ScalarKind::Float);
  const int c17 = r.add_scalar_input(ScalarKind::Float), c005 = r.add_scalar_input(ScalarKind::Float);
  int t = *r.add(OpId::Mul, {y, c13});
  t = *r.add(OpId::Tanh, {*r.add(OpId::Add, {t, x})});
  const int s = *r.add(OpId::Sigmoid, {*r.add(OpId::Sub, {y, c02})});
  t = *r.add(OpId::Mul, {*r.add(OpId::Mul, {t, s}), c17});
  r.outputs = {*r.add(OpId::Add, {t, *r.add(OpId::Mul, {x, c005})})};
  return r;
}

TEST(LowerRegion, ElementwiseChain) {
  Region r = chain_region();
  for (int64_t n : {2, 255, 1000, 70000}) {  // a symbol is never 1 (bind_symbols)
    std::vector<Value> in = {wave_tensor(DType::F32, {n}, 0.5f, 0.1f), wave_tensor(DType::F32, {n}, 0.5f, 0.7f),
                             Value::number(1.3), Value::number(0.2), Value::number(1.7), Value::number(0.05)};
    expect_same_as_interpreter(r, in);
  }
  // The kernel reads both inputs at the flat offsets (no index math) and writes one output.
  std::string text = print(lower_region(r, "chain"));
  EXPECT_NE(text.find("load %in0[%off], mask %in"), std::string::npos) << text;
  EXPECT_NE(text.find("store %out0[%off]"), std::string::npos) << text;
  EXPECT_NE(text.find("grid [cdiv(s0, 1024)]"), std::string::npos) << text;
}

// [N, D] with [D] and [N, 1], in f16 and bf16: each operation's result
// rounded to its dtype, as the interpreter's tensors hold them.
TEST(LowerRegion, BroadcastingAndHalfPrecision) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F16, {n, d});
  const int row = r.add_tensor_input(DType::F16, {d});
  const int col = r.add_tensor_input(DType::BF16, {n, kDimOne});
  const int a = *r.add(OpId::Mul, {x, row});                 // f16
  const int b = *r.add(OpId::Add, {a, col});                 // f16 + bf16 -> f32
  const int c = *r.add(OpId::Exp, {*r.add(OpId::Neg, {a})});  // f16
  const int e = *r.add(OpId::Cast, {b}, DType::BF16);
  r.outputs = {*r.add(OpId::Max, {c, x}), e};
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {64, 300}}) {
    std::vector<Value> in = {wave_tensor(DType::F16, {rows, cols}, 3.0f, 0.2f), wave_tensor(DType::F16, {cols}, 1.5f, 0.4f),
                             wave_tensor(DType::BF16, {rows, 1}, 2.0f, 0.9f)};
    expect_same_as_interpreter(r, in);
  }
}

TEST(LowerRegion, IntegersComparisonsWhereAndCasts) {
  Region r;
  const int n = r.new_symbol();
  const int a = r.add_tensor_input(DType::I32, {n});
  const int b = r.add_tensor_input(DType::I64, {n});
  const int k = r.add_scalar_input(ScalarKind::Int);
  const int f = r.add_tensor_input(DType::F32, {n});
  const int m = *r.add(OpId::Mul, {a, k});                      // i32, wraps
  const int s = *r.add(OpId::Add, {m, b});                      // i64
  const int gt = *r.add(OpId::Gt, {s, k});                      // bool
  const int w = *r.add(OpId::Where, {gt, *r.add(OpId::Abs, {s}), *r.add(OpId::Relu, {*r.add(OpId::Neg, {b})})});
  const int big = *r.add(OpId::Mul, {f, f});
  r.outputs = {w, *r.add(OpId::Cast, {big}, DType::I32), *r.add(OpId::Cast, {w}, DType::F16), gt,
               *r.add(OpId::Cast, {f}, DType::Bool)};
  Value av = make_tensor(DType::I32, {9}), bv = make_tensor(DType::I64, {9}), fv = make_tensor(DType::F32, {9});
  const int64_t as[] = {1, -2, 2147483647, -2147483647 - 1, 7, 0, 100000, -5, 3};
  const int64_t bs[] = {5, -100, 3, INT64_MIN, 9, 0, -7, 12, INT64_MAX};
  const double fs[] = {1.5, -2.5, 60000.0, 1e30, -1e30, std::nan(""), 0.0, -0.0, 46341.0};
  for (int i = 0; i < 9; ++i) {
    av.as_tensor()->set_i(i, as[i]);
    bv.as_tensor()->set_i(i, bs[i]);
    fv.as_tensor()->set_f(i, fs[i]);
  }
  expect_same_as_interpreter(r, {av, bv, Value::integer(3), fv});
}

// Bool tensors as inputs (bytes in memory, i1 in the kernel): where's
// condition from an input, per row and per column, f32 and i64 branches.
// (Found by the jit_tensors conformance programs: the emitter loaded bool
// strips as bytes and refused the select.)
TEST(LowerRegion, BoolTensorInputs) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int c = r.add_tensor_input(DType::Bool, {n, d});
  const int x = r.add_tensor_input(DType::F32, {n, d});
  const int col = r.add_tensor_input(DType::F32, {n, kDimOne});
  const int rowc = r.add_tensor_input(DType::Bool, {kDimOne, d});
  const int i = r.add_tensor_input(DType::I64, {n, d});
  const int w1 = *r.add(OpId::Where, {c, x, col});
  const int w2 = *r.add(OpId::Where, {rowc, col, w1});
  const int w3 = *r.add(OpId::Where, {c, i, *r.add(OpId::Neg, {i})});
  r.outputs = {w2, w3, *r.add(OpId::Cast, {c}, DType::F32)};
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {40, 300}}) {
    Value cv = make_tensor(DType::Bool, {rows, cols}), rv = make_tensor(DType::Bool, {1, cols});
    Value iv = make_tensor(DType::I64, {rows, cols});
    for (int64_t k = 0; k < rows * cols; ++k) {
      cv.as_tensor()->set_i(k, (k * 7 % 3) == 0);
      iv.as_tensor()->set_i(k, k - 50);
    }
    for (int64_t k = 0; k < cols; ++k) rv.as_tensor()->set_i(k, k % 2);
    expect_same_as_interpreter(r, {cv, wave_tensor(DType::F32, {rows, cols}, 2.0f, 0.3f),
                                   wave_tensor(DType::F32, {rows, 1}, 1.0f, 0.1f), rv, iv});
  }
}

// What the kernel cannot reproduce stays out of regions.
TEST(LowerRegion, RegionsRefuseWhatTheInterpreterComputesOtherwise) {
  Region r;
  const int n = r.new_symbol(), m = r.new_symbol();
  const int f = r.add_tensor_input(DType::F32, {n});
  const int i = r.add_tensor_input(DType::I64, {n});
  const int g = r.add_tensor_input(DType::F32, {m});
  const int fs = r.add_scalar_input(ScalarKind::Float);
  EXPECT_FALSE(r.add(OpId::FloorDiv, {f, f}));   // floor semantics in double
  EXPECT_FALSE(r.add(OpId::Add, {i, fs}));       // int tensor with a float: the double loop
  EXPECT_FALSE(r.add(OpId::Exp, {i}));           // likewise
  EXPECT_FALSE(r.add(OpId::Lt, {f, fs}));        // a float scalar is compared exactly
  EXPECT_FALSE(r.add(OpId::Add, {f, g}));        // two symbols: sizes that may differ
  EXPECT_FALSE(r.add(OpId::Sum, {f}));           // not elementwise (yet)
  EXPECT_TRUE(r.add(OpId::Lt, {i, r.add_scalar_input(ScalarKind::Int)}));
}

TEST(LowerRegion, InputsThatDoNotFitAreRefused) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n, d});
  const int row = r.add_tensor_input(DType::F32, {d});
  r.outputs = {*r.add(OpId::Add, {x, row})};
  CpuRegionKernel k(r, compiler());
  auto run = [&](Value a, Value b) { return k.run(std::vector<Value>{a, b}).has_value(); };
  EXPECT_TRUE(run(make_tensor(DType::F32, {4, 3}), make_tensor(DType::F32, {3})));
  EXPECT_FALSE(run(make_tensor(DType::F32, {4, 3}), make_tensor(DType::F32, {2})));   // d differs
  EXPECT_FALSE(run(make_tensor(DType::F16, {4, 3}), make_tensor(DType::F32, {3})));   // dtype
  EXPECT_FALSE(run(make_tensor(DType::F32, {4, 1}), make_tensor(DType::F32, {1})));   // 1 where a symbol is
  EXPECT_FALSE(run(make_tensor(DType::F32, {12}), make_tensor(DType::F32, {3})));     // rank
  EXPECT_FALSE(run(Value::number(1.0), make_tensor(DType::F32, {3})));                // not a tensor
  EXPECT_TRUE(run(make_tensor(DType::F32, {0, 3}), make_tensor(DType::F32, {3})));    // empty
  // A K3 kernel runs only the shapes it was made for.
  RegionLowering k3;
  k3.symbol_values = {4, 3};
  CpuRegionKernel s(r, compiler(), k3);
  EXPECT_TRUE(s.run(std::vector<Value>{make_tensor(DType::F32, {4, 3}), make_tensor(DType::F32, {3})}).has_value());
  EXPECT_FALSE(s.run(std::vector<Value>{make_tensor(DType::F32, {5, 3}), make_tensor(DType::F32, {3})}).has_value());
}

TEST(LowerRegion, TextOfTheRegion) {
  EXPECT_EQ(chain_region().str(),
            "%0 = input : f32[s0]\n%1 = input : f32[s0]\n%2 = input : float\n%3 = input : float\n"
            "%4 = input : float\n%5 = input : float\n%6 = mul(%1, %2) : f32[s0]\n%7 = add(%6, %0) : f32[s0]\n"
            "%8 = tanh(%7) : f32[s0]\n%9 = sub(%1, %3) : f32[s0]\n%10 = sigmoid(%9) : f32[s0]\n"
            "%11 = mul(%8, %10) : f32[s0]\n%12 = mul(%11, %4) : f32[s0]\n%13 = mul(%0, %5) : f32[s0]\n"
            "%14 = add(%12, %13) : f32[s0]\noutputs %14\n");
}

}  // namespace
}  // namespace tessera::kir
