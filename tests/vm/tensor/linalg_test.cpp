#include <cmath>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

std::vector<double> filled(int64_t n, double phase) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(std::sin(0.7 * static_cast<double>(i) + phase));
  return v;
}

TEST(Matmul, TwoDAndVectors) {
  Value a = make_t({1, 2, 3, 4, 5, 6}, {2, 3}), b = make_t({7, 8, 9, 10, 11, 12}, {3, 2});
  Value c = tensor_binary(BinOp::MatMul, a, b);
  EXPECT_EQ(tensor_of(c).shape, (Shape{2, 2}));
  EXPECT_EQ(vals(c), (std::vector<double>{58, 64, 139, 154}));
  Value v = make_t({1, 1, 1}, {3});
  EXPECT_EQ(tensor_of(call("matmul", {a, v})).shape, (Shape{2}));
  EXPECT_EQ(vals(call("matmul", {a, v})), (std::vector<double>{6, 15}));
  EXPECT_EQ(vals(call("matmul", {make_t({1, 1}, {2}), a})), (std::vector<double>{5, 7, 9}));
  Value dot = call("matmul", {v, v});
  EXPECT_EQ(tensor_of(dot).rank(), 0u);
  EXPECT_EQ(vals(dot)[0], 3);
  Value ia = make_t({1, 2, 3, 4}, {2, 2}, DType::I64);
  Value ic = call("matmul", {ia, ia});
  EXPECT_EQ(tensor_of(ic).dtype, DType::I64);
  EXPECT_EQ(vals(ic), (std::vector<double>{7, 10, 15, 22}));
}

TEST(Matmul, BatchedBroadcastMatchesNaive) {
  Shape sa = {2, 1, 3, 4}, sb = {3, 4, 5};
  Value a = make_t(filled(24, 0), sa), b = make_t(filled(60, 1), sb);
  Value c = call("matmul", {a, b});
  ASSERT_EQ(tensor_of(c).shape, (Shape{2, 3, 3, 5}));
  std::vector<double> ref;
  auto da = vals(a), db = vals(b);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double s = 0;
          for (int k = 0; k < 4; ++k) s += da[i * 12 + m * 4 + k] * db[j * 20 + k * 5 + n];
          ref.push_back(s);
        }
  expect_close(vals(c), ref, 1e-5);
  // Half inputs: f32 accumulation, rounded once.
  Value ah = call("cast", {a, Value::dtype(DType::BF16)}), bh = call("cast", {b, Value::dtype(DType::BF16)});
  Value ch = call("matmul", {ah, bh});
  EXPECT_EQ(tensor_of(ch).dtype, DType::BF16);
  expect_close(vals(ch), ref, 2e-2);
}

TEST(Matmul, Errors) {
  Value a = make_tensor(DType::F32, {2, 3}), b = make_tensor(DType::F32, {4, 5});
  EXPECT_EQ(error_of([&] { call("matmul", {a, b}); }), "matmul: shapes [2, 3] and [4, 5] are incompatible");
  EXPECT_EQ(error_of([&] { tensor_binary(BinOp::MatMul, a, b); }),
            "matmul: shapes [2, 3] and [4, 5] are incompatible");
  EXPECT_EQ(error_of([&] { call("matmul", {make_tensor(DType::F32, {2, 2, 3}), make_tensor(DType::F32, {3, 3, 1})}); }),
            "matmul: shapes [2, 2, 3] and [3, 3, 1] are incompatible");
  EXPECT_EQ(error_of([&] { call("matmul", {make_tensor(DType::F32, {}), a}); }),
            "matmul: shapes [] and [2, 3] are incompatible");
  Value z = call("matmul", {make_tensor(DType::F32, {2, 0}), make_tensor(DType::F32, {0, 3})});
  EXPECT_EQ(vals(z), std::vector<double>(6, 0.0));
}

