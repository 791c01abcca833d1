#include <cmath>
#include <functional>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

// Naive broadcast reference: out[idx] = f(a[bidx], b[bidx]).
std::vector<double> ref_broadcast(const std::vector<double>& a, const Shape& sa, const std::vector<double>& b,
                                  const Shape& sb, const Shape& so, const std::function<double(double, double)>& f) {
  int64_t n = 1;
  for (auto d : so) n *= d;
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) {
    // Decompose i into a multi-index of `so`, then map to each input.
    std::vector<int64_t> idx(so.size());
    int64_t r = i;
    for (size_t d = so.size(); d-- > 0;) idx[d] = r % so[d], r /= so[d];
    auto flat = [&](const Shape& s) {
      int64_t off = 0;
      size_t lead = so.size() - s.size();
      for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
      return off;
    };
    out[i] = f(a[flat(sa)], b[flat(sb)]);
  }
  return out;
}

std::vector<double> seq(int n, double start = 0.5, double step = 0.75) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + step * i * (i % 2 ? -1 : 1));
  return v;
}

TEST(Elementwise, BinaryBroadcastMatchesReference) {
  struct Case { Shape a, b, out; };
  const Case cases[] = {{{2, 3}, {2, 3}, {2, 3}}, {{2, 3}, {3}, {2, 3}}, {{4, 1, 3}, {2, 1}, {4, 2, 3}},
                        {{1}, {5}, {5}}, {{}, {2, 2}, {2, 2}}, {{3, 1}, {1, 4}, {3, 4}}};
  struct OpCase { BinOp op; std::function<double(double, double)> f; };
  const OpCase ops[] = {{BinOp::Add, std::plus<double>()}, {BinOp::Sub, std::minus<double>()},
                        {BinOp::Mul, std::multiplies<double>()}, {BinOp::Div, std::divides<double>()},
                        {BinOp::Pow, [](double x, double y) { return std::pow(std::fabs(x), y); }}};
  for (const Case& c : cases)
    for (const OpCase& o : ops) {
      int64_t na = 1, nb = 1;
      for (auto d : c.a) na *= d;
      for (auto d : c.b) nb *= d;
      std::vector<double> da = seq(static_cast<int>(na)), db = seq(static_cast<int>(nb), 1.25, 0.5);
      if (o.op == BinOp::Pow)
        for (double& x : da) x = std::fabs(x);
      Value a = make_t(da, c.a), b = make_t(db, c.b);
      Value r = tensor_binary(o.op, a, b);
      EXPECT_EQ(tensor_of(r).shape, c.out);
      std::vector<double> fa(da.begin(), da.end()), fb(db.begin(), db.end());
      auto ref = ref_broadcast(fa, c.a, fb, c.b, c.out, [&](double x, double y) {
        return static_cast<double>(static_cast<float>(o.f(x, y)));
      });
      expect_close(vals(r), ref, 1e-6);
    }
}

TEST(Elementwise, HalfInputsRoundOnce) {
  std::vector<double> da = {1.5, -2.25, 3.0, 1000.0}, db = {0.1, 0.2, 0.3, 0.4};
  for (DType dt : {DType::F16, DType::BF16}) {
    Value a = make_t(da, {4}, dt), b = make_t(db, {4}, dt);
    Value r = tensor_binary(BinOp::Mul, a, b);
    EXPECT_EQ(tensor_of(r).dtype, dt);
    for (int i = 0; i < 4; ++i) {
      float x = static_cast<float>(tensor_of(a).get_f(i)), y = static_cast<float>(tensor_of(b).get_f(i));
      double expect = dt == DType::F16 ? f16_to_f32(f32_to_f16(x * y)) : bf16_to_f32(f32_to_bf16(x * y));
      EXPECT_EQ(vals(r)[i], expect);
    }
  }
  // f16 with bf16 -> f32
  Value m = tensor_binary(BinOp::Add, make_t({1}, {1}, DType::F16), make_t({1}, {1}, DType::BF16));
  EXPECT_EQ(tensor_of(m).dtype, DType::F32);
}

TEST(Elementwise, ResultDtypes) {
  Value i32 = make_t({1, 2}, {2}, DType::I32), i64 = make_t({1, 2}, {2}, DType::I64);
  Value f16 = make_t({1, 2}, {2}, DType::F16), bl = make_t({1, 0}, {2}, DType::Bool);
  auto dt = [](const Value& v) { return tensor_of(v).dtype; };
  EXPECT_EQ(dt(tensor_binary(BinOp::Add, i32, Value::integer(3))), DType::I32);
  EXPECT_EQ(dt(tensor_binary(BinOp::Add, i32, Value::number(0.5))), DType::F32);
  EXPECT_EQ(dt(tensor_binary(BinOp::Mul, Value::number(2.0), f16)), DType::F16);
  EXPECT_EQ(dt(tensor_binary(BinOp::Div, i64, i64)), DType::F32);
  EXPECT_EQ(dt(tensor_binary(BinOp::Add, bl, Value::integer(1))), DType::I64);
  EXPECT_EQ(dt(tensor_binary(BinOp::Add, i32, i64)), DType::I64);
  EXPECT_EQ(dt(tensor_binary(BinOp::Add, bl, bl)), DType::Bool);
  EXPECT_EQ(dt(tensor_compare(CmpOp::Lt, f16, i64)), DType::Bool);
  EXPECT_EQ(vals(tensor_binary(BinOp::Div, i64, Value::integer(4))), (std::vector<double>{0.25, 0.5}));
}

