// End-to-end interpreter tests: source in, printed output and errors out.
#include <gtest/gtest.h>

#include "tests/vm/interp/run_helper.h"

namespace tessera {
namespace {

using testing::run_script;

TEST(Interpreter, ArithmeticFastPathsAndMixedTypes) {
  auto r = run_script(
      "let a = 7\nlet b = 2\n"
      "print(a + b, a - b, a * b, a / b, a // b, a % b, a ** b)\n"
      "print(-a // b, -a % b, a // -b, a % -b)\n"
      "print(a + 0.5, 1.5 * b, 2 ** -1, 9223372036854775807 + 1)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out,
            "9 5 14 3.5 3 1 49\n"
            "-4 1 -4 -1\n"
            "7.5 3.0 0.5 -9223372036854775808\n");
}

TEST(Interpreter, ConstantOperandForms) {
  auto r = run_script(
      "fn f(x) { return [x + 1, x - 1, x * 3, x / 4, x // 3, x % 3, x ** 2] }\n"
      "print(f(10))\nprint(f(2.5))\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "[11, 9, 30, 2.5, 3, 1, 100]\n[3.5, 1.5, 7.5, 0.625, 0.0, 2.5, 6.25]\n");
}

TEST(Interpreter, RangeLoopsAllForms) {
  auto r = run_script(
      "let s = []\n"
      "for i in range(3) { push(s, i) }\n"
      "for i in range(5, 8) { push(s, i) }\n"
      "for i in range(10, 0, -4) { push(s, i) }\n"
      "for i in range(0) { push(s, 99) }\n"
      "for i in range(9223372036854775806, 9223372036854775807) { push(s, i) }\n"
      "print(s)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "[0, 1, 2, 5, 6, 7, 10, 6, 2, 9223372036854775806]\n");
}

TEST(Interpreter, RangeStepZeroIsAnError) {
  auto r = run_script("for i in range(1, 2, 0) { }\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err,
            "t.tsb:1: runtime error: range() step must not be zero\n  at <main> (t.tsb:1)\n"
            "    for i in range(1, 2, 0) { }\n             ^\n");  // under the call, not the `for`
}

TEST(Interpreter, WhileBreakContinue) {
  auto r = run_script(
      "let i = 0\nlet out = []\n"
      "while true {\n  i += 1\n  if i % 2 == 0 { continue }\n  if i > 7 { break }\n  push(out, i)\n}\n"
      "print(out)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "[1, 3, 5, 7]\n");
}

TEST(Interpreter, ForInIteratesLengthSnapshot) {
  auto r = run_script(
      "let l = [1, 2, 3]\nfor x in l { push(l, x * 10) }\nprint(l)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "[1, 2, 3, 10, 20, 30]\n");
}

TEST(Interpreter, RecursionAndCalls) {
  auto r = run_script(
      "fn fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\n"
      "print(fib(20))\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "6765\n");
}

TEST(Interpreter, StackOverflowIsAnErrorWithTruncatedTraceback) {
  auto r = run_script("fn f(n) {\n  return f(n + 1)\n}\nf(0)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  // 10 000 frames: <main> + 9 999 of f; 10 + 10 shown.
  std::string expected = "t.tsb:2: runtime error: stack overflow\n  at <main> (t.tsb:4)\n";
  for (int i = 0; i < 9; ++i) expected += "  at f (t.tsb:2)\n";
  expected += "  ... 9980 frames omitted\n";
  for (int i = 0; i < 10; ++i) expected += "  at f (t.tsb:2)\n";
  expected += "      return f(n + 1)\n              ^\n";  // the innermost frame's line
  EXPECT_EQ(r.err, expected);
}

TEST(Interpreter, TracebackNamesEachFrame) {
  auto r = run_script(
      "fn inner(x) {\n  return x // 0\n}\nfn outer(x) {\n  return inner(x) + 1\n}\n"
      "print(outer(3))\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err,
            "t.tsb:2: runtime error: division by zero\n"
            "  at <main> (t.tsb:7)\n"
            "  at outer (t.tsb:5)\n"
            "  at inner (t.tsb:2)\n"
            "      return x // 0\n"
            "               ^\n");
}

TEST(Interpreter, CallErrorsNameTheThing) {
  auto r = run_script("let x = 3\nx(1)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err, "t.tsb:2: runtime error: 'x' is not a function (got int)\n  at <main> (t.tsb:2)\n    x(1)\n     ^\n");

  r = run_script("fn f(a, b) { return a }\nf(1)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err, "t.tsb:2: runtime error: f() takes 2 arguments (1 given)\n  at <main> (t.tsb:2)\n    f(1)\n     ^\n");

  r = run_script("print(undefined_thing)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err,
            "t.tsb:1: runtime error: name 'undefined_thing' is not defined\n  at <main> (t.tsb:1)\n"
            "    print(undefined_thing)\n          ^\n");
}

TEST(Interpreter, GlobalsAreLateBoundAndReassignable) {
  auto r = run_script(
      "fn a() { return 1 }\nfn b() { return 2 }\nfn call() { return f() }\n"
      "let f = a\nprint(call())\nf = b\nprint(call())\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "1\n2\n");
}

TEST(Interpreter, ReadingGlobalBeforeLetIsAnError) {
  auto r = run_script("fn f() { return g }\nprint(f())\nlet g = 1\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err,
            "t.tsb:1: runtime error: name 'g' is not defined\n  at <main> (t.tsb:2)\n  at f (t.tsb:1)\n"
            "    fn f() { return g }\n                    ^\n");
}

TEST(Interpreter, ConditionsMustBeBool) {
  auto r = run_script("if 1 { print(1) }\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err, "t.tsb:1: runtime error: expected bool, got int\n  at <main> (t.tsb:1)\n    if 1 { print(1) }\n       ^\n");
  r = run_script("print(true and 1)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  r = run_script("print(false and 1, true or 1, not false)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "false true true\n");
}

TEST(Interpreter, CompareAndBranchAllTypes) {
  auto r = run_script(
      "let n = 0\n"
      "if 1 < 1.5 { n += 1 }\nif \"abc\" < \"abd\" { n += 1 }\nif 2.0 == 2 { n += 1 }\n"
      "if [1] != [1] { n += 1 }\nif nil == nil { n += 1 }\nif 3 >= 3 { n += 1 }\n"
      "if 1 != \"1\" { n += 1 }\nprint(n)\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "7\n");
}

TEST(Interpreter, ListIndexing) {
  auto r = run_script(
      "let l = [10, 20, 30]\nl[1] = 5\nl[-1] += 1\nprint(l, l[-3], \"abc\"[1])\nprint(l[3])\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.out, "[10, 5, 31] 10 b\n");
  // The message names the index and the length; the failing line follows the
  // traceback with a caret under the index's bracket.
  EXPECT_EQ(r.err,
            "t.tsb:5: runtime error: index out of range: 3 (list of length 3)\n  at <main> (t.tsb:5)\n"
            "    print(l[3])\n           ^\n");
}

TEST(Interpreter, LargeListLiteralAndRuntimeList) {
  std::string src = "let l = [";
  for (int i = 0; i < 70000; ++i) src += std::to_string(i) + ",";
  src += "]\nprint(len(l), l[69999])\nlet m = list(1000000, 0)\nm[999999] = 1\nprint(len(m), m[999999])\n";
  auto r = run_script(src);
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "70000 69999\n1000000 1\n");
}

TEST(Interpreter, DeeplyNestedListsAreFreedWithoutRecursion) {
  auto r = run_script("let l = []\nfor i in range(1000000) { l = [l] }\nl = nil\nprint(\"ok\")\n");
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

TEST(Interpreter, KeywordArgumentsToUserFunctionsAreAnError) {
  auto r = run_script("fn f(a) { return a }\nf(1, b=2)\n");
  EXPECT_EQ(r.status, RunStatus::RuntimeError);
  EXPECT_EQ(r.err,
            "t.tsb:2: runtime error: f() does not take keyword arguments\n  at <main> (t.tsb:2)\n    f(1, b=2)\n     ^\n");
}

TEST(Interpreter, SyntaxErrorFormat) {
  auto r = run_script("let x = (1 +\n");
  EXPECT_EQ(r.status, RunStatus::CompileError);
  EXPECT_EQ(r.err.rfind("t.tsb:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(": syntax error: "), std::string::npos) << r.err;
}

TEST(Interpreter, ScriptArgs) {
  VMOptions opts;
  opts.script_args = {"a", "bc"};
  auto r = run_script("print(args())\n", opts);
  EXPECT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "[\"a\", \"bc\"]\n");
}

}  // namespace
}  // namespace tessera