TEST(NN, Softmax) {
  Value t = make_t({1, 2, 3, 1000, 1000, 1000}, {2, 3});
  Value s = call("softmax", {t});
  double e1 = std::exp(1 - 3.0), e2 = std::exp(2 - 3.0), z = e1 + e2 + 1;
  expect_close(vals(s), {e1 / z, e2 / z, 1 / z, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-6);
  Value s0 = call("softmax", {t}, {{"axis", Value::integer(0)}});
  EXPECT_NEAR(vals(s0)[0], 0.0, 1e-6);
  EXPECT_NEAR(vals(s0)[3], 1.0, 1e-6);
  EXPECT_EQ(tensor_of(call("softmax", {make_t({1, 2}, {2}, DType::I64)})).dtype, DType::F32);
}

TEST(NN, LayerNormAndRmsNorm) {
  std::vector<double> d = {1, 2, 3, 4, -1, 0, 2, 7};
  Value x = make_t(d, {2, 4});
  Value w = make_t({0.5, 1, 2, -1}, {4}), b = make_t({0, 0.1, 0.2, 0.3}, {4});
  Value ln = call("layer_norm", {x}, {{"weight", w}, {"bias", b}});
  std::vector<double> ref, rref;
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0, ss = 0;
    for (int i = 0; i < 4; ++i) mean += d[r * 4 + i] / 4;
    for (int i = 0; i < 4; ++i) var += (d[r * 4 + i] - mean) * (d[r * 4 + i] - mean) / 4, ss += d[r * 4 + i] * d[r * 4 + i] / 4;
    double ww[4] = {0.5, 1, 2, -1}, bb[4] = {0, 0.1, 0.2, 0.3};
    for (int i = 0; i < 4; ++i) {
      ref.push_back((d[r * 4 + i] - mean) / std::sqrt(var + 1e-5) * ww[i] + bb[i]);
      rref.push_back(d[r * 4 + i] / std::sqrt(ss + 1e-6) * ww[i]);
    }
  }
  expect_close(vals(ln), ref, 1e-5);
  expect_close(vals(call("rms_norm", {x, w})), rref, 1e-5);
  EXPECT_EQ(error_of([&] { call("layer_norm", {x}, {{"weight", make_t({1, 2}, {2})}}); }),
            "layer_norm: weight shape [2] does not match input shape [2, 4]");
  EXPECT_EQ(error_of([&] { call("rms_norm", {x}, {{"bias", w}}); }), "rms_norm: unexpected keyword argument 'bias'");
}

// softmax(Q K^T * scale [masked]) V, all in double.
std::vector<double> naive_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, int B, int Sq, int Sk, int D, bool causal,
                                    double scale) {
  std::vector<double> out;
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < Sq; ++i) {
      std::vector<double> s(Sk, -INFINITY);
      double mx = -INFINITY;
      for (int j = 0; j < Sk; ++j) {
        if (causal && j > i) continue;
        double acc = 0;
        for (int c = 0; c < D; ++c) acc += q[(b * Sq + i) * D + c] * k[(b * Sk + j) * D + c];
        s[j] = acc * scale;
        mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (int j = 0; j < Sk; ++j) z += (s[j] = std::exp(s[j] - mx));
      for (int c = 0; c < D; ++c) {
        double acc = 0;
        for (int j = 0; j < Sk; ++j) acc += s[j] / z * v[(b * Sk + j) * D + c];
        out.push_back(acc);
      }
    }
  return out;
}

TEST(NN, AttentionMatchesNaive) {
  const int B = 2, Sq = 3, Sk = 5, D = 4;
  Value q = make_t(filled(B * Sq * D, 0.1), {B, Sq, D}), k = make_t(filled(B * Sk * D, 0.7), {B, Sk, D}),
        v = make_t(filled(B * Sk * D, 2.1), {B, Sk, D});
  for (bool causal : {false, true}) {
    Value o = call("attention", {q, k, v}, {{"causal", Value::boolean(causal)}});
    EXPECT_EQ(tensor_of(o).shape, (Shape{B, Sq, D}));
    expect_close(vals(o), naive_attention(vals(q), vals(k), vals(v), B, Sq, Sk, D, causal, 0.5), 1e-5);
  }
  Value o = call("attention", {q, k, v, Value::boolean(false), Value::number(0.3)});
  expect_close(vals(o), naive_attention(vals(q), vals(k), vals(v), B, Sq, Sk, D, false, 0.3), 1e-5);
  // f16 inputs: close to the f32 result
  Value qh = call("cast", {q, Value::dtype(DType::F16)}), kh = call("cast", {k, Value::dtype(DType::F16)}),
        vh = call("cast", {v, Value::dtype(DType::F16)});
  Value oh = call("attention", {qh, kh, vh});
  EXPECT_EQ(tensor_of(oh).dtype, DType::F16);
  expect_close(vals(oh), naive_attention(vals(q), vals(k), vals(v), B, Sq, Sk, D, false, 0.5), 5e-3);
  EXPECT_EQ(error_of([&] { call("attention", {q, make_tensor(DType::F32, {B, Sk, 3}), v}); }),
            "attention: shapes [2, 3, 4] and [2, 5, 3] are incompatible");
}