TEST(Elementwise, IntegerSemantics) {
  Value a = make_t({7, -7, 7, -7}, {4}, DType::I64), b = make_t({2, 2, -2, -2}, {4}, DType::I64);
  EXPECT_EQ(vals(tensor_binary(BinOp::IDiv, a, b)), (std::vector<double>{3, -4, -4, 3}));
  EXPECT_EQ(vals(tensor_binary(BinOp::Mod, a, b)), (std::vector<double>{1, 1, -1, -1}));
  EXPECT_EQ(vals(tensor_binary(BinOp::Pow, a, Value::integer(2))), (std::vector<double>{49, 49, 49, 49}));
  EXPECT_EQ(error_of([&] { tensor_binary(BinOp::IDiv, a, Value::integer(0)); }), "division by zero");
  EXPECT_EQ(error_of([&] { tensor_binary(BinOp::Mod, a, make_t({0}, {1}, DType::I64)); }), "division by zero");
  // i32 wraps around
  Value big = make_t({2147483647.0}, {1}, DType::I32);
  EXPECT_EQ(vals(tensor_binary(BinOp::Add, big, Value::integer(1)))[0], -2147483648.0);
  // float floor division / modulo
  Value fa = make_t({7, -7}, {2}), fb = make_t({2, 2}, {2});
  EXPECT_EQ(vals(tensor_binary(BinOp::IDiv, fa, fb)), (std::vector<double>{3, -4}));
  EXPECT_EQ(vals(tensor_binary(BinOp::Mod, fa, fb)), (std::vector<double>{1, 1}));
}

