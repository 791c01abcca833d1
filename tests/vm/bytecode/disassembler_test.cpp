// `dis` output: a golden listing plus the pieces it is made of.
#include "vm/bytecode/disassembler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compiler_test_util.h"

namespace tessera {
namespace {

TEST(Disassembler, GoldenListing) {
  auto m = test::compile_src(
      "fn fib(n) {\n"
      "  if n < 2 { return n }\n"
      "  return fib(n - 1) + fib(n - 2)\n"
      "}\n"
      "let s = \"a\\tb\"\n"
      "for i in range(3) { print(fib(i), s, sep=\", \") }\n");
  EXPECT_EQ(disassemble(*m), R"(globals:
  g0  fib  fn
  g1  s
  g2  print  builtin

fn <main>()  params=0 regs=8 consts=3  ; t.tsb:1
      0     5  LOADK      r0 k0              ; "a\tb"
      1     5  DEFGLOBAL  r0 g1              ; s
      2     6  LOADI      r0 0
      3     6  LOADI      r1 3
      4     6  LOADI      r2 1
      5     6  FORPREP    r0 -> 14
      6     6  GETGLOBAL  r4 g2              ; print
      7     6  GETGLOBAL  r5 g0              ; fib
      8     6  MOVE       r6 r3
      9     6  CALL       r5 1               ; fib
     10     6  GETGLOBAL  r6 g1              ; s
     11     6  LOADK      r7 k1              ; ", "
     12     6  CALLKW     r4 2 k2            ; ["sep"], print
     13     6  FORLOOP    r0 -> 6
     14     6  RETNIL
  constants:
    k0  "a\tb"
    k1  ", "
    k2  ["sep"]
  locals:
    r3  i  pc 6..13

fn fib(n)  params=1 regs=5 consts=2  ; t.tsb:1
      0     2  JLTK       r0 k0              ; 2
      1     2  JMP        -> 3
      2     2  RET        r0
      3     3  GETGLOBAL  r2 g0              ; fib
      4     3  SUBK       r3 r0 k1           ; 1
      5     3  CALL       r2 1               ; fib
      6     3  GETGLOBAL  r3 g0              ; fib
      7     3  SUBK       r4 r0 k0           ; 2
      8     3  CALL       r3 1               ; fib
      9     3  ADD        r1 r2 r3
     10     3  RET        r1
     11     3  RETNIL
  constants:
    k0  2
    k1  1
  locals:
    r0  n  pc 0..11
)");
}

TEST(Disassembler, FloatConstantsPrintLikeTheLanguage) {
  EXPECT_EQ(constant_repr(Value::number(1.0)), "1.0");
  EXPECT_EQ(constant_repr(Value::number(0.1)), "0.1");
  EXPECT_EQ(constant_repr(Value::number(-3.0)), "-3.0");
  EXPECT_EQ(constant_repr(Value::number(2.5e-5)), "2.5e-05");
  EXPECT_EQ(constant_repr(Value::number(1e-4)), "0.0001");
  EXPECT_EQ(constant_repr(Value::number(1e16)), "1e+16");
  EXPECT_EQ(constant_repr(Value::number(123456789012345.6)), "123456789012345.6");
  EXPECT_EQ(constant_repr(Value::number(1.5e300)), "1.5e+300");
  EXPECT_EQ(constant_repr(Value::number(0.0)), "0.0");
  EXPECT_EQ(constant_repr(Value::number(-0.0)), "-0.0");
  EXPECT_EQ(constant_repr(Value::number(std::numeric_limits<double>::infinity())), "inf");
  EXPECT_EQ(constant_repr(Value::number(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(constant_repr(Value::number(std::nan(""))), "nan");
}

TEST(Disassembler, OtherConstants) {
  EXPECT_EQ(constant_repr(Value::integer(-9223372036854775807 - 1)), "-9223372036854775808");
  EXPECT_EQ(constant_repr(make_str(std::string("q\"\\\n\x01\0", 6))), "\"q\\\"\\\\\\n\\x01\\0\"");
  EXPECT_EQ(constant_repr(make_list({make_str("a"), Value::integer(1)})), "[\"a\", 1]");
}

TEST(Disassembler, OperandShapes) {
  auto m = test::compile_src(
      "fn f(t, i) {\n"
      "  let a = t[i, 0]\n"
      "  t[i, 1] = a\n"
      "  let l = [a]\n"
      "  while a { a = not a }\n"
      "  return\n"
      "}\n");
  std::string dis = disassemble_function(*m, *m->functions[1]);
  EXPECT_NE(dis.find("GETINDEXN  r2 r3 2\n"), std::string::npos) << dis;
  EXPECT_NE(dis.find("SETINDEXN  r3 r2 2\n"), std::string::npos) << dis;
  EXPECT_NE(dis.find("NEWLIST    r3 r4 1\n"), std::string::npos) << dis;
  EXPECT_NE(dis.find("LOOP\n"), std::string::npos) << dis;
  EXPECT_NE(dis.find("JMPF       r2 -> "), std::string::npos) << dis;
  EXPECT_NE(dis.find("RETNIL\n"), std::string::npos) << dis;
  EXPECT_NE(dis.find("fn f(t, i)  params=2"), std::string::npos) << dis;
}

TEST(OpcodeTable, NamesAndFormatsComeFromOpcodesDef) {
  EXPECT_STREQ(op_info(Op::MOVE).name, "MOVE");
  EXPECT_EQ(op_info(Op::MOVE).format, OpFormat::AB);
  EXPECT_STREQ(op_info(Op::LOADK).name, "LOADK");
  EXPECT_EQ(op_info(Op::LOADK).format, OpFormat::ABx);
  EXPECT_EQ(op_info(Op::JMP).format, OpFormat::sBx);
  EXPECT_EQ(op_info(Op::JLTK).format, OpFormat::BR);
  EXPECT_STREQ(op_info(Op::SETINDEXN).name, "SETINDEXN");
  for (int i = 0; i < kNumOps; ++i) {
    EXPECT_NE(op_info(static_cast<Op>(i)).name, nullptr);
    EXPECT_NE(std::string(op_info(static_cast<Op>(i)).description), "");
  }
}

}  // namespace
}  // namespace tessera