// Several blocks of queries and keys (64 each), rows and dims that are not
// whole blocks, causal and not, Sq against Sk both ways: the online softmax
// equals the double-precision reference to f32 rounding; no keys: zeros.
TEST(NN, AttentionOverManyBlocks) {
  const int B = 2, D = 70;
  for (auto [Sq, Sk] : {std::pair<int, int>{150, 200}, {200, 70}, {64, 64}}) {
    Value q = make_t(filled(B * Sq * D, 0.13), {B, Sq, D}), k = make_t(filled(B * Sk * D, 0.71), {B, Sk, D}),
          v = make_t(filled(B * Sk * D, 2.3), {B, Sk, D});
    for (bool causal : {false, true}) {
      Value o = call("attention", {q, k, v}, {{"causal", Value::boolean(causal)}});
      expect_close(vals(o), naive_attention(vals(q), vals(k), vals(v), B, Sq, Sk, D, causal, 1.0 / std::sqrt(70.0)),
                   2e-5);
    }
  }
  Value none = call("attention", {make_t(filled(6, 0.5), {2, 3}), make_tensor(DType::F32, {0, 3}),
                                  make_tensor(DType::F32, {0, 3})});
  EXPECT_EQ(vals(none), std::vector<double>(6, 0.0));
}

// x [outer, heads, n] -> [outer, heads * g, n], head h a copy of x's h / g:
// grouped-query attention's key/value heads written out by indexing.
std::vector<double> repeat_heads(const std::vector<double>& x, int outer, int heads, int g, int n) {
  std::vector<double> out;
  for (int b = 0; b < outer; ++b)
    for (int h = 0; h < heads * g; ++h)
      for (int i = 0; i < n; ++i) out.push_back(x[static_cast<size_t>((b * heads + h / g) * n + i)]);
  return out;
}

// Grouped-query attention (docs/language.md): q's head dim (the one before
// Sq) is g = 3 times k's and v's, so query head h reads key/value head h / 3.
// Against attention over k and v with their heads repeated by indexing (the
// same kernel per batch entry: the same bits) and the double-precision
// reference; f32 and f16 (the tiled path), i64 (the double path); Sq of 70
// is two query blocks per entry.
TEST(NN, GroupedQueryAttentionReadsKeyValueHeadHOverG) {
  const int B = 2, Hq = 6, Hkv = 2, G = 3, Sq = 70, Sk = 9, D = 4;
  const std::vector<double> kd = filled(B * Hkv * Sk * D, 0.9), vd = filled(B * Hkv * Sk * D, 1.7);
  const Value q = make_t(filled(B * Hq * Sq * D, 0.2), {B, Hq, Sq, D});
  const Value k = make_t(kd, {B, Hkv, Sk, D}), v = make_t(vd, {B, Hkv, Sk, D});
  const Value kr = make_t(repeat_heads(kd, B, Hkv, G, Sk * D), {B, Hq, Sk, D}),
              vr = make_t(repeat_heads(vd, B, Hkv, G, Sk * D), {B, Hq, Sk, D});
  for (DType dt : {DType::F32, DType::F16, DType::I64}) {
    // i64: the values times 3, rounded, so that they are not all zeros.
    const auto as = [&](const Value& x) {
      if (dt != DType::I64) return call("cast", {x, Value::dtype(dt)});
      std::vector<double> r;
      for (double e : vals(x)) r.push_back(std::round(e * 3));
      return make_t(r, tensor_of(x).shape, dt);
    };
    const Value qc = as(q), kc = as(k), vc = as(v), krc = as(kr), vrc = as(vr);
    for (bool causal : {false, true}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + (causal ? " causal" : ""));
      const Kw kw = {{"causal", Value::boolean(causal)}};
      const Value o = call("attention", {qc, kc, vc}, kw);
      EXPECT_EQ(tensor_of(o).shape, (Shape{B, Hq, Sq, D}));
      EXPECT_EQ(tensor_of(o).dtype, float_result_dtype(dt));
      EXPECT_EQ(vals(o), vals(call("attention", {qc, krc, vrc}, kw)));
      expect_close(vals(o), naive_attention(vals(qc), vals(krc), vals(vrc), B * Hq, Sq, Sk, D, causal, 0.5),
                   dt == DType::F16 ? 5e-3 : 1e-5);
    }
  }
}

