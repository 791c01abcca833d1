// Regions of Graph IR operations lowered to kernel IR (elementwise kernels
// and row kernels), compiled for the CPU and run, against the interpreter's
// kernels run one operation at a time (run_region_reference): equal bit for
// bit, K2 and K3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "codegen/kernel/cpu/cpu_launch.h"
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
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

// The worst error relative to 1 + |want| over the elements.
double worst_error(const Value& got, const Value& want) {
  const TensorObj& g = *got.as_tensor();
  const TensorObj& w = *want.as_tensor();
  double worst = 0;
  for (int64_t i = 0; i < w.numel; ++i)
    worst = std::max(worst, std::fabs(g.get_f(i) - w.get_f(i)) / (1.0 + std::fabs(w.get_f(i))));
  return worst;
}

// Runs lower_attention's kernel of region r (K2's tiles, or K3's for the
// values opt gives) on the CPU: what it writes, attention's result or the
// region's outputs (attention_writes_outputs). Tiles of 128 columns and
// more exceed the CPU emitter's 1 MiB of stack for tiles (the CPU runs the
// interpreter's attention; the CUDA emulation runs those): the widest dims
// keep K2's chunks of 64 here.
std::vector<Value> run_attention_kernel(const Region& r, const std::vector<Value>& in, const std::vector<int64_t>& sym,
                                        const RegionLowering& opt, int threads) {
  AttentionTiles tiles = attention_tiles(r, opt);
  if (tiles.head > 96 || tiles.value > 96) tiles.head = tiles.value = 64;
  const Kernel kern = lower_attention(r, "attention", opt, tiles);
  EXPECT_TRUE(verify(kern).empty()) << verify(kern).front();
  EXPECT_EQ(parse(print(kern)).name, "attention");
  std::vector<int> written = r.outputs;
  if (!attention_writes_outputs(r)) written = {r.value_of_op(0)};
  std::vector<Value> out;
  std::vector<void*> params;
  std::vector<float> scalars(in.size());  // float scalars (the only ones here), passed by address in f32
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].is_tensor()) {
      params.push_back(in[i].as_tensor()->data());
      continue;
    }
    scalars[i] = static_cast<float>(in[i].as_float());
    params.push_back(&scalars[i]);
  }
  for (int v : written) {
    Shape shape;
    for (int d : r.type(v).dims) shape.push_back(d == kDimOne ? 1 : sym.at(static_cast<size_t>(d)));
    out.push_back(make_tensor(r.type(v).dtype, shape));
    params.push_back(out.back().as_tensor()->data());
  }
  CompiledKernel ck = compiler().compile(kern);
  launch(kern, ck.fn, params, sym, threads);
  return out;
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

