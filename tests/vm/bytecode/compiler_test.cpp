// Bytecode compiler: register allocation, operand forms, control flow,
// name resolution and the line table, checked on the compiled code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler_test_util.h"
#include "vm/bytecode/compiler.h"
#include "vm/core/error.h"
#include "vm/frontend/parser.h"

namespace tessera {
namespace {

using test::compile_src;
using test::fn;
using test::opnames;
using test::ops;
using Ops = std::vector<std::string>;

int count_op(const FunctionProto& f, Op op) {
  return static_cast<int>(std::count_if(f.code.begin(), f.code.end(),
                                        [op](const Instr& i) { return i.op == op; }));
}

int global_slot(const Module& m, const std::string& name) {
  for (size_t i = 0; i < m.global_names.size(); ++i)
    if (m.global_names[i] == name) return static_cast<int>(i);
  return -1;
}

// ---------------------------------------------------------------- module shape

TEST(CompilerModule, MainFirstThenFunctionsInSourceOrder) {
  auto m = compile_src("fn b() {}\nprint(1)\nfn a(x, y) { return x }\n");
  ASSERT_EQ(m->functions.size(), 3u);
  EXPECT_EQ(m->functions[0]->name, "<main>");
  EXPECT_EQ(m->functions[0]->nparams, 0);
  EXPECT_EQ(m->functions[0]->line, 1);
  EXPECT_EQ(m->functions[1]->name, "b");
  EXPECT_EQ(m->functions[1]->line, 1);
  EXPECT_EQ(m->functions[2]->name, "a");
  EXPECT_EQ(m->functions[2]->nparams, 2);
  EXPECT_EQ(m->functions[2]->line, 3);
  EXPECT_EQ(m->filename, "t.tsb");
  for (const auto& f : m->functions) {
    EXPECT_EQ(f->lines.size(), f->code.size());
    EXPECT_EQ(f->hotcounts.size(), f->code.size());
    EXPECT_GE(f->nregs, f->nparams);
  }
  EXPECT_EQ(ops(*m, "b"), (Ops{"RETNIL"}));
  EXPECT_EQ(ops(*m, "<main>").back(), "RETNIL");
}

TEST(CompilerModule, GlobalSlotsAndTheirInitialValues) {
  auto m = compile_src(
      "let x = 1\n"
      "fn f() { return undefined_thing }\n"
      "if true { let loc = 2 }\n"
      "print(x)\n");
  ASSERT_EQ(m->global_names.size(), m->global_slots.size());
  int x = global_slot(*m, "x"), f = global_slot(*m, "f"), p = global_slot(*m, "print"),
      u = global_slot(*m, "undefined_thing");
  ASSERT_GE(x, 0);
  ASSERT_GE(f, 0);
  ASSERT_GE(p, 0);
  ASSERT_GE(u, 0);
  EXPECT_EQ(global_slot(*m, "loc"), -1) << "a let in a top-level block is a local of <main>";
  EXPECT_EQ(m->global_slots[x].init, Module::GlobalInit::Undefined);
  EXPECT_EQ(m->global_slots[f].init, Module::GlobalInit::Function);
  EXPECT_EQ(m->global_slots[f].function, m->functions[1].get());
  EXPECT_EQ(m->global_slots[p].init, Module::GlobalInit::Builtin);
  EXPECT_EQ(m->global_slots[u].init, Module::GlobalInit::Undefined);
  // Exactly one slot per distinct name.
  auto names = m->global_names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(CompilerModule, TopLevelLetOrFnReplacesABuiltin) {
  auto m = compile_src("let print = 1\nfn len(x) { return 0 }\nprint = len\n");
  EXPECT_EQ(m->global_slots[global_slot(*m, "print")].init, Module::GlobalInit::Undefined);
  EXPECT_EQ(m->global_slots[global_slot(*m, "len")].init, Module::GlobalInit::Function);
  EXPECT_EQ(ops(*m, "<main>"),
            (Ops{"LOADI r0 1", "DEFGLOBAL r0 g0", "GETGLOBAL r0 g1", "SETGLOBAL r0 g0", "RETNIL"}));
}

// ---------------------------------------------------------------- registers

TEST(CompilerRegisters, ExpressionsLandDirectlyInTheirDestination) {
  auto m = compile_src(
      "fn f(a, b) {\n"
      "  let x = a + b\n"
      "  x = x + 1\n"
      "  x += 2\n"
      "  let y = a * b - x\n"
      "  return y\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"ADD r2 r0 r1", "ADDK r2 r2 k0", "ADDK r2 r2 k1", "MUL r4 r0 r1",
                               "SUB r3 r4 r2", "RET r3", "RETNIL"}));
  EXPECT_EQ(fn(*m, "f").nregs, 5);
}

TEST(CompilerRegisters, CallLaidOutInPlaceForAFreshLocal) {
  auto m = compile_src("fn f(a) {\n  let r = g(a, 2)\n  return r\n}\nfn g(p, q) { return p }\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"GETGLOBAL r1 g1", "MOVE r2 r0", "LOADI r3 2", "CALL r1 2", "RET r1", "RETNIL"}));
}

TEST(CompilerRegisters, AssigningAnEarlyWritingExpressionToALocalGoesThroughATemp) {
  // `x = y and x` must read the old x after writing the result of y.
  auto m = compile_src("fn f(x, y) {\n  x = y and x\n  x = f(x, y)\n}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"MOVE r2 r1", "JMPF r2 -> 4", "MOVE r2 r0", "CHKBOOL r2", "MOVE r0 r2",
                 "GETGLOBAL r2 g0", "MOVE r3 r0", "MOVE r4 r1", "CALL r2 2", "MOVE r0 r2",
                 "RETNIL"}));
}

