// The mappings generated from the elementwise table (vm/tensor/elementwise_ops.def)
// round-trip: each operation's Graph IR op names it back, the built-in of
// its name is that op, operators reach the op of their own symbol, and the
// int rule the table states is the one the kernels follow.
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "test_util.h"
#include "vm/core/operators.h"
#include "vm/tensor/elementwise_ops.h"

namespace tessera {
namespace {

using namespace testing;

TEST(ElementwiseTable, EveryUnaryRoundTripsThroughItsGraphOp) {
  std::set<std::string> names;
  for (int i = 0; i < kNumUnary; ++i) {
    const Unary u = static_cast<Unary>(i);
    const std::string name = unary_op_name(u);
    EXPECT_TRUE(names.insert(name).second) << name;
    const OpDef& d = op_def(graph_op(u));
    EXPECT_EQ(d.fusion.kind, FusionKind::Unary) << name;
    EXPECT_EQ(d.fusion.unary(), u) << name;
    EXPECT_EQ(d.name, name);
    EXPECT_STREQ(d.display, unary_display(u));
    EXPECT_EQ(find_op(name), &d);
    // A built-in takes numbers too; unary minus is only an operator.
    EXPECT_EQ(d.scalar != nullptr, d.builtin) << name;
  }
}

TEST(ElementwiseTable, EveryBinaryRoundTripsThroughItsGraphOp) {
  std::set<OpId> ops;
  for (int i = 0; i < kNumBinary; ++i) {
    const Binary b = static_cast<Binary>(i);
    const OpDef& d = op_def(graph_op(b));
    EXPECT_TRUE(ops.insert(d.id).second) << d.name;
    EXPECT_EQ(d.fusion.kind, FusionKind::Binary) << d.name;
    EXPECT_EQ(d.fusion.binary(), b) << d.name;
  }
}

// No Graph IR op fuses as an elementwise operation other than through the table.
TEST(ElementwiseTable, EveryElementwiseGraphOpIsARow) {
  for (const OpDef& d : op_table()) {
    if (d.fusion.kind == FusionKind::Unary) {
      EXPECT_EQ(graph_op(d.fusion.unary()), d.id) << d.name;
    } else if (d.fusion.kind == FusionKind::Binary) {
      EXPECT_EQ(graph_op(d.fusion.binary()), d.id) << d.name;
    }
  }
}

TEST(ElementwiseTable, OperatorsReachTheOpOfTheirSymbol) {
  for (int i = 0; i < kNumBinOps; ++i) {
    const BinOp op = static_cast<BinOp>(i);
    if (!has_binary(op)) {
      EXPECT_EQ(op, BinOp::MatMul);
      continue;
    }
    EXPECT_STREQ(op_def(graph_op(to_binary(op))).display, binop_symbol(op));
  }
  for (int i = 0; i < kNumCmpOps; ++i) {
    const CmpOp op = static_cast<CmpOp>(i);
    EXPECT_STREQ(op_def(graph_op(to_binary(op))).display, cmpop_symbol(op));
  }
}

TEST(ElementwiseTable, KeepsIntIsWhatTheKernelsDo) {
  for (int i = 0; i < kNumUnary; ++i) {
    const Unary u = static_cast<Unary>(i);
    const Value r = unary_scalar(u, Value::integer(3), unary_display(u));
    EXPECT_EQ(r.is_int(), keeps_int(u)) << unary_op_name(u);
    EXPECT_EQ(unary_dtype(u, DType::I64, unary_display(u)) == DType::I64, keeps_int(u)) << unary_op_name(u);
  }
}

// softplus and erf, the table's newest rows, on numbers and tensors.
TEST(ElementwiseTable, SoftplusAndErfOnNumbersAndTensors) {
  const double inf = std::numeric_limits<double>::infinity();
  auto sp = [](Value x) { return call("softplus", {x}); };
  EXPECT_DOUBLE_EQ(sp(Value::number(0.0)).as_float(), std::log(2.0));
  EXPECT_DOUBLE_EQ(sp(Value::integer(0)).as_float(), std::log(2.0));
  EXPECT_EQ(sp(Value::number(1000.0)).as_float(), 1000.0);  // no overflow to inf
  EXPECT_EQ(sp(Value::number(-1000.0)).as_float(), 0.0);
  // Not lost to the 1: log(1 + e^-30) in double would be 9.3259e-14.
  EXPECT_NEAR(sp(Value::number(-30.0)).as_float(), std::exp(-30.0), 1e-26);
  EXPECT_EQ(sp(Value::number(inf)).as_float(), inf);
  EXPECT_EQ(sp(Value::number(-inf)).as_float(), 0.0);
  EXPECT_TRUE(std::isnan(sp(Value::number(std::nan(""))).as_float()));
  EXPECT_EQ(call("erf", {Value::number(0.0)}).as_float(), 0.0);
  EXPECT_EQ(call("erf", {Value::number(inf)}).as_float(), 1.0);
  EXPECT_EQ(call("erf", {Value::integer(-6)}).as_float(), -1.0);
  EXPECT_DOUBLE_EQ(call("erf", {Value::number(0.5)}).as_float(), std::erf(0.5));

  const std::vector<double> xs = {0, -1, 2.5, 100, -100};
  const std::vector<double> s = vals(sp(make_t(xs, {5})));
  const std::vector<double> e = vals(call("erf", {make_t(xs, {5})}));
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = static_cast<float>(xs[i]);
    EXPECT_NEAR(s[i], std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0f), 1e-6 * (1 + std::fabs(x))) << x;
    EXPECT_NEAR(e[i], std::erf(x), 1e-6) << x;
  }
  EXPECT_EQ(s[3], 100.0);
  EXPECT_GT(s[4], 0.0);  // e^-100, an f32 subnormal
  EXPECT_LT(s[4], 1e-43);
  EXPECT_EQ(error_of([&] { call("softplus", {make_str("a")}); }),
            "softplus: expected number or tensor, got str");
}

}  // namespace
}  // namespace tessera