// sin(a / row) over rows of 17: the masked-off lanes of a row's last
// strip divide 0 by 0, and values of 125 and more or NaN sit beside small
// ones (SLEEF's sin takes another path for a vector with such a lane):
// every element equals the interpreter's, which groups the elements in
// flat vectors of its own (vector_math.h, kTrigFastMax).
TEST(LowerRegion, SinAndCosOfAnElementDoNotDependOnTheTiles) {
  for (OpId trig : {OpId::Sin, OpId::Cos}) {
    Region r;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int a = r.add_tensor_input(DType::F32, {n, d});
    const int row = r.add_tensor_input(DType::F32, {d});
    r.outputs = {*r.add(trig, {*r.add(OpId::Div, {a, row})})};
    Value av = wave_tensor(DType::F32, {64, 17}, 40.0f, 0.3f);
    TensorObj& at = *av.as_tensor();
    for (int64_t i = 0; i < at.numel; ++i) {
      if (i % 17 == 16) at.set_f(i, 7.615268);  // a value whose last bit the two paths round apart
      if (i % 29 == 3) at.set_f(i, 300.0 + static_cast<double>(i));
    }
    at.set_f(40, std::numeric_limits<double>::quiet_NaN());
    expect_same_as_interpreter(r, {av, wave_tensor(DType::F32, {17}, 0.0f, 0.0f)});
    Value ones = make_tensor(DType::F32, {17});
    for (int64_t i = 0; i < 17; ++i) ones.as_tensor()->set_f(i, 1.0);
    expect_same_as_interpreter(r, {av, ones});
  }
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

// An i64 cast to a float type rounds through f64 as the interpreter's
// cast does: 2**60 + 2**36 + 1 is 2**60 + 2**36 in f64, and that tie is
// 2**60 in f32 (a direct conversion gives 2**60 + 2**37). (Found by the
// jit_tensors conformance program int_chains once cast's dtype became a
// constant of the trace and casts fused.)
TEST(LowerRegion, I64CastsToFloatRoundThroughF64) {
  Region r;
  const int n = r.new_symbol();
  const int b = r.add_tensor_input(DType::I64, {n});
  r.outputs = {*r.add(OpId::Cast, {b}, DType::F32), *r.add(OpId::Cast, {b}, DType::F16),
               *r.add(OpId::Cast, {b}, DType::BF16)};
  Value bv = make_tensor(DType::I64, {5});
  const int64_t bs[] = {(int64_t{1} << 60) + (int64_t{1} << 36) + 1, (int64_t{1} << 24) + 3, -((int64_t{1} << 53) + 1),
                        65519, INT64_MIN};
  for (int i = 0; i < 5; ++i) bv.as_tensor()->set_i(i, bs[i]);
  expect_same_as_interpreter(r, {bv});
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
  EXPECT_FALSE(r.add(OpId::Sum, {i}));           // integer sums: the int64 loops
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

// ---------------------------------------------------------------- row kernels

RegionAttrs axis_attrs(std::optional<int> axis, bool keepdim = false) {
  RegionAttrs a;
  a.axis = axis;
  a.keepdim = keepdim;
  return a;
}

RegionAttrs norm_attrs(double eps, bool weight, bool bias = false) {
  RegionAttrs a;
  a.eps = eps;
  a.weight = weight;
  a.bias = bias;
  return a;
}

// Rows of every length around the chunk (1024) and the whole-row limit
// (4096), as [rows, cols] inputs; values with NaN, infinities and zeros of
// both signs in some rows.
std::vector<std::pair<int64_t, int64_t>> row_shapes() {
  return {{3, 5}, {2, 1023}, {5, 1024}, {2, 1025}, {3, 3000}, {2, 4100}, {0, 7}, {4, 0}};
}

Value special_rows(Shape shape, float scale, float phase) {
  Value v = wave_tensor(DType::F32, shape, scale, phase);
  TensorObj& t = *v.as_tensor();
  if (shape.size() == 2 && shape[0] >= 3 && shape[1] >= 5) {
    const int64_t c = shape[1];
    t.set_f(1 * c + 2, std::nan(""));                                // a NaN in row 1
    t.set_f(2 * c + 0, -0.0), t.set_f(2 * c + 1, 0.0);              // row 2: zeros first ...
    for (int64_t j = 2; j < c; ++j) t.set_f(2 * c + j, -1.0 - j % 3);  // ... as its maximum
    t.set_f(0 * c + c - 1, -std::numeric_limits<double>::infinity());
  }
  return v;
}

// softmax(x * s) then rms_norm with a weight: the benchmark's row kernel.
TEST(LowerRegion, RowKernelSoftmaxThenRmsNorm) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n, d});
  const int s = r.add_scalar_input(ScalarKind::Float);
  const int w = r.add_tensor_input(DType::F32, {d});
  RegionAttrs sm;
  sm.axis = -1;
  const int p = *r.add(OpId::Softmax, {*r.add(OpId::Mul, {x, s})}, sm);
  r.outputs = {*r.add(OpId::RmsNorm, {p, w}, norm_attrs(1e-6, true))};
  EXPECT_TRUE(r.valid_output(r.outputs[0]));
  for (auto [rows, cols] : row_shapes()) {
    if (cols == 1) continue;
    expect_same_as_interpreter(r, {special_rows({rows, cols}, 1.5f, 0.3f), Value::number(2.0),
                                   wave_tensor(DType::F32, {cols}, 0.5f, 1.1f)});
  }
}