TEST(CompilerRegisters, TemporariesAreReleasedAfterEachStatement) {
  auto m = compile_src("fn f(a) {\n  a = (a + 1) * (a + 2)\n  a = (a - 1) * (a - 2)\n}\n");
  EXPECT_EQ(fn(*m, "f").nregs, 3);
}

TEST(CompilerRegisters, TooManyRegistersIsAnError) {
  std::string src = "fn big() {\n";
  for (int i = 0; i < 65536; ++i) src += "let v" + std::to_string(i) + " = 0\n";
  src += "}\n";
  try {
    compile_src(src);
    FAIL() << "expected SyntaxError";
  } catch (const SyntaxError& e) {
    EXPECT_STREQ(e.what(), "function too large");
    EXPECT_GT(e.line, 60000);
  }
}

// ---------------------------------------------------------------- constants

TEST(CompilerConstants, LiteralLoads) {
  auto m = compile_src(
      "fn f() {\n"
      "  let a = 7\n  let b = -5\n  let c = 3000000000\n  let d = 1.5\n"
      "  let e = \"hi\"\n  let g = nil\n  let h = true\n  let i = false\n  let j = -2.5\n"
      "  let k = -2147483648\n  let l = 2147483648\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"LOADI r0 7", "LOADI r1 -5", "LOADK r2 k0", "LOADK r3 k1", "LOADK r4 k2",
                 "LOADNIL r5", "LOADTRUE r6", "LOADFALSE r7", "LOADK r8 k3", "LOADI r9 -2147483648",
                 "LOADK r10 k4", "RETNIL"}));
  const auto& k = fn(*m, "f").consts;
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k[0].as_int(), 3000000000);
  EXPECT_EQ(k[1].as_float(), 1.5);
  EXPECT_EQ(k[2].as_str()->view(), "hi");
  EXPECT_EQ(k[3].as_float(), -2.5);
  EXPECT_EQ(k[4].as_int(), 2147483648);
}

TEST(CompilerConstants, DeduplicatedByTypeAndBits) {
  auto m = compile_src(
      "fn f(x) {\n"
      "  x = x + 1\n  x = x + 1\n  x = x + 1.0\n  x = x * 0.0\n  x = x * -0.0\n"
      "  x = x - \"s\"\n  x = x - \"s\"\n  x = x + 1.0\n"
      "}\n");
  const auto& k = fn(*m, "f").consts;
  ASSERT_EQ(k.size(), 5u);
  EXPECT_TRUE(k[0].is_int());
  EXPECT_TRUE(k[1].is_float());
  EXPECT_FALSE(std::signbit(k[2].as_float()));
  EXPECT_TRUE(std::signbit(k[3].as_float()));
  EXPECT_TRUE(k[4].is_str());
}

// ---------------------------------------------------------------- arithmetic forms

