#include <set>
#include <string>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(OpTable, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const OpDef& d : op_table()) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_EQ(find_op(d.name), &d);
    EXPECT_LE(d.min_inputs, d.max_inputs);
    EXPECT_NE(d.kernel, nullptr);
    EXPECT_EQ(d.shape == nullptr, d.dtype == nullptr) << d.name;  // tensor ops have both
  }
  EXPECT_EQ(find_op("nope"), nullptr);
  EXPECT_STREQ(op_def(OpId::Add).display, "+");
  EXPECT_FALSE(op_def(OpId::Add).builtin);
}

TEST(OpTable, AttributesBindPositionallyOrByKeyword) {
  const OpDef& d = *find_op("layer_norm");
  ASSERT_EQ(d.attrs.size(), 3u);
  EXPECT_STREQ(d.attrs[2].name, "eps");
  Value x = make_t({1, 2}, {1, 2}), w = make_t({1, 1}, {2});
  std::vector<Value> pos = {x, w};
  CallArgs a;
  a.pos = pos;
  OpCall c = bind_op(d, a);
  EXPECT_EQ(c.inputs.size(), 1u);
  EXPECT_TRUE(c.attr("weight").is_tensor());
  EXPECT_TRUE(c.attr("bias").is_nil());
  EXPECT_DOUBLE_EQ(c.attr("eps").as_float(), 1e-5);
  // Keyword numbers may be ints.
  Value r = call("layer_norm", {x}, {{"eps", Value::integer(1)}});
  EXPECT_EQ(tensor_of(r).shape, (Shape{1, 2}));
  EXPECT_EQ(error_of([&] { call("layer_norm", {x}, {{"eps", make_str("a")}}); }),
            "layer_norm: eps must be a number, got str");
  EXPECT_EQ(error_of([&] { call("layer_norm", {x, Value::nil(), Value::nil(), Value::number(1e-5), Value::nil()}); }),
            "layer_norm() takes 1 to 4 arguments (5 given)");
}

TEST(OpTable, RunOpInfersShapeAndDtype) {
  Value a = make_t({1, 2, 3}, {3}, DType::I32);
  std::vector<Value> in = {a, Value::number(0.5)};
  Value r = call_op(OpId::Mul, in);
  EXPECT_EQ(tensor_of(r).dtype, DType::F32);
  EXPECT_EQ(vals(r), (std::vector<double>{0.5, 1, 1.5}));
  std::vector<Value> one = {a};
  EXPECT_EQ(call_op(OpId::Numel, one).as_int(), 3);
  // The scalar form skips binding entirely.
  std::vector<Value> s = {Value::number(9.0)};
  EXPECT_EQ(call_op(OpId::Sqrt, s).as_float(), 3.0);
}

TEST(OpTable, BuiltinDefsMirrorRows) {
  for (const BuiltinDef& b : tensor_builtins()) {
    const OpDef* d = find_op(b.name);
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(d->builtin);
    EXPECT_EQ(b.min_args, d->min_inputs);
    EXPECT_EQ(b.max_args, d->max_inputs + static_cast<int>(d->attrs.size()));
    EXPECT_EQ(b.accepts_kwargs, !d->attrs.empty());
  }
}

}  // namespace
}  // namespace tessera