// layer_norm with weight and bias between an elementwise producer and consumer.
TEST(LowerRegion, RowKernelLayerNormWithProducerAndConsumer) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n, d});
  const int y = r.add_tensor_input(DType::F32, {n, d});
  const int w = r.add_tensor_input(DType::F32, {d});
  const int b = r.add_tensor_input(DType::F32, {d});
  const int sum = *r.add(OpId::Add, {x, y});
  const int ln = *r.add(OpId::LayerNorm, {sum, w, b}, norm_attrs(1e-5, true, true));
  r.outputs = {*r.add(OpId::Gelu, {*r.add(OpId::Add, {ln, x})})};
  for (auto [rows, cols] : row_shapes()) {
    if (cols == 1) continue;
    expect_same_as_interpreter(r, {wave_tensor(DType::F32, {rows, cols}, 3.0f, 0.2f),
                                   wave_tensor(DType::F32, {rows, cols}, 1.0f, 0.9f),
                                   wave_tensor(DType::F32, {cols}, 0.7f, 0.5f), wave_tensor(DType::F32, {cols}, 0.2f, 0.1f)});
  }
}

// Each reduction along the last axis, with and without keepdim, consumed
// (x - amax(x) as a hand-written softmax would) or as the output.
TEST(LowerRegion, RowKernelReductionsAlongTheLastAxis) {
  for (OpId red : {OpId::Sum, OpId::Mean, OpId::Amax, OpId::Amin, OpId::ArgMax}) {
    for (bool keep : {false, true}) {
      Region r;
      const int n = r.new_symbol(), d = r.new_symbol();
      const int x = r.add_tensor_input(DType::F32, {n, d});
      const int e = *r.add(OpId::Exp, {*r.add(OpId::Mul, {x, r.add_scalar_input(ScalarKind::Float)})});
      const int v = *r.add(red, {e}, axis_attrs(-1, keep));
      // A consumer where it broadcasts back over the row (keepdim, floats).
      if (keep && red != OpId::ArgMax) r.outputs = {*r.add(OpId::Sub, {e, v})};
      else r.outputs = {v};
      ASSERT_TRUE(r.valid_output(r.outputs[0])) << r.str();
      for (auto [rows, cols] : row_shapes()) {
        if (cols < 2) continue;  // a symbol is never 1; amax of an empty row raises
        expect_same_as_interpreter(r, {special_rows({rows, cols}, 2.0f, 0.4f), Value::number(0.5)});
      }
    }
  }
}

// Reductions of every axis: one program walks the elements in order;
// broadcasting producers read at their offsets; a consumer of the result.
TEST(LowerRegion, RowKernelReductionsOfEveryAxis) {
  for (OpId red : {OpId::Sum, OpId::Mean, OpId::Amax, OpId::ArgMax}) {
    Region r;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {n, d});
    const int row = r.add_tensor_input(DType::F32, {d});
    const int v = *r.add(red, {*r.add(OpId::Mul, {x, row})}, axis_attrs(std::nullopt, red == OpId::Mean));
    r.outputs = {red == OpId::Mean ? *r.add(OpId::Sub, {*r.add(OpId::Mul, {x, row}), v}) : v};
    ASSERT_TRUE(r.valid_output(r.outputs[0])) << r.str();
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {40, 300}, {3, 1500}}) {
      expect_same_as_interpreter(r, {special_rows({rows, cols}, 2.0f, 0.4f), wave_tensor(DType::F32, {cols}, 1.0f, 0.3f)});
    }
  }
}

// Half-precision rows: computed in f32, each result rounded to its dtype.
TEST(LowerRegion, RowKernelHalfPrecision) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F16, {n, d});
  const int w = r.add_tensor_input(DType::BF16, {d});
  RegionAttrs sm;
  sm.axis = 1;
  const int p = *r.add(OpId::Softmax, {x}, sm);
  const int ln = *r.add(OpId::LayerNorm, {p, w}, norm_attrs(1e-3, true));
  r.outputs = {*r.add(OpId::Sum, {ln}, axis_attrs(1, true))};
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {7, 2000}}) {
    expect_same_as_interpreter(r, {wave_tensor(DType::F16, {rows, cols}, 4.0f, 0.2f), wave_tensor(DType::BF16, {cols}, 1.0f, 0.6f)});
  }
}