TEST(CompilerArith, ConstantOnTheRightUsesTheKForm) {
  auto m = compile_src(
      "fn f(a) {\n"
      "  let r = a + 1\n  r = a - 2\n  r = a * 3\n  r = a / 4\n  r = a // 5\n  r = a % 6\n"
      "  r = a ** 7\n  r = a @ 8\n  r = 9 - a\n  r = a - -1.5\n  r = -a\n  r = not a\n"
      "}\n");
  EXPECT_EQ(opnames(*m, "f"),
            (Ops{"ADDK", "SUBK", "MULK", "DIVK", "IDIVK", "MODK", "POWK", "LOADI", "MATMUL",
                 "LOADI", "SUB", "SUBK", "NEG", "NOT", "RETNIL"}));
  EXPECT_EQ(ops(*m, "f")[9], "LOADI r2 9") << "non-commutative operands are never swapped";
  EXPECT_EQ(ops(*m, "f")[10], "SUB r1 r2 r0");
}

TEST(CompilerArith, ConstantOnTheLeftOfPlusOrTimesUsesTheFlaggedKForm) {
  auto m = compile_src("fn f(a) {\n  let r = 9 + a\n  r = 2.5 * a\n  r = 1 + 2\n}\n");
  const FunctionProto& f = *m->functions[1];
  ASSERT_EQ(opnames(*m, "f"), (Ops{"ADDK", "MULK", "LOADI", "ADDK", "RETNIL"}));
  EXPECT_EQ(ops(*m, "f")[0], "ADDK r1 r0 k0");
  EXPECT_EQ(f.code[0].flags, kFlagConstLeft);
  EXPECT_EQ(f.code[1].flags, kFlagConstLeft);
  EXPECT_EQ(f.code[3].flags, 0) << "a literal on both sides keeps the usual right-hand K form";
}

TEST(CompilerArith, PrecedenceOfUnaryMinusAndPower) {
  // -2 ** 2 is -(2 ** 2): the minus applies to the power, not the literal.
  auto m = compile_src("fn f() { return -2 ** 2 }\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"LOADI r2 2", "POWK r1 r2 k0", "NEG r0 r1", "RET r0", "RETNIL"}));
}

TEST(CompilerArith, KFormNeedsA16BitConstantIndex) {
  std::string src = "fn f(x) {\n  let l = [";
  for (int i = 0; i < 70000; ++i) src += std::to_string(i) + ".5,";
  src += "0.25]\n  return x + 123456.75\n}\n";
  auto m = compile_src(src);
  const auto& f = fn(*m, "f");
  EXPECT_EQ(count_op(f, Op::ADDK), 0);
  ASSERT_EQ(count_op(f, Op::ADD), 1);
  // The constant goes through LOADK into a temporary instead.
  auto code = ops(*m, "f");
  EXPECT_EQ(code[code.size() - 4].substr(0, 5), "LOADK");
  EXPECT_EQ(code[code.size() - 3].substr(0, 3), "ADD");
}

TEST(CompilerArith, ComparisonsAndLogicAsValues) {
  auto m = compile_src(
      "fn f(a, b) {\n"
      "  let r = a == b\n  r = a != b\n  r = a < b\n  r = a <= b\n  r = a > b\n  r = a >= b\n"
      "  let s = a and b\n  let t = a or b\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"EQ r2 r0 r1", "NE r2 r0 r1", "LT r2 r0 r1", "LE r2 r0 r1", "GT r2 r0 r1",
                 "GE r2 r0 r1", "MOVE r3 r0", "JMPF r3 -> 10", "MOVE r3 r1", "CHKBOOL r3",
                 "MOVE r4 r0", "JMPT r4 -> 14", "MOVE r4 r1", "CHKBOOL r4", "RETNIL"}));
}

// ---------------------------------------------------------------- conditions

TEST(CompilerConditions, CompareAndBranch) {
  auto m = compile_src(
      "fn f(a, b) {\n"
      "  if a < b { a = 1 }\n"
      "  if a > b { a = 2 }\n"
      "  if a >= 3 { a = 3 }\n"
      "  if a == -1 { a = 4 }\n"
      "  if a != b { a = 5 }\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"JLT r0 r1", "JMP -> 3", "LOADI r0 1",   //
                 "JLT r1 r0", "JMP -> 6", "LOADI r0 2",   // a > b is b < a
                 "JGEK r0 k0", "JMP -> 9", "LOADI r0 3",  //
                 "JEQK r0 k1", "JMP -> 12", "LOADI r0 4", //
                 "JNE r0 r1", "JMP -> 15", "LOADI r0 5", "RETNIL"}));
}

