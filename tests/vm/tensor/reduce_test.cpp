#include <cmath>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(Reduce, AllAndAxis) {
  Value t = make_t({1, 2, 3, 4, 5, 6}, {2, 3});
  Value s = call("sum", {t});
  EXPECT_EQ(tensor_of(s).rank(), 0u);
  EXPECT_EQ(vals(s)[0], 21);
  EXPECT_EQ(vals(call("sum", {t}, {{"axis", Value::integer(0)}})), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(vals(call("sum", {t, Value::integer(-1)})), (std::vector<double>{6, 15}));
  Value k = call("mean", {t}, {{"axis", Value::integer(1)}, {"keepdim", Value::boolean(true)}});
  EXPECT_EQ(tensor_of(k).shape, (Shape{2, 1}));
  EXPECT_EQ(vals(k), (std::vector<double>{2, 5}));
  EXPECT_EQ(tensor_of(call("sum", {t}, {{"keepdim", Value::boolean(true)}})).shape, (Shape{1, 1}));
  EXPECT_EQ(vals(call("amax", {t, Value::integer(0)})), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(vals(call("amin", {t})), (std::vector<double>{1}));
  Value am = call("argmax", {make_t({1, 7, 7, 2, 9, 0}, {2, 3}), Value::integer(1)});
  EXPECT_EQ(tensor_of(am).dtype, DType::I64);
  EXPECT_EQ(vals(am), (std::vector<double>{1, 1}));  // first max
  EXPECT_EQ(vals(call("argmax", {make_t({1, 7, 7, 2, 9, 0}, {2, 3})}))[0], 4);
}

TEST(Reduce, Dtypes) {
  Value i = make_t({1, 2, 4}, {3}, DType::I32);
  EXPECT_EQ(tensor_of(call("sum", {i})).dtype, DType::I64);
  EXPECT_EQ(tensor_of(call("sum", {make_t({1, 1, 0}, {3}, DType::Bool)})).dtype, DType::I64);
  EXPECT_EQ(vals(call("sum", {make_t({1, 1, 0}, {3}, DType::Bool)}))[0], 2);
  Value m = call("mean", {i});
  EXPECT_EQ(tensor_of(m).dtype, DType::F32);
  EXPECT_NEAR(vals(m)[0], 7.0 / 3, 1e-6);
  EXPECT_EQ(tensor_of(call("amax", {i})).dtype, DType::I32);
  EXPECT_EQ(tensor_of(call("mean", {make_t({1, 2}, {2}, DType::F16)})).dtype, DType::F16);
}

TEST(Reduce, MatchesNaiveOn3D) {
  std::vector<double> d;
  for (int i = 0; i < 24; ++i) d.push_back(std::sin(i));
  Value t = make_t(d, {2, 3, 4});
  for (int ax = 0; ax < 3; ++ax) {
    Value s = call("sum", {t, Value::integer(ax)});
    Shape shp = {2, 3, 4};
    std::vector<double> ref(tensor_of(s).numel, 0.0);
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 4; ++c) {
          int idx[3] = {a, b, c};
          int o = 0;
          for (int k = 0; k < 3; ++k)
            if (k != ax) o = o * static_cast<int>(shp[k]) + idx[k];
          ref[o] += static_cast<float>(d[(a * 3 + b) * 4 + c]);
        }
    expect_close(vals(s), ref, 1e-6);
  }
}

TEST(Reduce, Errors) {
  Value t = make_t({1, 2}, {2});
  EXPECT_EQ(error_of([&] { call("sum", {t, Value::integer(1)}); }),
            "sum: axis 1 is out of range for a tensor of rank 1");
  EXPECT_EQ(error_of([&] { call("sum", {t}, {{"axis", Value::number(0.0)}}); }),
            "sum: axis must be int or nil, got float");
  EXPECT_EQ(error_of([&] { call("amax", {make_tensor(DType::F32, {0})}); }), "amax: empty tensor");
  EXPECT_EQ(vals(call("sum", {make_tensor(DType::F32, {0})}))[0], 0);
  EXPECT_EQ(error_of([&] { call("sum", {Value::integer(3)}); }), "sum: expected tensor, got int");
}

}  // namespace
}  // namespace tessera
