// Each scalar built-in, called through the registry as the VM calls it,
// including arity, keyword and type errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "vm/builtins/builtin.h"
#include "vm/builtins/value_format.h"
#include "vm/graph/op_table.h"  // tensor_builtins()
#include "vm/interp/vm.h"

namespace tessera {
namespace {

class Builtins : public ::testing::Test {
 protected:
  Builtins() : vm_(make_opts(out_)) {}
  static VMOptions make_opts(std::ostringstream& out) {
    VMOptions o;
    o.out = &out;
    o.script_args = {"a b", "-x"};
    return o;
  }

  // name(args...) with optional keyword arguments.
  Value call(const char* name, std::vector<Value> args, std::vector<Value> kw_names = {},
             std::vector<Value> kw_values = {}) {
    Value fn = builtin_global_value(name);
    EXPECT_TRUE(fn.is_builtin()) << name;
    CallArgs a;
    a.pos = args;
    a.kw_values = kw_values;
    a.kw_names = kw_names.empty() ? nullptr : &kw_names;
    return fn.as_builtin()->fn(vm_, a);
  }
  std::string str_of(const Value& v) { return format_value(v); }

  std::ostringstream out_;
  VM vm_;
};

Value I(int64_t i) { return Value::integer(i); }
Value F(double f) { return Value::number(f); }
Value B(bool b) { return Value::boolean(b); }
Value S(std::string_view s) { return make_str(s); }

TEST_F(Builtins, Registry) {
  for (const char* n : {"print", "assert", "len", "str", "int", "float", "type", "floor", "ceil",
                        "list", "push", "pop", "clock", "args", "fmt"}) {
    EXPECT_TRUE(is_builtin_global(n)) << n;
    EXPECT_EQ(std::string(builtin_global_value(n).as_builtin()->name), n);
  }
  const std::pair<const char*, DType> dtypes[] = {{"f32", DType::F32}, {"f16", DType::F16},
                                                  {"bf16", DType::BF16}, {"i32", DType::I32},
                                                  {"i64", DType::I64}, {"bool", DType::Bool}};
  for (auto [n, d] : dtypes) {
    ASSERT_TRUE(is_builtin_global(n));
    Value v = builtin_global_value(n);
    ASSERT_TRUE(v.is_dtype());
    EXPECT_EQ(v.as_dtype(), d);
  }
  EXPECT_FALSE(is_builtin_global("prin"));
  EXPECT_FALSE(is_builtin_global(""));
  EXPECT_FALSE(is_builtin_global("printx"));
  // The same built-in is the same value (identity equality works).
  EXPECT_EQ(builtin_global_value("len").raw_bits(), builtin_global_value("len").raw_bits());
  // No name is defined twice across the tables.
  std::set<std::string> names;
  for (const BuiltinDef& d : scalar_builtins()) EXPECT_TRUE(names.insert(d.name).second) << d.name;
  for (const BuiltinDef& d : tensor_builtins()) EXPECT_TRUE(names.insert(d.name).second) << d.name;
  for (const char* n : {"f32", "f16", "bf16", "i32", "i64", "bool"})
    EXPECT_TRUE(names.insert(n).second) << n;
}

TEST_F(Builtins, KwName) {
  std::vector<Value> names = {S("dtype"), S("axis")};
  Value vals[2] = {I(1), I(2)};
  CallArgs a;
  a.kw_values = vals;
  a.kw_names = &names;
  EXPECT_EQ(a.kw_count(), 2u);
  EXPECT_EQ(a.kw_name(0), "dtype");
  EXPECT_EQ(a.kw_name(1), "axis");
}

TEST_F(Builtins, ArityAndKeywords) {
  EXPECT_RUNTIME_ERROR(call("len", {I(1), I(2)}), "len() takes 1 argument (2 given)");
  EXPECT_RUNTIME_ERROR(call("len", {}), "len() takes 1 argument (0 given)");
  EXPECT_RUNTIME_ERROR(call("fmt", {I(1)}), "fmt() takes 2 arguments (1 given)");
  EXPECT_RUNTIME_ERROR(call("assert", {B(true), S(""), S("")}), "assert() takes 1 to 2 arguments (3 given)");
  EXPECT_RUNTIME_ERROR(call("clock", {I(1)}), "clock() takes 0 arguments (1 given)");
  EXPECT_RUNTIME_ERROR(call("args", {I(1)}), "args() takes 0 arguments (1 given)");
  EXPECT_RUNTIME_ERROR(call("list", {I(1)}), "list() takes 2 arguments (1 given)");
  EXPECT_RUNTIME_ERROR(call("print", {I(1)}, {S("end")}, {S("")}),
                       "print() does not take keyword arguments");
  EXPECT_RUNTIME_ERROR(call("len", {S("a")}, {S("x")}, {I(1)}), "len() does not take keyword arguments");
  EXPECT_EQ(out_.str(), "");
  CallArgs none;
  EXPECT_RUNTIME_ERROR(check_arity("f", none, 1, -1, false), "f() takes at least 1 argument (0 given)");
  EXPECT_RUNTIME_ERROR(check_arity("g", none, 2, -1, false), "g() takes at least 2 arguments (0 given)");
  EXPECT_RUNTIME_ERROR(check_arity("h", none, 1, 3, true), "h() takes 1 to 3 arguments (0 given)");
  check_arity("k", none, 0, 0, true);  // no throw
  // The table's counts match the checks.
  for (const BuiltinDef& d : scalar_builtins()) {
    EXPECT_FALSE(d.accepts_kwargs) << d.name;
    if (d.max_args < 0) continue;
    std::vector<Value> too_many(size_t(d.max_args) + 1, I(0));
    EXPECT_THROW(call(d.name, too_many), RuntimeError) << d.name;
  }
}

TEST_F(Builtins, Print) {
  call("print", {I(1), S("a b"), F(2.0), make_list({S("x"), Value::nil()}), B(false)});
  call("print", {});
  call("print", {S("")});
  EXPECT_EQ(out_.str(), "1 a b 2.0 [\"x\", nil] false\n\n\n");
  EXPECT_TRUE(call("print", {}).is_nil());
  // A failing element prints nothing of the line.
  Value deep = make_list();
  for (int i = 0; i < 2000; ++i) deep = make_list({deep});
  out_.str("");
  EXPECT_RUNTIME_ERROR(call("print", {I(1), deep}), "value nested too deeply to print");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(Builtins, Assert) {
  EXPECT_TRUE(call("assert", {B(true)}).is_nil());
  EXPECT_TRUE(call("assert", {B(true), S("never")}).is_nil());
  EXPECT_RUNTIME_ERROR(call("assert", {B(false)}), "assertion failed");
  EXPECT_RUNTIME_ERROR(call("assert", {B(false), S("x is 3")}), "assertion failed: x is 3");
  EXPECT_RUNTIME_ERROR(call("assert", {B(false), make_list({S("a"), F(1.0)})}),
                       "assertion failed: [\"a\", 1.0]");
  EXPECT_RUNTIME_ERROR(call("assert", {I(1)}), "expected bool, got int");
  EXPECT_RUNTIME_ERROR(call("assert", {Value::nil(), S("m")}), "expected bool, got nil");
}

TEST_F(Builtins, Len) {
  EXPECT_EQ(call("len", {S("h\xc3\xa9")}).as_int(), 3);  // bytes
  EXPECT_EQ(call("len", {S("")}).as_int(), 0);
  EXPECT_EQ(call("len", {make_list({I(1), I(2)})}).as_int(), 2);
  EXPECT_RUNTIME_ERROR(call("len", {I(1)}), "len: expected str, list or tensor, got int");
  EXPECT_RUNTIME_ERROR(call("len", {Value::nil()}), "len: expected str, list or tensor, got nil");
}

TEST_F(Builtins, StrAndType) {
  EXPECT_EQ(str_of(call("str", {F(0.1)})), "0.1");
  EXPECT_EQ(str_of(call("str", {I(-7)})), "-7");
  EXPECT_EQ(str_of(call("str", {S("q\"")})), "q\"");
  EXPECT_EQ(str_of(call("str", {make_list({S("q")})})), "[\"q\"]");
  EXPECT_EQ(str_of(call("str", {Value::nil()})), "nil");
  EXPECT_EQ(str_of(call("str", {builtin_global_value("len")})), "<fn len>");
  EXPECT_EQ(str_of(call("str", {builtin_global_value("f16")})), "f16");
  EXPECT_TRUE(call("str", {I(1)}).is_str());
  EXPECT_EQ(str_of(call("type", {I(1)})), "int");
  EXPECT_EQ(str_of(call("type", {F(1)})), "float");
  EXPECT_EQ(str_of(call("type", {B(true)})), "bool");
  EXPECT_EQ(str_of(call("type", {Value::nil()})), "nil");
  EXPECT_EQ(str_of(call("type", {S("")})), "str");
  EXPECT_EQ(str_of(call("type", {make_list()})), "list");
  EXPECT_EQ(str_of(call("type", {builtin_global_value("print")})), "fn");
  EXPECT_EQ(str_of(call("type", {builtin_global_value("i32")})), "dtype");
}

TEST_F(Builtins, Int) {
  EXPECT_EQ(call("int", {I(5)}).as_int(), 5);
  EXPECT_EQ(call("int", {F(2.9)}).as_int(), 2);
  EXPECT_EQ(call("int", {F(-2.9)}).as_int(), -2);
  EXPECT_EQ(call("int", {F(-9223372036854775808.0)}).as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(call("int", {B(true)}).as_int(), 1);
  EXPECT_EQ(call("int", {B(false)}).as_int(), 0);
  EXPECT_EQ(call("int", {S("42")}).as_int(), 42);
  EXPECT_EQ(call("int", {S("  -17\n")}).as_int(), -17);
  EXPECT_EQ(call("int", {S("+3")}).as_int(), 3);
  EXPECT_EQ(call("int", {S("1_000")}).as_int(), 1000);
  EXPECT_EQ(call("int", {S("007")}).as_int(), 7);
  EXPECT_EQ(call("int", {S("9223372036854775807")}).as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(call("int", {S("-9223372036854775808")}).as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_RUNTIME_ERROR(call("int", {S("abc")}), "int: invalid literal 'abc'");
  for (const char* bad : {"", " ", "-", "1.5", "1e3", "0x10", "1_", "_1", "1__0", "1 2", "+-1"})
    EXPECT_THROW(call("int", {S(bad)}), RuntimeError) << bad;
  EXPECT_RUNTIME_ERROR(call("int", {S("a\n")}), "int: invalid literal 'a\\n'");
  EXPECT_RUNTIME_ERROR(call("int", {S("9223372036854775808")}),
                       "int: literal out of range '9223372036854775808'");
  EXPECT_RUNTIME_ERROR(call("int", {S("99999999999999999999999")}),
                       "int: literal out of range '99999999999999999999999'");
  EXPECT_RUNTIME_ERROR(call("int", {F(std::nan(""))}), "int: cannot convert nan to int");
  EXPECT_RUNTIME_ERROR(call("int", {F(INFINITY)}), "int: cannot convert inf to int");
  EXPECT_RUNTIME_ERROR(call("int", {F(-INFINITY)}), "int: cannot convert -inf to int");
  EXPECT_RUNTIME_ERROR(call("int", {F(1e19)}), "int: cannot convert 1e+19 to int");
  EXPECT_RUNTIME_ERROR(call("int", {F(9223372036854775808.0)}),
                       "int: cannot convert 9.223372036854776e+18 to int");
  EXPECT_RUNTIME_ERROR(call("int", {make_list()}), "int: expected int, float, bool or str, got list");
  EXPECT_RUNTIME_ERROR(call("int", {Value::nil()}), "int: expected int, float, bool or str, got nil");
}

TEST_F(Builtins, Float) {
  EXPECT_EQ(call("float", {I(3)}).as_float(), 3.0);
  EXPECT_EQ(call("float", {F(0.5)}).as_float(), 0.5);
  EXPECT_EQ(call("float", {B(true)}).as_float(), 1.0);
  struct Case { const char* text; const char* repr; };
  const Case cases[] = {  // repr(float(text)) in Python
      {"1.5", "1.5"},       {" -2.5e-3 ", "-0.0025"}, {"+1E5", "100000.0"}, {".5", "0.5"},
      {"5.", "5.0"},        {"7", "7.0"},             {"inf", "inf"},       {"-Infinity", "-inf"},
      {"+INF", "inf"},      {"nan", "nan"},           {"-nan", "nan"},      {"1_0.2_5", "10.25"},
      {"1e999", "inf"},     {"-1e999", "-inf"},       {"1e-999", "0.0"},    {"0.1", "0.1"},
  };
  for (const Case& c : cases) EXPECT_EQ(str_of(call("float", {S(c.text)})), c.repr) << c.text;
  for (const char* bad : {"", "abc", "1e", "e5", "1.5.2", "--1", "1+2", "nan(1)", "0x1p3", "1_",
                          "_1", "1__0", "1_.5", "in f", "infinit"})
    EXPECT_THROW(call("float", {S(bad)}), RuntimeError) << bad;
  EXPECT_RUNTIME_ERROR(call("float", {S("abc")}), "float: invalid literal 'abc'");
  EXPECT_RUNTIME_ERROR(call("float", {Value::nil()}), "float: expected int, float, bool or str, got nil");
}

TEST_F(Builtins, FloorCeil) {
  EXPECT_EQ(str_of(call("floor", {F(2.5)})), "2");
  EXPECT_EQ(str_of(call("floor", {F(-2.5)})), "-3");
  EXPECT_EQ(str_of(call("ceil", {F(2.1)})), "3");
  EXPECT_EQ(str_of(call("ceil", {F(-2.9)})), "-2");
  EXPECT_TRUE(call("floor", {F(1.0)}).is_int());
  EXPECT_EQ(call("floor", {I(-9)}).as_int(), -9);
  EXPECT_EQ(call("ceil", {I(9)}).as_int(), 9);
  EXPECT_RUNTIME_ERROR(call("floor", {F(std::nan(""))}), "floor: cannot convert nan to int");
  EXPECT_RUNTIME_ERROR(call("ceil", {F(INFINITY)}), "ceil: cannot convert inf to int");
  EXPECT_RUNTIME_ERROR(call("ceil", {F(1e300)}), "ceil: cannot convert 1e+300 to int");
  EXPECT_RUNTIME_ERROR(call("floor", {S("1")}), "floor: expected int or float, got str");
  EXPECT_RUNTIME_ERROR(call("ceil", {B(true)}), "ceil: expected int or float, got bool");
}

TEST_F(Builtins, ListPushPop) {
  Value l = call("list", {I(3), I(0)});
  EXPECT_EQ(str_of(l), "[0, 0, 0]");
  EXPECT_EQ(str_of(call("list", {I(0), Value::nil()})), "[]");
  // Copies of the same reference, as Python's [x] * n.
  Value inner = make_list();
  Value ll = call("list", {I(2), inner});
  EXPECT_EQ(ll.as_list()->items[0].raw_bits(), inner.raw_bits());
  EXPECT_RUNTIME_ERROR(call("list", {I(-1), I(0)}), "list: size must not be negative, got -1");
  EXPECT_RUNTIME_ERROR(call("list", {F(2.0), I(0)}), "list: expected int, got float");
  EXPECT_RUNTIME_ERROR(call("list", {I(100000001), I(0)}), "list: size too large");
  EXPECT_RUNTIME_ERROR(call("list", {I(std::numeric_limits<int64_t>::max()), I(0)}), "list: size too large");

  EXPECT_TRUE(call("push", {l, S("x")}).is_nil());
  EXPECT_EQ(str_of(l), "[0, 0, 0, \"x\"]");
  call("push", {l, l});  // a list may contain itself
  EXPECT_EQ(str_of(l), "[0, 0, 0, \"x\", [...]]");
  EXPECT_EQ(str_of(call("pop", {l})), "[0, 0, 0, \"x\"]");
  EXPECT_EQ(str_of(call("pop", {l})), "x");
  EXPECT_EQ(l.as_list()->items.size(), 3u);
  Value empty = make_list();
  EXPECT_RUNTIME_ERROR(call("pop", {empty}), "pop from empty list");
  EXPECT_RUNTIME_ERROR(call("pop", {S("ab")}), "pop: expected list, got str");
  EXPECT_RUNTIME_ERROR(call("push", {I(1), I(2)}), "push: expected list, got int");
}

TEST_F(Builtins, ClockAndArgs) {
  Value t1 = call("clock", {});
  Value t2 = call("clock", {});
  ASSERT_TRUE(t1.is_float());
  EXPECT_LE(t1.as_float(), t2.as_float());
  EXPECT_EQ(str_of(call("args", {})), "[\"a b\", \"-x\"]");
}

TEST_F(Builtins, Fmt) {
  // Expectations are Python's "%.*f" % (digits, x).
  EXPECT_EQ(str_of(call("fmt", {F(3.14159), I(3)})), "3.142");
  EXPECT_EQ(str_of(call("fmt", {F(2.5), I(0)})), "2");
  EXPECT_EQ(str_of(call("fmt", {F(3.5), I(0)})), "4");
  EXPECT_EQ(str_of(call("fmt", {F(-0.001), I(2)})), "-0.00");
  EXPECT_EQ(str_of(call("fmt", {I(7), I(5)})), "7.00000");
  EXPECT_EQ(str_of(call("fmt", {F(INFINITY), I(2)})), "inf");
  EXPECT_EQ(call("fmt", {F(1e308), I(100)}).as_str()->length, 309u + 1 + 100);
  EXPECT_RUNTIME_ERROR(call("fmt", {F(1), I(101)}), "fmt: digits must be between 0 and 100, got 101");
  EXPECT_RUNTIME_ERROR(call("fmt", {F(1), I(-1)}), "fmt: digits must be between 0 and 100, got -1");
  EXPECT_RUNTIME_ERROR(call("fmt", {S("1"), I(2)}), "fmt: expected int or float, got str");
  EXPECT_RUNTIME_ERROR(call("fmt", {F(1), F(2)}), "fmt: expected int, got float");
}

}  // namespace
}  // namespace tessera