TEST(CompilerConditions, IfElifElseChain) {
  auto m = compile_src(
      "fn f(a) {\n"
      "  if a < 1 { a = 1 } elif a <= 2 { a = 2 } else { a = 3 }\n"
      "  return a\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"JLTK r0 k0", "JMP -> 4", "LOADI r0 1", "JMP -> 9", "JLEK r0 k1",
                               "JMP -> 8", "LOADI r0 2", "JMP -> 9", "LOADI r0 3", "RET r0",
                               "RETNIL"}));
}

TEST(CompilerConditions, NotAndOrShortCircuitIntoJumps) {
  auto m = compile_src(
      "fn f(a, b, c) {\n"
      "  if a < b and not (b == c) or c { a = 1 }\n"
      "}\n");
  // a<b false -> try c; b==c false -> body; b==c true -> try c; c itself
  // is checked by JMPF.
  EXPECT_EQ(ops(*m, "f"), (Ops{"JLT r0 r1", "JMP -> 4", "JEQ r1 r2", "JMP -> 5", "JMPF r2 -> 6",
                               "LOADI r0 1", "RETNIL"}));
}

TEST(CompilerConditions, NegatedOrderingHopsOverAJump) {
  // not (a < b) cannot become a >= b (NaN), so the pair is inverted by a hop.
  auto m = compile_src("fn f(a, b) {\n  if not (a < b) { a = 1 }\n}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"JLT r0 r1", "JMP -> 3", "JMP -> 4", "LOADI r0 1", "RETNIL"}));
}

TEST(CompilerConditions, PlainValuesAreCheckedByJmpf) {
  auto m = compile_src("fn f(a) {\n  if a { a = 1 }\n  while g(a) { a = 2 }\n}\nfn g(x) {}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"JMPF r0 -> 2", "LOADI r0 1", "LOOP", "GETGLOBAL r1 g1",
                               "MOVE r2 r0", "CALL r1 1", "JMPF r1 -> 9", "LOADI r0 2", "JMP -> 2",
                               "RETNIL"}));
}

// ---------------------------------------------------------------- loops

TEST(CompilerLoops, WhileWithBreakAndContinue) {
  auto m = compile_src(
      "fn f(n) {\n"
      "  while n > 0 {\n"
      "    n -= 1\n"
      "    if n == 5 { continue }\n"
      "    if n == 2 { break }\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"LOOP", "JGTK r0 k0", "JMP -> 11", "SUBK r0 r0 k1", "JEQK r0 k2", "JMP -> 7",
                 "JMP -> 0", "JEQK r0 k3", "JMP -> 10", "JMP -> 11", "JMP -> 0", "RETNIL"}));
}

TEST(CompilerLoops, ForRangeShapes) {
  auto m = compile_src(
      "fn f(n) {\n"
      "  for i in range(n) { n += i }\n"
      "  for i in range(2, n) { continue }\n"
      "  for i in range(10, 0, -2) { break }\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"LOADI r1 0", "MOVE r2 r0", "LOADI r3 1", "FORPREP r1 -> 6", "ADD r0 r0 r4",
                 "FORLOOP r1 -> 4",  //
                 "LOADI r1 2", "MOVE r2 r0", "LOADI r3 1", "FORPREP r1 -> 12", "JMP -> 11",
                 "FORLOOP r1 -> 10",  //
                 "LOADI r1 10", "LOADI r2 0", "LOADI r3 -2", "FORPREP r1 -> 18", "JMP -> 18",
                 "FORLOOP r1 -> 16", "RETNIL"}));
  EXPECT_EQ(fn(*m, "f").nregs, 5);
}

TEST(CompilerLoops, ForRangeCallArgumentEvaluatedInPlace) {
  auto m = compile_src("fn f(l) {\n  for i in range(len(l)) { print(i) }\n}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"LOADI r1 0", "GETGLOBAL r2 g1", "MOVE r3 r0", "CALL r2 1", "LOADI r3 1",
                 "FORPREP r1 -> 10", "GETGLOBAL r5 g2", "MOVE r6 r4", "CALL r5 1",
                 "FORLOOP r1 -> 6", "RETNIL"}));
}

