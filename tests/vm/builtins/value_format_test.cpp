// print/str formatting: repr(float) against Python, lists, cycles, depth.
#include "vm/builtins/value_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"
#include "vm/builtins/builtin.h"
#include "vm/bytecode/bytecode.h"

namespace tessera {
namespace {

TEST(ReprFloat, MatchesPython) {
  // Expectations generated with python3 -c 'print(repr(x))'.
  struct Case { double x; const char* py; };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {-3.0, "-3.0"},
      {100.0, "100.0"},
      {0.1, "0.1"},
      {0.2 + 0.1, "0.30000000000000004"},
      {1.0 / 3, "0.3333333333333333"},
      {2.5e-05, "2.5e-05"},
      {-2.5e-05, "-2.5e-05"},
      {1e-4, "0.0001"},
      {9.999999999999999e-05, "9.999999999999999e-05"},
      {1e-5, "1e-05"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {1e15 + 0.5, "1000000000000000.5"},
      {100000000000000.0, "100000000000000.0"},
      {123456789012345.6, "123456789012345.6"},
      {9999999999999998.0, "9999999999999998.0"},
      {12345678901234567.0, "1.2345678901234568e+16"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {1.5e-323, "1.5e-323"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {9007199254740992.0, "9007199254740992.0"},
      {9223372036854775808.0, "9.223372036854776e+18"},
      {-1e-7, "-1e-07"},
      {1e22, "1e+22"},
      {1e100, "1e+100"},
      {1e-10, "1e-10"},
      {1234.5, "1234.5"},
      {0.001, "0.001"},
      {0.00012345, "0.00012345"},
      {3.141592653589793, "3.141592653589793"},
      {inf, "inf"},
      {-inf, "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
      {-std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const Case& c : cases) EXPECT_EQ(repr_float(c.x), c.py);
}

TEST(Format, Scalars) {
  EXPECT_EQ(format_value(Value::nil()), "nil");
  EXPECT_EQ(format_value(Value::boolean(true)), "true");
  EXPECT_EQ(format_value(Value::boolean(false)), "false");
  EXPECT_EQ(format_value(Value::integer(-42)), "-42");
  EXPECT_EQ(format_value(Value::integer(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(format_value(Value::number(2.0)), "2.0");
  EXPECT_EQ(format_value(make_str("a \"b\"\n")), "a \"b\"\n");  // top-level: raw bytes
  EXPECT_EQ(format_value(Value::dtype(DType::BF16)), "bf16");
  EXPECT_EQ(format_value(Value::dtype(DType::Bool)), "bool");
  FunctionProto proto;
  proto.name = "square";
  EXPECT_EQ(format_value(Value::function(&proto)), "<fn square>");
  const BuiltinDef def{"print", nullptr, 0, -1, false};
  EXPECT_EQ(format_value(Value::builtin(&def)), "<fn print>");
}

TEST(Format, Lists) {
  Value inner = make_list({Value::boolean(true), Value::nil()});
  Value l = make_list({Value::integer(1), Value::number(2.5), make_str("a"), inner});
  EXPECT_EQ(format_value(l), "[1, 2.5, \"a\", [true, nil]]");
  EXPECT_EQ(format_value(make_list()), "[]");
  EXPECT_EQ(format_value(make_list({make_list(), make_list({make_list()})})), "[[], [[]]]");
  EXPECT_EQ(format_value(make_list({Value::dtype(DType::F32)})), "[f32]");
}

TEST(Format, StringEscapesInsideLists) {
  std::string raw("q\"b\\n\nt\tr\rz", 11);
  raw += '\0';
  raw += "\x01\x1f\x7f\xc3\xa9'";
  Value l = make_list({make_str(raw)});
  EXPECT_EQ(format_value(l), "[\"q\\\"b\\\\n\\nt\\tr\\rz\\0\\x01\\x1f\\x7f\xc3\xa9'\"]");
}

TEST(Format, Cycles) {
  Value l = make_list({Value::integer(1)});
  l.as_list()->items.push_back(l);
  EXPECT_EQ(format_value(l), "[1, [...]]");
  // A shared (non-cyclic) sublist prints in full each time.
  Value shared = make_list({Value::integer(7)});
  Value twice = make_list({shared, shared});
  EXPECT_EQ(format_value(twice), "[[7], [7]]");
  // Indirect cycle: a -> b -> a.
  Value a = make_list();
  Value b = make_list({a});
  a.as_list()->items.push_back(b);
  EXPECT_EQ(format_value(a), "[[[...]]]");
  EXPECT_EQ(format_value(b), "[[[...]]]");
  // Break the cycles so the lists are freed.
  l.as_list()->items.clear();
  a.as_list()->items.clear();
}

Value nested(int depth) {
  Value v = make_list();
  for (int i = 1; i < depth; ++i) v = make_list({v});
  return v;
}

TEST(Format, DeepNesting) {
  std::string s = format_value(nested(kMaxPrintDepth));
  EXPECT_EQ(s.size(), size_t(2 * kMaxPrintDepth));
  EXPECT_RUNTIME_ERROR(format_value(nested(kMaxPrintDepth + 1)), "value nested too deeply to print");
  EXPECT_RUNTIME_ERROR(format_value(nested(1000000)), "value nested too deeply to print");
}

}  // namespace
}  // namespace tessera