// What a row kernel cannot be: reductions along other axes, two row shapes,
// a reduction without keepdim consumed along the row.
TEST(LowerRegion, RowKernelsRefuseOtherStructures) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol(), m = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n, d});
  EXPECT_FALSE(r.add(OpId::Sum, {x}, axis_attrs(0)));        // the interpreter's column loops
  EXPECT_FALSE(r.add(OpId::Softmax, {x}, axis_attrs(0)));
  const int s = *r.add(OpId::Sum, {x}, axis_attrs(1));       // [n]: one per row, an output only
  EXPECT_FALSE(r.add(OpId::Mul, {s, s}));
  const int y = r.add_tensor_input(DType::F32, {m, d});
  EXPECT_FALSE(r.add(OpId::Exp, {y}));                       // not of the rows
  EXPECT_FALSE(r.add(OpId::Amax, {y}, axis_attrs(-1)));      // other rows
  EXPECT_FALSE(r.add(OpId::Sum, {x}, axis_attrs(std::nullopt)));  // another mode
  EXPECT_TRUE(r.valid_output(s));
  EXPECT_FALSE(r.valid_output(y));
  // bind_symbols refuses what the interpreter raises on: amax of an empty row.
  Region e;
  const int k = e.new_symbol(), c = e.new_symbol();
  e.outputs = {*e.add(OpId::Amax, {e.add_tensor_input(DType::F32, {k, c})}, axis_attrs(1))};
  EXPECT_FALSE(bind_symbols(e, std::vector<Value>{make_tensor(DType::F32, {2, 0})}));
  EXPECT_TRUE(bind_symbols(e, std::vector<Value>{make_tensor(DType::F32, {0, 3})}));
}

// The text form carries the attributes.
TEST(LowerRegion, RowRegionsReadBack) {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n, d});
  const int w = r.add_tensor_input(DType::F32, {d});
  const int b = r.add_tensor_input(DType::F32, {d});
  const int ln = *r.add(OpId::LayerNorm, {x, w, b}, norm_attrs(2.5e-05, true, true));
  r.outputs = {*r.add(OpId::Amax, {ln}, axis_attrs(-1, true))};
  const std::string text = r.str();
  EXPECT_NE(text.find("layer_norm(%0, weight=%1, bias=%2, eps=2.5e-05)"), std::string::npos) << text;
  EXPECT_NE(text.find("amax(%3, axis=1, keepdim) : f32[s0, 1]"), std::string::npos) << text;
  EXPECT_EQ(parse_region(text).str(), text);
}

// ---------------------------------------------------------------- matmul epilogues

// x @ w1 + b1 through gelu; the product by the interpreter's kernel
// (OpenBLAS), the epilogue generated: the interpreter's bits.
TEST(LowerRegion, MatmulWithBiasAndActivation) {
  Region r;
  const int m = r.new_symbol(40), k = r.new_symbol(24), k2 = r.new_symbol(24), n = r.new_symbol(56);
  const int x = r.add_tensor_input(DType::F32, {m, k});
  const int w = r.add_tensor_input(DType::F32, {k2, n});
  const int b = r.add_tensor_input(DType::F32, {n});
  const int p = *r.add(OpId::MatMul, {x, w});
  EXPECT_EQ(r.type(p).dims, (std::vector<int>{m, n}));  // the inner dims are one symbol
  EXPECT_EQ(r.inputs[1].dims[0], k);
  r.outputs = {*r.add(OpId::Gelu, {*r.add(OpId::Add, {p, b})})};
  EXPECT_TRUE(r.leading_step());
  for (auto [rows, inner, cols] : {std::tuple<int64_t, int64_t, int64_t>{40, 24, 56}, {3, 1000, 5}, {0, 4, 6}}) {
    expect_same_as_interpreter(r, {wave_tensor(DType::F32, {rows, inner}, 1.0f, 0.1f),
                                   wave_tensor(DType::F32, {inner, cols}, 0.5f, 0.7f),
                                   wave_tensor(DType::F32, {cols}, 0.25f, 0.3f)});
  }
  EXPECT_FALSE(r.add(OpId::MatMul, {r.outputs[0], w}));  // a matmul is a region's first operation only
}