TEST(CompilerLoops, ForInList) {
  auto m = compile_src(
      "fn f(l) {\n"
      "  let s = 0\n"
      "  for x in l { s += x }\n"
      "  return s\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"LOADI r1 0", "MOVE r2 r0", "ITERPREP r2 -> 5", "ADD r1 r1 r5",
                               "ITERLOOP r2 -> 3", "RET r1", "RETNIL"}));
}

TEST(CompilerLoops, LoopVariableIsAFreshLocalOfTheBody) {
  auto m = compile_src("let i = 100\nfor i in range(3) { i = i * 2 }\nprint(i)\n");
  // Inside the loop `i` is R[A+3] (r3); after it, the global again.
  EXPECT_EQ(ops(*m, "<main>"),
            (Ops{"LOADI r0 100", "DEFGLOBAL r0 g0", "LOADI r0 0", "LOADI r1 3", "LOADI r2 1",
                 "FORPREP r0 -> 8", "MULK r3 r3 k0", "FORLOOP r0 -> 6", "GETGLOBAL r0 g1",
                 "GETGLOBAL r1 g0", "CALL r0 1", "RETNIL"}));
}

// ---------------------------------------------------------------- names

TEST(CompilerNames, BlockScopingAndShadowing) {
  auto m = compile_src(
      "fn f(x) {\n"
      "  let x = x + 1\n"   // the init reads the parameter
      "  if x > 0 {\n"
      "    let x = 10\n"    // shadows in the block
      "    x = 11\n"
      "  }\n"
      "  x = 12\n"          // the line-2 x again
      "  let x = 13\n"      // same-block redeclaration: a new local
      "  return x\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"ADDK r1 r0 k0", "JGTK r1 k1", "JMP -> 5", "LOADI r2 10",
                               "LOADI r2 11", "LOADI r1 12", "LOADI r2 13", "RET r2", "RETNIL"}));
  const auto& locals = fn(*m, "f").locals;
  ASSERT_EQ(locals.size(), 4u);
  EXPECT_EQ(locals[0].name, "x");
  EXPECT_EQ(locals[0].reg, 0);
  EXPECT_EQ(locals[0].start_pc, 0u);
  EXPECT_EQ(locals[1].reg, 1);
  EXPECT_EQ(locals[1].start_pc, 1u);
  EXPECT_EQ(locals[2].reg, 2);
  EXPECT_EQ(locals[2].start_pc, 4u);
  EXPECT_EQ(locals[2].end_pc, 4u);
  EXPECT_EQ(locals[3].start_pc, 7u);
}

TEST(CompilerNames, TopLevelLetIsGlobalButBlockLetIsLocalOfMain) {
  auto m = compile_src(
      "let g = 1\n"
      "if g > 0 {\n"
      "  let l = g + 1\n"
      "  g = l\n"
      "}\n"
      "g += 2\n");
  EXPECT_EQ(ops(*m, "<main>"),
            (Ops{"LOADI r0 1", "DEFGLOBAL r0 g0", "GETGLOBAL r0 g0", "JGTK r0 k0", "JMP -> 9",
                 "GETGLOBAL r1 g0", "ADDK r0 r1 k1", "MOVE r1 r0", "SETGLOBAL r1 g0",
                 "GETGLOBAL r0 g0", "ADDK r0 r0 k2", "SETGLOBAL r0 g0", "RETNIL"}));
  ASSERT_EQ(fn(*m, "<main>").locals.size(), 1u);
  EXPECT_EQ(fn(*m, "<main>").locals[0].name, "l");
}

TEST(CompilerNames, FunctionsAreHoistedAndGlobalsLateBound) {
  auto m = compile_src(
      "fn a() { return b() + later }\n"
      "fn b() { return 1 }\n"
      "let later = 2\n");
  EXPECT_EQ(ops(*m, "a"), (Ops{"GETGLOBAL r1 g1", "CALL r1 0", "GETGLOBAL r2 g2", "ADD r0 r1 r2",
                               "RET r0", "RETNIL"}));
  EXPECT_EQ(m->global_names, (std::vector<std::string>{"a", "b", "later"}));
}

TEST(CompilerNames, FunctionsMayBeReassigned) {
  auto m = compile_src("fn f() {}\nfn g() { f = print\n  len = f }\n");
  EXPECT_EQ(ops(*m, "g"), (Ops{"GETGLOBAL r0 g2", "SETGLOBAL r0 g0", "GETGLOBAL r0 g0",
                               "SETGLOBAL r0 g3", "RETNIL"}));
}

