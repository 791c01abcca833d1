// vm/builtins where a tensor is involved: dispatch to the tensor runtime,
// printing, len, and the merged registry. Needs the real tensor and graph
// libraries (only in builtins_test).
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "test_util.h"
#include "vm/builtins/builtin.h"
#include "vm/builtins/value_format.h"
#include "vm/graph/op_table.h"  // tensor_builtins()
#include "vm/builtins/value_ops.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

class TensorBuiltins : public ::testing::Test {
 protected:
  TensorBuiltins() : vm_(make_opts(out_)) {}
  static VMOptions make_opts(std::ostringstream& out) {
    VMOptions o;
    o.out = &out;
    return o;
  }
  Value call(const char* name, std::vector<Value> args) {
    CallArgs a;
    a.pos = args;
    return builtin_global_value(name).as_builtin()->fn(vm_, a);
  }
  // tensor([[1, 2], [3, 4]]) (i64)
  Value t22() {
    return call("tensor", {make_list({make_list({Value::integer(1), Value::integer(2)}),
                                      make_list({Value::integer(3), Value::integer(4)})})});
  }
  std::ostringstream out_;
  VM vm_;
};

TEST_F(TensorBuiltins, RegistryOwnership) {
  // The tensor table owns these names (they accept scalars too).
  for (const char* n : {"abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu",
                        "silu", "sin", "cos", "min", "max", "zeros", "tensor", "matmul"}) {
    ASSERT_TRUE(is_builtin_global(n)) << n;
    bool in_tensor_table = false;
    for (const BuiltinDef& d : tensor_builtins())
      in_tensor_table = in_tensor_table || builtin_global_value(n).as_builtin() == &d;
    EXPECT_TRUE(in_tensor_table) << n;
  }
}

TEST_F(TensorBuiltins, PrintLenStr) {
  Value t = t22();
  ASSERT_TRUE(t.is_tensor());
  EXPECT_EQ(format_value(t), "tensor(shape=[2, 2], dtype=i64) [[1, 2], [3, 4]]");
  EXPECT_EQ(format_value(make_list({t})), "[tensor(shape=[2, 2], dtype=i64) [[1, 2], [3, 4]]]");
  EXPECT_EQ(call("len", {t}).as_int(), 2);
  call("print", {Value::integer(1), t});
  EXPECT_EQ(out_.str(), "1 tensor(shape=[2, 2], dtype=i64) [[1, 2], [3, 4]]\n");
  EXPECT_EQ(format_value(call("type", {t})), "tensor");
}

TEST_F(TensorBuiltins, OperatorDispatch) {
  Value t = t22();
  EXPECT_EQ(format_value(arith(BinOp::Add, t, Value::integer(1))),
            "tensor(shape=[2, 2], dtype=i64) [[2, 3], [4, 5]]");
  EXPECT_EQ(format_value(arith(BinOp::Mul, Value::integer(2), t)),
            "tensor(shape=[2, 2], dtype=i64) [[2, 4], [6, 8]]");
  EXPECT_TRUE(arith(BinOp::MatMul, t, t).is_tensor());
  EXPECT_EQ(format_value(negate(t)), "tensor(shape=[2, 2], dtype=i64) [[-1, -2], [-3, -4]]");
  EXPECT_EQ(format_value(compare(CmpOp::Eq, t, t)),
            "tensor(shape=[2, 2], dtype=bool) [[true, true], [true, true]]");
  EXPECT_EQ(format_value(compare(CmpOp::Gt, t, Value::integer(2))),
            "tensor(shape=[2, 2], dtype=bool) [[false, false], [true, true]]");
  // Non-numeric partners.
  EXPECT_RUNTIME_ERROR(arith(BinOp::Add, t, make_str("a")), "unsupported operand types for +: tensor and str");
  EXPECT_RUNTIME_ERROR(arith(BinOp::MatMul, t, Value::integer(2)), "unsupported operand types for @: tensor and int");
  EXPECT_RUNTIME_ERROR(arith(BinOp::Add, Value::nil(), t), "unsupported operand types for +: nil and tensor");
  EXPECT_FALSE(compare(CmpOp::Eq, t, make_str("a")).as_bool());
  EXPECT_TRUE(compare(CmpOp::Ne, Value::nil(), t).as_bool());
  EXPECT_RUNTIME_ERROR(compare(CmpOp::Lt, t, make_list()), "'<' not supported between tensor and list");
  EXPECT_TRUE(values_equal(t, t));
  EXPECT_FALSE(values_equal(t, t22()));
}

}  // namespace
}  // namespace tessera
