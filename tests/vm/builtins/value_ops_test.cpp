// Operators over the non-tensor type matrix, including every error message.
#include "vm/builtins/value_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"
#include "vm/builtins/value_format.h"

namespace tessera {
namespace {


Value I(int64_t i) { return Value::integer(i); }
Value F(double f) { return Value::number(f); }
Value B(bool b) { return Value::boolean(b); }
Value S(const char* s) { return make_str(s); }

// Formats a result so one assertion checks both type and value.
std::string show(const Value& v) { return std::string(type_name(v)) + " " + format_value(v); }

TEST(Arith, IntInt) {
  EXPECT_EQ(show(arith(BinOp::Add, I(2), I(3))), "int 5");
  EXPECT_EQ(show(arith(BinOp::Sub, I(2), I(3))), "int -1");
  EXPECT_EQ(show(arith(BinOp::Mul, I(4), I(3))), "int 12");
  EXPECT_EQ(show(arith(BinOp::Div, I(7), I(2))), "float 3.5");
  EXPECT_EQ(show(arith(BinOp::Div, I(6), I(3))), "float 2.0");
  EXPECT_EQ(show(arith(BinOp::IDiv, I(-7), I(2))), "int -4");
  EXPECT_EQ(show(arith(BinOp::Mod, I(-7), I(2))), "int 1");
  EXPECT_EQ(show(arith(BinOp::Pow, I(2), I(10))), "int 1024");
  EXPECT_EQ(show(arith(BinOp::Pow, I(2), I(-1))), "float 0.5");
  EXPECT_EQ(show(arith(BinOp::Pow, I(10), I(-2))), "float 0.01");
  EXPECT_EQ(show(arith(BinOp::Pow, I(0), I(-1))), "float inf");
  EXPECT_EQ(show(arith(BinOp::Pow, I(2), I(64))), "int 0");
  EXPECT_EQ(show(arith(BinOp::Add, I(std::numeric_limits<int64_t>::max()), I(1))),
            "int -9223372036854775808");
  EXPECT_EQ(show(arith(BinOp::IDiv, I(std::numeric_limits<int64_t>::min()), I(-1))),
            "int -9223372036854775808");
  // `/` is float division, IEEE for a zero divisor.
  EXPECT_EQ(show(arith(BinOp::Div, I(1), I(0))), "float inf");
  EXPECT_EQ(show(arith(BinOp::Div, I(0), I(0))), "float nan");
  EXPECT_RUNTIME_ERROR(arith(BinOp::IDiv, I(1), I(0)), "division by zero");
  EXPECT_RUNTIME_ERROR(arith(BinOp::Mod, I(1), I(0)), "division by zero");
  EXPECT_RUNTIME_ERROR(arith(BinOp::MatMul, I(1), I(2)), "unsupported operand types for @: int and int");
}

TEST(Arith, MixedAndFloat) {
  EXPECT_EQ(show(arith(BinOp::Add, I(1), F(0.5))), "float 1.5");
  EXPECT_EQ(show(arith(BinOp::Mul, F(0.5), I(4))), "float 2.0");
  EXPECT_EQ(show(arith(BinOp::Sub, F(0.1), F(0.3))), "float -0.19999999999999998");
  EXPECT_EQ(show(arith(BinOp::IDiv, F(7.5), I(-2))), "float -4.0");
  EXPECT_EQ(show(arith(BinOp::Mod, I(-7), F(2.0))), "float 1.0");
  EXPECT_EQ(show(arith(BinOp::Pow, F(2.0), I(3))), "float 8.0");
  EXPECT_EQ(show(arith(BinOp::Pow, I(4), F(0.5))), "float 2.0");
  EXPECT_EQ(show(arith(BinOp::Pow, F(-8.0), F(1.0 / 3))), "float nan");  // IEEE, not complex
  // Float division by zero follows IEEE (no error), even via // and %.
  EXPECT_EQ(show(arith(BinOp::Div, F(1.0), I(0))), "float inf");
  EXPECT_EQ(show(arith(BinOp::Div, I(-1), F(0.0))), "float -inf");
  EXPECT_EQ(show(arith(BinOp::IDiv, F(1.0), F(0.0))), "float inf");
  EXPECT_EQ(show(arith(BinOp::Mod, I(1), F(0.0))), "float nan");
  EXPECT_RUNTIME_ERROR(arith(BinOp::MatMul, F(1.0), I(2)), "unsupported operand types for @: float and int");
}

TEST(Arith, StringsAndLists) {
  EXPECT_EQ(show(arith(BinOp::Add, S("ab"), S("cd"))), "str abcd");
  EXPECT_EQ(show(arith(BinOp::Add, S(""), S(""))), "str ");
  Value l1 = make_list({I(1)});
  Value l2 = make_list({S("x")});
  Value r = arith(BinOp::Add, l1, l2);
  EXPECT_EQ(show(r), "list [1, \"x\"]");
  EXPECT_NE(r.raw_bits(), l1.raw_bits());  // a new list
  EXPECT_EQ(l1.as_list()->items.size(), 1u);
  EXPECT_EQ(format_value(arith(BinOp::Add, l1, l1)), "[1, 1]");
}

TEST(Arith, UnsupportedOperandTypes) {
  struct Case { BinOp op; Value a, b; const char* msg; };
  Value fn = Value::builtin(nullptr);
  const Case cases[] = {
      {BinOp::Add, S("a"), I(1), "unsupported operand types for +: str and int"},
      {BinOp::Add, I(1), S("a"), "unsupported operand types for +: int and str"},
      {BinOp::Add, B(true), I(1), "unsupported operand types for +: bool and int"},
      {BinOp::Sub, B(true), B(false), "unsupported operand types for -: bool and bool"},
      {BinOp::Mul, S("a"), I(3), "unsupported operand types for *: str and int"},
      {BinOp::Sub, S("a"), S("b"), "unsupported operand types for -: str and str"},
      {BinOp::Div, make_list(), make_list(), "unsupported operand types for /: list and list"},
      {BinOp::IDiv, Value::nil(), I(1), "unsupported operand types for //: nil and int"},
      {BinOp::Mod, F(1.0), Value::nil(), "unsupported operand types for %: float and nil"},
      {BinOp::Pow, Value::dtype(DType::F32), I(2), "unsupported operand types for **: dtype and int"},
      {BinOp::Add, make_list(), S("a"), "unsupported operand types for +: list and str"},
      {BinOp::Add, fn, fn, "unsupported operand types for +: fn and fn"},
      {BinOp::MatMul, S("a"), S("b"), "unsupported operand types for @: str and str"},
  };
  for (const Case& c : cases) EXPECT_RUNTIME_ERROR(arith(c.op, c.a, c.b), c.msg);
}

TEST(Negate, AllTypes) {
  EXPECT_EQ(show(negate(I(5))), "int -5");
  EXPECT_EQ(show(negate(I(std::numeric_limits<int64_t>::min()))), "int -9223372036854775808");
  EXPECT_EQ(show(negate(F(0.0))), "float -0.0");
  EXPECT_EQ(show(negate(F(-2.5))), "float 2.5");
  EXPECT_RUNTIME_ERROR(negate(S("x")), "bad operand type for unary -: str");
  EXPECT_RUNTIME_ERROR(negate(B(true)), "bad operand type for unary -: bool");
  EXPECT_RUNTIME_ERROR(negate(Value::nil()), "bad operand type for unary -: nil");
  EXPECT_RUNTIME_ERROR(negate(make_list()), "bad operand type for unary -: list");
}

bool cmp(CmpOp op, const Value& a, const Value& b) {
  Value r = compare(op, a, b);
  EXPECT_TRUE(r.is_bool());
  return r.as_bool();
}

TEST(Compare, Numbers) {
  EXPECT_TRUE(cmp(CmpOp::Lt, I(1), I(2)));
  EXPECT_TRUE(cmp(CmpOp::Le, I(2), I(2)));
  EXPECT_FALSE(cmp(CmpOp::Gt, I(2), I(2)));
  EXPECT_TRUE(cmp(CmpOp::Ge, F(2.5), I(2)));
  EXPECT_TRUE(cmp(CmpOp::Eq, I(2), F(2.0)));
  EXPECT_TRUE(cmp(CmpOp::Eq, F(2.0), I(2)));
  EXPECT_FALSE(cmp(CmpOp::Ne, F(2.0), I(2)));
  // Exact int/float comparison.
  EXPECT_TRUE(cmp(CmpOp::Gt, I(9007199254740993), F(9007199254740992.0)));
  EXPECT_TRUE(cmp(CmpOp::Lt, F(9007199254740992.0), I(9007199254740993)));
  EXPECT_FALSE(cmp(CmpOp::Eq, I(9007199254740993), F(9007199254740992.0)));
  // NaN is unordered: only != holds.
  const double nan = std::nan("");
  for (CmpOp op : {CmpOp::Eq, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge}) {
    EXPECT_FALSE(cmp(op, F(nan), F(nan)));
    EXPECT_FALSE(cmp(op, I(1), F(nan)));
    EXPECT_FALSE(cmp(op, F(nan), I(1)));
  }
  EXPECT_TRUE(cmp(CmpOp::Ne, F(nan), F(nan)));
  EXPECT_TRUE(cmp(CmpOp::Ne, F(nan), I(0)));
  EXPECT_TRUE(cmp(CmpOp::Eq, F(0.0), F(-0.0)));
}

TEST(Compare, Strings) {
  EXPECT_TRUE(cmp(CmpOp::Eq, S("abc"), S("abc")));
  EXPECT_TRUE(cmp(CmpOp::Lt, S("abc"), S("abd")));
  EXPECT_TRUE(cmp(CmpOp::Lt, S("ab"), S("abc")));
  EXPECT_TRUE(cmp(CmpOp::Lt, S("Z"), S("a")));
  EXPECT_TRUE(cmp(CmpOp::Gt, S("\xc3\xa9"), S("z")));  // bytewise, unsigned
  EXPECT_TRUE(cmp(CmpOp::Le, S(""), S("")));
  EXPECT_TRUE(cmp(CmpOp::Ne, make_str(std::string_view("a\0b", 3)), make_str(std::string_view("a\0c", 3))));
}

TEST(Compare, EqualityAcrossTypes) {
  Value l = make_list({I(1)});
  Value l_copy = make_list({I(1)});
  Value l_alias = l;
  EXPECT_TRUE(cmp(CmpOp::Eq, l, l_alias));
  EXPECT_FALSE(cmp(CmpOp::Eq, l, l_copy));  // identity, not contents
  EXPECT_TRUE(cmp(CmpOp::Ne, l, l_copy));
  EXPECT_TRUE(cmp(CmpOp::Eq, Value::nil(), Value::nil()));
  EXPECT_TRUE(cmp(CmpOp::Eq, B(true), B(true)));
  EXPECT_FALSE(cmp(CmpOp::Eq, B(true), B(false)));
  EXPECT_FALSE(cmp(CmpOp::Eq, B(true), I(1)));  // bool is not a number
  EXPECT_TRUE(cmp(CmpOp::Ne, B(false), I(0)));
  EXPECT_FALSE(cmp(CmpOp::Eq, I(1), S("1")));
  EXPECT_TRUE(cmp(CmpOp::Ne, I(1), S("1")));
  EXPECT_FALSE(cmp(CmpOp::Eq, Value::nil(), B(false)));
  EXPECT_TRUE(cmp(CmpOp::Eq, Value::dtype(DType::F16), Value::dtype(DType::F16)));
  EXPECT_FALSE(cmp(CmpOp::Eq, Value::dtype(DType::F16), Value::dtype(DType::BF16)));
  EXPECT_FALSE(cmp(CmpOp::Eq, Value::dtype(DType::Bool), B(true)));
  FunctionProto* p1 = reinterpret_cast<FunctionProto*>(0x1000);
  FunctionProto* p2 = reinterpret_cast<FunctionProto*>(0x2000);
  EXPECT_TRUE(cmp(CmpOp::Eq, Value::function(p1), Value::function(p1)));
  EXPECT_FALSE(cmp(CmpOp::Eq, Value::function(p1), Value::function(p2)));
  EXPECT_TRUE(values_equal(S("x"), S("x")));
  EXPECT_FALSE(values_equal(S("x"), make_list()));
}

TEST(Compare, OrderingErrors) {
  struct Case { CmpOp op; Value a, b; const char* msg; };
  const Case cases[] = {
      {CmpOp::Lt, I(1), S("a"), "'<' not supported between int and str"},
      {CmpOp::Le, S("a"), F(1.0), "'<=' not supported between str and float"},
      {CmpOp::Gt, B(true), B(false), "'>' not supported between bool and bool"},
      {CmpOp::Ge, Value::nil(), Value::nil(), "'>=' not supported between nil and nil"},
      {CmpOp::Lt, make_list(), make_list(), "'<' not supported between list and list"},
      {CmpOp::Lt, Value::dtype(DType::F32), Value::dtype(DType::I32),
       "'<' not supported between dtype and dtype"},
      {CmpOp::Gt, B(true), I(0), "'>' not supported between bool and int"},
  };
  for (const Case& c : cases) EXPECT_RUNTIME_ERROR(compare(c.op, c.a, c.b), c.msg);
}

}  // namespace
}  // namespace tessera