// Ranks that differ align right, as broadcasting does: q [6, Sq, D] with k
// and v [3, 2, Sk, D] gives [3, 6, Sq, D], entry b reading k[b] and v[b].
TEST(NN, GroupedQueryAttentionBroadcastsTheOtherBatchDims) {
  const int Hq = 6, Hkv = 2, Sq = 4, Sk = 5, D = 3;
  const std::vector<double> qd = filled(Hq * Sq * D, 0.4), kd = filled(3 * Hkv * Sk * D, 1.1),
                            vd = filled(3 * Hkv * Sk * D, 2.6);
  std::vector<double> qrep;
  for (int b = 0; b < 3; ++b) qrep.insert(qrep.end(), qd.begin(), qd.end());
  const Value o = call("attention", {make_t(qd, {Hq, Sq, D}), make_t(kd, {3, Hkv, Sk, D}), make_t(vd, {3, Hkv, Sk, D})},
                       {{"causal", Value::boolean(true)}});
  ASSERT_EQ(tensor_of(o).shape, (Shape{3, Hq, Sq, D}));
  expect_close(vals(o),
               naive_attention(qrep, repeat_heads(kd, 3, Hkv, 3, Sk * D), repeat_heads(vd, 3, Hkv, 3, Sk * D), 3 * Hq,
                               Sq, Sk, D, true, 1.0 / std::sqrt(3.0)),
               1e-5);
}

TEST(NN, GroupedQueryAttentionErrors) {
  const auto attn = [](Shape q, Shape k, Shape v) {
    return error_of([&] {
      call("attention", {make_tensor(DType::F32, q), make_tensor(DType::F32, k), make_tensor(DType::F32, v)});
    });
  };
  EXPECT_EQ(attn({1, 6, 8, 16}, {1, 4, 8, 16}, {1, 4, 8, 16}), "attention: q has 6 heads, which is not a multiple of k's 4");
  EXPECT_EQ(attn({2, 8, 16}, {4, 8, 16}, {4, 8, 16}), "attention: q has 2 heads, which is not a multiple of k's 4");
  // k's and v's heads differ: not grouped.
  EXPECT_EQ(attn({1, 4, 8, 16}, {1, 2, 8, 16}, {1, 4, 8, 16}),
            "attention: shapes [1, 4, 8, 16] and [1, 2, 8, 16] are incompatible");
  // Heads that group, another batch dim that does not broadcast.
  EXPECT_EQ(attn({2, 4, 8, 16}, {3, 2, 8, 16}, {3, 2, 8, 16}),
            "attention: shapes [2, 4, 8, 16] and [3, 2, 8, 16] are incompatible");
  // A 1 still broadcasts, either side.
  EXPECT_EQ(attn({1, 4, 8, 16}, {1, 1, 8, 16}, {1, 1, 8, 16}), "<no error>");
  EXPECT_EQ(attn({1, 1, 8, 16}, {1, 4, 8, 16}, {1, 4, 8, 16}), "<no error>");
  EXPECT_EQ(attention_shape({1, 4, 8, 16}, {1, 2, 8, 16}, {1, 2, 8, 32}, "attention"), (Shape{1, 4, 8, 32}));
  EXPECT_EQ(attention_shape({1, 1, 8, 16}, {1, 4, 8, 16}, {1, 4, 8, 16}, "attention"), (Shape{1, 4, 8, 16}));
}

}  // namespace
}  // namespace tessera