// Batched with a broadcast weight and a residual; vector forms; f16.
TEST(LowerRegion, MatmulBatchedVectorAndHalfEpilogues) {
  {
    Region r;
    const int bt = r.new_symbol(3), m = r.new_symbol(8), k = r.new_symbol(16), n = r.new_symbol(16);
    const int x = r.add_tensor_input(DType::F32, {bt, m, k});
    const int w = r.add_tensor_input(DType::F32, {k, n});
    const int p = *r.add(OpId::MatMul, {x, w});
    r.outputs = {*r.add(OpId::Add, {*r.add(OpId::Relu, {p}), x})};  // k and n: one size, merged by the residual
    expect_same_as_interpreter(r, {wave_tensor(DType::F32, {3, 8, 16}, 1.0f, 0.1f), wave_tensor(DType::F32, {16, 16}, 0.5f, 0.2f)});
  }
  {
    Region r;
    const int k = r.new_symbol(12), n = r.new_symbol(7);
    const int v = r.add_tensor_input(DType::F32, {k});
    const int w = r.add_tensor_input(DType::F32, {k, n});
    const int p = *r.add(OpId::MatMul, {v, w});
    EXPECT_EQ(r.type(p).dims, (std::vector<int>{n}));
    r.outputs = {*r.add(OpId::Mul, {p, r.add_scalar_input(ScalarKind::Float)})};
    expect_same_as_interpreter(r, {wave_tensor(DType::F32, {12}, 1.0f, 0.1f), wave_tensor(DType::F32, {12, 7}, 0.5f, 0.2f),
                                   Value::number(0.75)});
  }
  {
    Region r;
    const int m = r.new_symbol(9), k = r.new_symbol(33), n = r.new_symbol(20);
    const int x = r.add_tensor_input(DType::F16, {m, k});
    const int w = r.add_tensor_input(DType::BF16, {k, n});
    const int p = *r.add(OpId::MatMul, {x, w});
    r.outputs = {*r.add(OpId::Tanh, {p})};
    expect_same_as_interpreter(r, {wave_tensor(DType::F16, {9, 33}, 1.0f, 0.1f), wave_tensor(DType::BF16, {33, 20}, 0.5f, 0.2f)});
  }
}

// A product followed by a row kernel: softmax of scores.
TEST(LowerRegion, MatmulThenSoftmax) {
  Region r;
  const int m = r.new_symbol(30), k = r.new_symbol(16), n = r.new_symbol(50);
  const int q = r.add_tensor_input(DType::F32, {m, k});
  const int kt = r.add_tensor_input(DType::F32, {k, n});
  const int s = *r.add(OpId::Mul, {*r.add(OpId::MatMul, {q, kt}), r.add_scalar_input(ScalarKind::Float)});
  RegionAttrs sm;
  sm.axis = -1;
  r.outputs = {*r.add(OpId::Softmax, {s}, sm)};
  expect_same_as_interpreter(r, {wave_tensor(DType::F32, {30, 16}, 1.0f, 0.1f), wave_tensor(DType::F32, {16, 50}, 1.0f, 0.4f),
                                 Value::number(0.25)});
}