TEST(CompilerNames, ReadingAnUnknownNameCompilesToARuntimeCheck) {
  auto m = compile_src("fn f() { return nope }\n");
  int slot = global_slot(*m, "nope");
  ASSERT_GE(slot, 0);
  EXPECT_EQ(m->global_slots[slot].init, Module::GlobalInit::Undefined);
  EXPECT_EQ(ops(*m, "f")[0], "GETGLOBAL r0 g" + std::to_string(slot));
  EXPECT_EQ(count_op(fn(*m, "<main>"), Op::DEFGLOBAL), 0);
}

void expect_syntax_error(const std::string& src, const std::string& msg, int line, int col) {
  try {
    compile_src(src);
    ADD_FAILURE() << "expected SyntaxError for:\n" << src;
  } catch (const SyntaxError& e) {
    EXPECT_EQ(std::string(e.what()), msg);
    EXPECT_EQ(e.line, line);
    EXPECT_EQ(e.col, col);
  }
}

TEST(CompilerNames, AssigningAnUndeclaredNameIsASyntaxError) {
  expect_syntax_error("let a = 1\n  b = 2\n", "name 'b' is undeclared", 2, 3);
  expect_syntax_error("fn f() {\n  if true { let t = 1 }\n  t += 1\n}\n", "name 't' is undeclared",
                      3, 3);
  // A name that is only ever read is not declared by that read.
  expect_syntax_error("print(q)\nq = 1\n", "name 'q' is undeclared", 2, 1);
  // A let inside a top-level block does not make a global.
  expect_syntax_error("if true { let w = 1 }\nfn f() { w = 2 }\n", "name 'w' is undeclared", 2,
                      10);
}

// ---------------------------------------------------------------- calls and indexing

TEST(CompilerCalls, KeywordCallsAndCallNames) {
  auto m = compile_src("let t = zeros([2, 3], dtype=f32)\nlet s = sum(t, axis=1, keepdim=true)\n");
  EXPECT_EQ(ops(*m, "<main>"),
            (Ops{"GETGLOBAL r0 g2", "LOADI r2 2", "LOADI r3 3", "NEWLIST r1 r2 2",
                 "GETGLOBAL r2 g3", "CALLKW r0 1 k0", "DEFGLOBAL r0 g0", "GETGLOBAL r0 g4",
                 "GETGLOBAL r1 g0", "LOADI r2 1", "LOADTRUE r3", "CALLKW r0 1 k1",
                 "DEFGLOBAL r0 g1", "RETNIL"}));
  const auto& main = fn(*m, "<main>");
  ASSERT_EQ(main.consts.size(), 2u);
  ASSERT_TRUE(main.consts[1].is_list());
  const auto& names = main.consts[1].as_list()->items;
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].as_str()->view(), "axis");
  EXPECT_EQ(names[1].as_str()->view(), "keepdim");
  ASSERT_NE(main.call_name_at(5), nullptr);
  EXPECT_EQ(*main.call_name_at(5), "zeros");
  EXPECT_EQ(*main.call_name_at(11), "sum");
  EXPECT_EQ(main.call_names.size(), 2u);
}

TEST(CompilerCalls, CallNamesOnlyForPlainNameCallees) {
  auto m = compile_src("fn f(l) {\n  l[0](1)\n  f(l)\n}\n");
  const auto& f = fn(*m, "f");
  ASSERT_EQ(f.call_names.size(), 1u);
  EXPECT_EQ(f.call_names[0].second, "f");
  EXPECT_EQ(f.code[f.call_names[0].first].op, Op::CALL);
}

TEST(CompilerIndex, GetAndSetSingleAndMulti) {
  auto m = compile_src(
      "fn f(t, i, j, v) {\n"
      "  let a = t[i]\n"
      "  let b = t[i, j]\n"
      "  t[i] = v\n"
      "  t[i, j] = v\n"
      "}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"GETINDEX r4 r0 r1", "MOVE r6 r0", "MOVE r7 r1", "MOVE r8 r2",
                 "GETINDEXN r5 r6 2", "SETINDEX r0 r1 r3", "MOVE r6 r0", "MOVE r7 r1",
                 "MOVE r8 r2", "SETINDEXN r6 r3 2", "RETNIL"}));
}

