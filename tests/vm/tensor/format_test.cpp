#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(Format, Basic) {
  EXPECT_EQ(fmt(make_t({1, 2, 3, 4, 5, 6}, {2, 3})), "tensor(shape=[2, 3], dtype=f32) [[1, 2, 3], [4, 5, 6]]");
  EXPECT_EQ(fmt(make_t({1, 2, 3, 4}, {2, 2}, DType::I64)), "tensor(shape=[2, 2], dtype=i64) [[1, 2], [3, 4]]");
  EXPECT_EQ(fmt(make_t({0.5, -1.25, 1e-7}, {3})), "tensor(shape=[3], dtype=f32) [0.5, -1.25, 1e-07]");
  EXPECT_EQ(fmt(make_t({1, 0}, {2}, DType::Bool)), "tensor(shape=[2], dtype=bool) [true, false]");
  EXPECT_EQ(fmt(make_t({0.1}, {1}, DType::F16)), "tensor(shape=[1], dtype=f16) [0.0999756]");
}

TEST(Format, ZeroDAndEmpty) {
  EXPECT_EQ(fmt(make_t({3.5}, {})), "tensor(shape=[], dtype=f32) 3.5");
  EXPECT_EQ(fmt(make_tensor(DType::F32, {0})), "tensor(shape=[0], dtype=f32) []");
  EXPECT_EQ(fmt(make_tensor(DType::I32, {2, 0})), "tensor(shape=[2, 0], dtype=i32) [[], []]");
  EXPECT_EQ(fmt(make_t({NAN, -NAN, INFINITY, -INFINITY}, {4})), "tensor(shape=[4], dtype=f32) [nan, nan, inf, -inf]");
}

TEST(Format, Truncation) {
  Value a = call("arange", {Value::integer(10)});
  EXPECT_EQ(fmt(a), "tensor(shape=[10], dtype=i64) [0, 1, 2, ..., 7, 8, 9]");
  Value six = call("arange", {Value::integer(6)});
  EXPECT_EQ(fmt(six), "tensor(shape=[6], dtype=i64) [0, 1, 2, 3, 4, 5]");
  Value m = call("reshape", {call("arange", {Value::integer(14)}), ilist({7, 2})});
  EXPECT_EQ(fmt(m), "tensor(shape=[7, 2], dtype=i64) [[0, 1], [2, 3], [4, 5], ..., [8, 9], [10, 11], [12, 13]]");
  Value n = call("zeros", {ilist({2, 8})}, {{"dtype", Value::dtype(DType::Bool)}});
  EXPECT_EQ(fmt(n), "tensor(shape=[2, 8], dtype=bool) [[false, false, false, ..., false, false, false], "
                    "[false, false, false, ..., false, false, false]]");
}

}  // namespace
}  // namespace tessera