// Attention with an epilogue: the step by the interpreter's kernel (its
// tiled online softmax), the epilogue generated; and attention then a norm.
TEST(LowerRegion, AttentionWithEpilogueAndNorm) {
  for (bool causal : {false, true}) {
    Region r;
    const int b = r.new_symbol(4), sq = r.new_symbol(70), d = r.new_symbol(16), sk = r.new_symbol(90),
              d2 = r.new_symbol(16), sk2 = r.new_symbol(90), dv = r.new_symbol(24);
    const int q = r.add_tensor_input(DType::F32, {b, sq, d});
    const int k = r.add_tensor_input(DType::F32, {kDimOne, sk, d2});
    const int v = r.add_tensor_input(DType::F32, {kDimOne, sk2, dv});
    RegionAttrs at;
    at.causal = causal;
    at.scale = 0.3;
    const int o = *r.add(OpId::Attention, {q, k, v}, at);
    EXPECT_EQ(r.type(o).dims, (std::vector<int>{b, sq, dv}));
    EXPECT_TRUE(r.leading_step());
    RegionAttrs ln;
    ln.eps = 1e-5;
    r.outputs = {*r.add(OpId::LayerNorm, {*r.add(OpId::Mul, {o, r.add_scalar_input(ScalarKind::Float)})}, ln)};
    EXPECT_EQ(parse_region(r.str()).str(), r.str());
    expect_same_as_interpreter(r, {wave_tensor(DType::F32, {4, 70, 16}, 1.0f, 0.1f), wave_tensor(DType::F32, {1, 90, 16}, 1.0f, 0.4f),
                                   wave_tensor(DType::F32, {1, 90, 24}, 1.0f, 0.7f), Value::number(2.0)});
  }
}

// Attention as a kernel of the kernel IR (lower_attention: the GPU's form of
// a fused attention's step). With f32 inputs it computes the interpreter's
// tiled online softmax bit for bit: blocks of queries and keys that are not
// whole, a head dim over one chunk, causal and not, broadcast batch dims,
// value dims wider than a K2 program's columns. With f16/bf16 inputs
// (FlashAttention-2's numerics: half products, exp2, P rounded to half) it
// is within the half-precision tolerance of the interpreter's result, at the
// head dims the GPU specializes and at others.
TEST(LowerRegion, AttentionKernelAgreesWithTheInterpreter) {
  struct Shape4 { int64_t b, sq, sk, d, dv; bool causal; DType dt; };
  for (const Shape4 c : {Shape4{2, 70, 90, 16, 24, false, DType::F32}, Shape4{2, 70, 90, 16, 24, true, DType::F32},
                         Shape4{2, 130, 40, 80, 8, true, DType::F32}, Shape4{2, 20, 30, 8, 150, false, DType::F32},
                         Shape4{3, 5, 5, 4, 4, false, DType::F16}, Shape4{2, 70, 90, 80, 80, true, DType::BF16},
                         Shape4{2, 33, 70, 128, 128, false, DType::F16}, Shape4{2, 17, 40, 256, 256, true, DType::BF16},
                         Shape4{2, 9, 12, 300, 40, false, DType::F16}}) {
    Region r;
    const int b = r.new_symbol(c.b), sq = r.new_symbol(c.sq), d = r.new_symbol(c.d), sk = r.new_symbol(c.sk),
              dv = r.new_symbol(c.dv);
    const int q = r.add_tensor_input(c.dt, {b, sq, d});
    const int k = r.add_tensor_input(c.dt, {kDimOne, sk, d});
    const int v = r.add_tensor_input(c.dt, {kDimOne, sk, dv});
    RegionAttrs at;
    at.causal = c.causal;
    r.outputs = {*r.add(OpId::Attention, {q, k, v}, at)};
    std::vector<Value> in = {wave_tensor(c.dt, {c.b, c.sq, c.d}, 1.0f, 0.1f), wave_tensor(c.dt, {1, c.sk, c.d}, 1.0f, 0.4f),
                             wave_tensor(c.dt, {1, c.sk, c.dv}, 1.0f, 0.7f)};
    const Value want = run_region_reference(r, in).at(0);
    const auto sym = bind_symbols(r, in);
    ASSERT_TRUE(sym.has_value());
    for (bool k3 : {false, true}) {
      RegionLowering opt;
      if (k3) opt.symbol_values.assign(sym->begin(), sym->end());
      const std::string what = "b " + std::to_string(c.b) + " sq " + std::to_string(c.sq) + " sk " + std::to_string(c.sk) +
                               " d " + std::to_string(c.d) + " dv " + std::to_string(c.dv) + (k3 ? " K3" : " K2");
      SCOPED_TRACE(what);
      for (int threads : {1, 0}) {
        const Value got = run_attention_kernel(r, in, *sym, opt, threads).at(0);
        if (c.dt == DType::F32) EXPECT_EQ(bytes(got), bytes(want));
        else EXPECT_LE(worst_error(got, want), 1e-2);
      }
    }
  }
}

