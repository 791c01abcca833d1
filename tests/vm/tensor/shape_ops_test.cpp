#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

Value iota(Shape s) {
  Value v = make_tensor(DType::F32, s);
  for (int64_t i = 0; i < tensor_of(v).numel; ++i) tensor_of(v).set_f(i, static_cast<double>(i));
  return v;
}

TEST(ShapeOps, Reshape) {
  Value t = iota({2, 3});
  Value r = call("reshape", {t, ilist({3, -1})});
  EXPECT_EQ(tensor_of(r).shape, (Shape{3, 2}));
  EXPECT_EQ(vals(r), vals(t));
  EXPECT_NE(r.as_tensor(), t.as_tensor());  // a copy
  EXPECT_EQ(error_of([&] { call("reshape", {t, ilist({4, -1})}); }),
            "reshape: cannot reshape tensor of shape [2, 3] into shape [4, -1]");
  EXPECT_EQ(error_of([&] { call("reshape", {t, ilist({-1, -1})}); }), "reshape: only one -1 allowed in shape");
  EXPECT_EQ(tensor_of(call("reshape", {t, ilist({6})})).shape, (Shape{6}));
  EXPECT_EQ(tensor_of(call("reshape", {iota({1}), ilist({})})).rank(), 0u);
}

TEST(ShapeOps, TransposePermute) {
  Value t = iota({2, 3});
  Value tr = call("transpose", {t, Value::integer(0), Value::integer(-1)});
  EXPECT_EQ(tensor_of(tr).shape, (Shape{3, 2}));
  EXPECT_EQ(vals(tr), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Value p = call("permute", {iota({2, 3, 4}), ilist({2, 0, 1})});
  EXPECT_EQ(tensor_of(p).shape, (Shape{4, 2, 3}));
  // p[c, a, b] = a*12 + b*4 + c
  auto pv = vals(p);
  for (int c = 0; c < 4; ++c)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b) EXPECT_EQ(pv[(c * 2 + a) * 3 + b], a * 12 + b * 4 + c);
  EXPECT_EQ(error_of([&] { call("permute", {t, ilist({0, 0})}); }),
            "permute: dims must be a permutation of 0..2 for a tensor of shape [2, 3]");
  EXPECT_EQ(error_of([&] { call("transpose", {t, Value::integer(0), Value::integer(2)}); }),
            "transpose: axis 2 is out of range for a tensor of rank 2");
}

TEST(ShapeOps, Concat) {
  Value a = iota({2, 2}), b = make_t({9, 9}, {2, 1}, DType::I64);
  Value c = call("concat", {make_list({a, b})}, {{"axis", Value::integer(1)}});
  EXPECT_EQ(tensor_of(c).shape, (Shape{2, 3}));
  EXPECT_EQ(tensor_of(c).dtype, DType::F32);
  EXPECT_EQ(vals(c), (std::vector<double>{0, 1, 9, 2, 3, 9}));
  Value c0 = call("concat", {make_list({a, a})});
  EXPECT_EQ(vals(c0), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(error_of([&] { call("concat", {make_list({a, b})}); }), "concat: shapes [2, 2] and [2, 1] are incompatible");
  EXPECT_EQ(error_of([&] { call("concat", {make_list({})}); }), "concat: expected a non-empty list of tensors");
}

TEST(ShapeOps, Slice) {
  Value t = iota({3, 4});
  Value s = call("slice", {t, Value::integer(1), Value::integer(1), Value::integer(3)});
  EXPECT_EQ(tensor_of(s).shape, (Shape{3, 2}));
  EXPECT_EQ(vals(s), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  Value s2 = call("slice", {t, Value::integer(0), Value::integer(-1), Value::nil()});
  EXPECT_EQ(vals(s2), (std::vector<double>{8, 9, 10, 11}));
  Value e = call("slice", {t, Value::integer(0), Value::integer(2), Value::integer(1)});
  EXPECT_EQ(tensor_of(e).shape, (Shape{0, 4}));
  Value big = call("slice", {t, Value::integer(0), Value::integer(0), Value::integer(100)});
  EXPECT_EQ(tensor_of(big).shape, (Shape{3, 4}));
}

}  // namespace
}  // namespace tessera