TEST(CompilerIndex, AugmentedStoreEvaluatesObjectAndIndexOnce) {
  auto m = compile_src("fn f(i) {\n  g()[i + 1] += 2\n  g()[i, 0] *= i\n}\nfn g() {}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"GETGLOBAL r1 g1", "CALL r1 0", "ADDK r2 r0 k0", "GETINDEX r3 r1 r2",
                 "ADDK r3 r3 k1", "SETINDEX r1 r2 r3",  //
                 "GETGLOBAL r1 g1", "CALL r1 0", "MOVE r2 r0", "LOADI r3 0", "GETINDEXN r4 r1 2",
                 "MUL r4 r4 r0", "SETINDEXN r1 r4 2", "RETNIL"}));
  EXPECT_EQ(count_op(fn(*m, "f"), Op::CALL), 2);
}

TEST(CompilerIndex, StoreEvaluatesObjectIndexThenValue) {
  auto m = compile_src("fn f() {\n  g(1)[g(2)] = g(3)\n}\nfn g(x) {}\n");
  EXPECT_EQ(ops(*m, "f"),
            (Ops{"GETGLOBAL r0 g1", "LOADI r1 1", "CALL r0 1", "GETGLOBAL r1 g1", "LOADI r2 2",
                 "CALL r1 1", "GETGLOBAL r2 g1", "LOADI r3 3", "CALL r2 1", "SETINDEX r0 r1 r2",
                 "RETNIL"}));
}

// ---------------------------------------------------------------- lists

TEST(CompilerLists, SmallLiteral) {
  auto m = compile_src("fn f(a) {\n  let e = []\n  let l = [a, 1, [2]]\n  return l\n}\n");
  EXPECT_EQ(ops(*m, "f"), (Ops{"NEWLIST r1 r2 0", "MOVE r3 r0", "LOADI r4 1", "LOADI r6 2",
                               "NEWLIST r5 r6 1", "NEWLIST r2 r3 3", "RET r2", "RETNIL"}));
}

TEST(CompilerLists, LongLiteralIsBuiltInChunks) {
  std::string src = "let l = [";
  for (int i = 0; i < 100000; ++i) src += std::to_string(i) + ",";
  src += "]\n";
  auto m = compile_src(src);
  const auto& main = fn(*m, "<main>");
  EXPECT_EQ(count_op(main, Op::NEWLIST), 1);
  EXPECT_EQ(count_op(main, Op::LISTEXT), 97);  // 98 chunks of at most 1024
  EXPECT_EQ(count_op(main, Op::LOADI), 100000);
  EXPECT_LE(main.nregs, 1025 + 1);
  int total = 0;
  for (const auto& in : main.code) {
    if (in.op == Op::NEWLIST || in.op == Op::LISTEXT) {
      EXPECT_EQ(in.a, 0);
      total += in.c;
    }
  }
  EXPECT_EQ(total, 100000);
  EXPECT_EQ(main.code[main.code.size() - 2].op, Op::DEFGLOBAL);
}

TEST(CompilerLists, MillionElementLiteralCompiles) {
  std::string src = "fn f() {\n  return [";
  for (int i = 0; i < 1000000; ++i) src += "1.5,";
  src += "]\n}\n";
  auto m = compile_src(src);
  const auto& f = fn(*m, "f");
  EXPECT_EQ(f.consts.size(), 1u);
  EXPECT_EQ(count_op(f, Op::LISTEXT), 976);  // ceil(1e6 / 1024) - 1
  EXPECT_LE(f.nregs, 1026);
}

TEST(CompilerLists, AssigningALongLiteralToALocalSeesTheOldValue) {
  std::string src = "fn f(x) {\n  x = [x";
  for (int i = 0; i < 2000; ++i) src += ", x";
  src += "]\n}\n";
  auto m = compile_src(src);
  const auto& f = fn(*m, "f");
  // Built in a temporary, moved into x only at the end.
  EXPECT_EQ(f.code[f.code.size() - 2].op, Op::MOVE);
  EXPECT_EQ(f.code[f.code.size() - 2].a, 0);
  for (size_t pc = 0; pc + 2 < f.code.size(); ++pc)
    if (f.code[pc].op == Op::NEWLIST || f.code[pc].op == Op::LISTEXT) {
      EXPECT_NE(f.code[pc].a, 0);
    }
}

// ---------------------------------------------------------------- line table