// The consumers of attention's result fused into its write
// (attention_writes_outputs): elementwise operations with scalar, row and
// column broadcasts, two outputs, a cast to f16; f32 attention gives the
// interpreter's bits, f16 attention the half tolerance. A row operation
// after attention is not fused (the region's kernel reads the result).
TEST(LowerRegion, AttentionConsumersAreFusedIntoItsWrite) {
  for (const DType dt : {DType::F32, DType::F16}) {
    for (bool causal : {false, true}) {
      Region r;
      const int b = r.new_symbol(2), sq = r.new_symbol(40), d = r.new_symbol(16), sk = r.new_symbol(50),
                dv = r.new_symbol(24);
      const int q = r.add_tensor_input(dt, {b, sq, d});
      const int k = r.add_tensor_input(dt, {b, sk, d});
      const int v = r.add_tensor_input(dt, {b, sk, dv});
      const int bias = r.add_tensor_input(DType::F32, {dv});
      const int gate = r.add_tensor_input(DType::F32, {sq, kDimOne});
      const int s = r.add_scalar_input(ScalarKind::Float);
      RegionAttrs at;
      at.causal = causal;
      const int o = *r.add(OpId::Attention, {q, k, v}, at);
      const int y = *r.add(OpId::Add, {*r.add(OpId::Mul, {o, s}), bias});
      RegionAttrs to_half;
      to_half.cast_to = DType::F16;
      r.outputs = {*r.add(OpId::Mul, {*r.add(OpId::Gelu, {y}), gate}), *r.add(OpId::Cast, {*r.add(OpId::Relu, {o})}, to_half)};
      ASSERT_TRUE(attention_writes_outputs(r)) << r.str();
      std::vector<Value> in = {wave_tensor(dt, {2, 40, 16}, 1.0f, 0.1f), wave_tensor(dt, {2, 50, 16}, 1.0f, 0.4f),
                               wave_tensor(dt, {2, 50, 24}, 1.0f, 0.7f), wave_tensor(DType::F32, {24}, 0.5f, 0.2f),
                               wave_tensor(DType::F32, {40, 1}, 2.0f, 0.9f), Value::number(1.5)};
      const std::vector<Value> want = run_region_reference(r, in);
      const auto sym = bind_symbols(r, in);
      ASSERT_TRUE(sym.has_value());
      for (bool k3 : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + (causal ? " causal" : "") + (k3 ? " K3" : " K2"));
        RegionLowering opt;
        if (k3) opt.symbol_values.assign(sym->begin(), sym->end());
        const Kernel kern = lower_attention(r, "attention", opt, attention_tiles(r, opt));
        EXPECT_EQ(kern.params.size(), in.size() + 2);  // no param for attention's result
        const std::vector<Value> got = run_attention_kernel(r, in, *sym, opt, 0);
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(got[i].as_tensor()->dtype, want[i].as_tensor()->dtype);
          if (dt == DType::F32) EXPECT_EQ(bytes(got[i]), bytes(want[i])) << "output " << i;
          else EXPECT_LE(worst_error(got[i], want[i]), 1e-2) << "output " << i;
        }
      }
    }
  }
  Region r;
  const int q = r.add_tensor_input(DType::F32, {r.new_symbol(8), r.new_symbol(16)});
  const int k = r.add_tensor_input(DType::F32, {r.new_symbol(8), r.new_symbol(16)});
  const int o = *r.add(OpId::Attention, {q, k, k});
  RegionAttrs sm;
  sm.axis = -1;
  r.outputs = {*r.add(OpId::Softmax, {o}, sm)};
  EXPECT_FALSE(attention_writes_outputs(r));
  EXPECT_EQ(lower_attention(r, "attention").params.size(), 3u);  // q, k, and attention's result
}

}  // namespace
}  // namespace tessera::kir