TEST(Elementwise, ComparisonsAndEquality) {
  Value a = make_t({1, 2, 3}, {3}), b = make_t({3, 2, 1}, {3}, DType::I64);
  Value eq = tensor_compare(CmpOp::Eq, a, b);
  EXPECT_EQ(tensor_of(eq).dtype, DType::Bool);
  EXPECT_EQ(vals(eq), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(vals(tensor_compare(CmpOp::Lt, a, b)), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(vals(tensor_compare(CmpOp::Ge, a, Value::integer(2))), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(vals(tensor_compare(CmpOp::Ne, Value::number(2.0), a)), (std::vector<double>{1, 0, 1}));
  Value nan = make_t({NAN}, {1});
  EXPECT_EQ(vals(tensor_compare(CmpOp::Eq, nan, nan))[0], 0);
}

TEST(Elementwise, ShapeErrorsUseOperatorSymbol) {
  Value a = make_tensor(DType::F32, {2, 3}), b = make_tensor(DType::F32, {4});
  EXPECT_EQ(error_of([&] { tensor_binary(BinOp::Add, a, b); }), "+: shapes [2, 3] and [4] are incompatible");
  EXPECT_EQ(error_of([&] { tensor_compare(CmpOp::Le, a, b); }), "<=: shapes [2, 3] and [4] are incompatible");
  EXPECT_EQ(error_of([&] { call("max", {a, b}); }), "max: shapes [2, 3] and [4] are incompatible");
  EXPECT_EQ(error_of([&] { tensor_binary(BinOp::Add, a, make_str("x")); }), "+: expected tensor or number, got str");
}

TEST(Elementwise, UnaryTensorsMatchReference) {
  std::vector<double> d = {-2.5, -1, -0.25, 0, 0.3, 1, 2.75};
  struct U { const char* name; std::function<double(double)> f; };
  const U ops[] = {{"abs", [](double x) { return std::fabs(x); }},
                   {"exp", [](double x) { return std::exp(x); }},
                   {"tanh", [](double x) { return std::tanh(x); }},
                   {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
                   {"relu", [](double x) { return x > 0 ? x : 0; }},
                   {"gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
                   {"silu", [](double x) { return x / (1 + std::exp(-x)); }},
                   {"sin", [](double x) { return std::sin(x); }},
                   {"cos", [](double x) { return std::cos(x); }}};
  for (const U& u : ops) {
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      Value r = call(u.name, {make_t(d, {7}, dt)});
      EXPECT_EQ(tensor_of(r).dtype, dt);
      std::vector<double> in = vals(make_t(d, {7}, dt)), ref;
      for (double x : in) ref.push_back(u.f(x));
      expect_close(vals(r), ref, dt == DType::F32 ? 1e-6 : dt == DType::F16 ? 2e-3 : 1e-2);
    }
  }
  Value pos = make_t({0.25, 4, 9}, {3});
  expect_close(vals(call("sqrt", {pos})), {0.5, 2, 3}, 1e-7);
  expect_close(vals(call("rsqrt", {pos})), {2, 0.5, 1.0 / 3}, 1e-7);
  expect_close(vals(call("log", {pos})), {std::log(0.25), std::log(4), std::log(9)}, 1e-7);
  // int tensors: abs/relu keep the dtype, the rest give f32
  Value i = make_t({-3, 4}, {2}, DType::I64);
  EXPECT_EQ(tensor_of(call("abs", {i})).dtype, DType::I64);
  EXPECT_EQ(vals(call("abs", {i})), (std::vector<double>{3, 4}));
  EXPECT_EQ(tensor_of(call("relu", {i})).dtype, DType::I64);
  EXPECT_EQ(tensor_of(call("exp", {i})).dtype, DType::F32);
  EXPECT_EQ(vals(tensor_neg(i)), (std::vector<double>{3, -4}));
  EXPECT_EQ(error_of([&] { call("abs", {make_t({1}, {1}, DType::Bool)}); }), "abs: not supported for bool tensors");
}

TEST(Elementwise, ScalarForms) {
  EXPECT_EQ(call("sqrt", {Value::number(4.0)}).as_float(), 2.0);
  EXPECT_TRUE(call("sqrt", {Value::integer(2)}).is_float());
  EXPECT_TRUE(std::isnan(call("sqrt", {Value::number(-1.0)}).as_float()));
  EXPECT_EQ(call("log", {Value::integer(0)}).as_float(), -INFINITY);
  Value ab = call("abs", {Value::integer(-5)});
  EXPECT_TRUE(ab.is_int());
  EXPECT_EQ(ab.as_int(), 5);
  EXPECT_TRUE(call("abs", {Value::number(-5.0)}).is_float());
  EXPECT_TRUE(call("relu", {Value::integer(-5)}).is_int());
  EXPECT_EQ(error_of([] { call("abs", {Value::boolean(true)}); }), "abs: expected number or tensor, got bool");
  EXPECT_EQ(error_of([] { call("exp", {make_str("x")}); }), "exp: expected number or tensor, got str");
  // min/max return the chosen operand unchanged; ties pick the first.
  Value m = call("min", {Value::integer(3), Value::number(3.0)});
  EXPECT_TRUE(m.is_int());
  Value mx = call("max", {Value::number(2.0), Value::integer(2)});
  EXPECT_TRUE(mx.is_float());
  EXPECT_EQ(call("max", {Value::integer(1), Value::number(2.5)}).as_float(), 2.5);
  EXPECT_EQ(call("min", {Value::integer(-1), Value::integer(2)}).as_int(), -1);
  // With a tensor: elementwise.
  Value t = call("max", {make_t({1, 5, -2}, {3}), Value::integer(0)});
  EXPECT_EQ(vals(t), (std::vector<double>{1, 5, 0}));
  EXPECT_EQ(vals(call("min", {make_t({1, 5}, {2}), make_t({3, 2}, {2})})), (std::vector<double>{1, 2}));
}

TEST(Elementwise, WhereAndCast) {
  Value c = make_t({1, 0, 1}, {3}, DType::Bool);
  Value r = call("where", {c, make_t({1, 2, 3}, {3}), Value::integer(-1)});
  EXPECT_EQ(vals(r), (std::vector<double>{1, -1, 3}));
  EXPECT_EQ(tensor_of(r).dtype, DType::F32);
  Value r2 = call("where", {make_t({1, 0}, {2, 1}, DType::Bool), make_t({1, 2, 3}, {3}, DType::I32),
                            make_t({9}, {1}, DType::I64)});
  EXPECT_EQ(tensor_of(r2).shape, (Shape{2, 3}));
  EXPECT_EQ(tensor_of(r2).dtype, DType::I64);
  EXPECT_EQ(vals(r2), (std::vector<double>{1, 2, 3, 9, 9, 9}));
  EXPECT_EQ(error_of([] { call("where", {make_t({1}, {1}), Value::integer(1), Value::integer(2)}); }),
            "where: condition must be bool, got f32 tensor");
  Value f = make_t({1.7, -1.7, 0, 3e9}, {4});
  EXPECT_EQ(vals(call("cast", {f, Value::dtype(DType::I64)})), (std::vector<double>{1, -1, 0, 3e9}));
  EXPECT_EQ(vals(call("cast", {f}, {{"dtype", Value::dtype(DType::Bool)}})), (std::vector<double>{1, 1, 0, 1}));
  EXPECT_EQ(vals(call("cast", {f, Value::dtype(DType::F16)}))[0], f16_to_f32(f32_to_f16(1.7f)));
  EXPECT_EQ(error_of([&] { call("cast", {f}); }), "cast: missing argument 'dtype'");
}

}  // namespace
}  // namespace tessera