TEST(CompilerLines, EachInstructionCarriesItsNodesLine) {
  auto m = compile_src(
      "fn h(a, b) {\n"
      "  let c = a +\n"
      "    b *\n"
      "    a\n"
      "  return c\n"
      "}\n"
      "print(\n"
      "  1,\n"
      "  len(\n"
      "    2))\n");
  const auto& h = fn(*m, "h");
  EXPECT_EQ(h.code[0].op, Op::MUL);
  EXPECT_EQ(h.lines[0], 3);
  EXPECT_EQ(h.code[1].op, Op::ADD);
  EXPECT_EQ(h.lines[1], 2);
  EXPECT_EQ(h.lines[2], 5);  // RET
  const auto& main = fn(*m, "<main>");
  ASSERT_EQ(opnames(*m, "<main>"), (Ops{"GETGLOBAL", "LOADI", "GETGLOBAL", "LOADI", "CALL",
                                        "CALL", "RETNIL"}));
  EXPECT_EQ(main.lines[1], 8);   // the literal 1
  EXPECT_EQ(main.lines[3], 10);  // the literal 2
  EXPECT_EQ(main.lines[4], 9);   // len(...)
  EXPECT_EQ(main.lines[5], 7);   // print(...)
}

TEST(CompilerLines, ConditionJumpsCarryTheConditionsLine) {
  auto m = compile_src("fn f(a) {\n  while a <\n    3 {\n    a += 1\n  }\n}\n");
  const auto& f = fn(*m, "f");
  EXPECT_EQ(f.lines[0], 2);  // LOOP
  EXPECT_EQ(f.lines[1], 2);  // JLTK
  EXPECT_EQ(f.lines[3], 4);  // ADDK
  EXPECT_EQ(f.lines[4], 2);  // back edge
}

}  // namespace
}  // namespace tessera

// ---------------------------------------------------------------- sessions

namespace tessera {
namespace {

std::unique_ptr<Module> compile_in(const std::string& src, const Module* session) {
  CompileOptions copts;
  copts.is_builtin = [](std::string_view n) { return n == "print"; };
  copts.session = session;
  return compile(parse("s.tsb", src), copts);
}

TEST(CompilerSession, ALaterSourceKeepsTheEarlierGlobalsSlots) {
  auto first = compile_in("let x = 1\nfn f() { return y }\nprint(x)\n", nullptr);
  auto second = compile_in("x = 2\nlet y = 3\nfn g() { return f() }\nlet z = 4\n", first.get());
  // The earlier names first, in their slots, kept as the session holds them.
  ASSERT_GE(second->global_names.size(), first->global_names.size());
  for (size_t i = 0; i < first->global_names.size(); ++i) {
    EXPECT_EQ(second->global_names[i], first->global_names[i]);
    EXPECT_EQ(second->global_slots[i].init, Module::GlobalInit::Kept) << first->global_names[i];
  }
  // `y` was only read by the first source; the second declares it.
  const int y = global_slot(*second, "y");
  ASSERT_GE(y, 0);
  EXPECT_LT(static_cast<size_t>(y), first->global_names.size());
  EXPECT_FALSE(first->global_slots[static_cast<size_t>(y)].declared);
  EXPECT_TRUE(second->global_slots[static_cast<size_t>(y)].declared);
  // New names come after; `g` starts out holding its function.
  const int g = global_slot(*second, "g");
  EXPECT_GE(static_cast<size_t>(g), first->global_names.size());
  EXPECT_EQ(second->global_slots[static_cast<size_t>(g)].init, Module::GlobalInit::Function);
}

TEST(CompilerSession, AssigningANameNoSourceDeclaredIsStillAnError) {
  auto first = compile_in("print(w)\n", nullptr);  // reads w: an undeclared slot
  EXPECT_THROW(compile_in("w = 1\n", first.get()), SyntaxError);
}

TEST(CompilerSession, AFunctionOfTheSameNameRebindsTheSlot) {
  auto first = compile_in("fn f() { return 1 }\n", nullptr);
  auto second = compile_in("fn f() { return 2 }\n", first.get());
  const int f = global_slot(*second, "f");
  EXPECT_EQ(f, global_slot(*first, "f"));
  EXPECT_EQ(second->global_slots[static_cast<size_t>(f)].init, Module::GlobalInit::Function);
  EXPECT_EQ(second->global_slots[static_cast<size_t>(f)].function, second->functions[1].get());
}

}  // namespace
}  // namespace tessera
