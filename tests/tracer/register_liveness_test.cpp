// Register liveness on bytecode (tracer/register_liveness.h): which
// registers an exit must write back when the interpreter resumes somewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "tracer/register_liveness.h"
#include "vm/bytecode/compiler.h"
#include "vm/frontend/parser.h"

namespace tessera::jit {
namespace {

std::unique_ptr<Module> compile_src(const std::string& src) {
  CompileOptions opts;
  opts.is_builtin = [](std::string_view n) { return n == "print" || n == "len"; };
  return compile(parse("t.tsb", src), opts);
}

const FunctionProto& function(const Module& m, const std::string& name) {
  for (const auto& f : m.functions)
    if (f->name == name) return *f;
  ADD_FAILURE() << "no function " << name;
  return *m.functions.front();
}

uint32_t reg_of(const FunctionProto& f, const std::string& local) {
  for (const auto& l : f.locals)
    if (l.name == local) return l.reg;
  ADD_FAILURE() << "no local " << local;
  return 0;
}

uint32_t first_pc(const FunctionProto& f, Op op) {
  for (uint32_t pc = 0; pc < f.code.size(); ++pc)
    if (f.code[pc].op == op) return pc;
  ADD_FAILURE() << "no " << op_info(op).name;
  return 0;
}

// At the loop's back-edge: the sum is read after the loop (live), the loop's
// own registers are read by FORLOOP (live), a local declared in the body is
// written before any read on every path (dead), and so is the parameter the
// range was built from.
TEST(RegisterLiveness, AtTheBackEdgeOfACountingLoop) {
  auto m = compile_src(
      "fn f(n) {\n  let s = 0\n  for i in range(n) {\n    let t = i * 2\n    if i < 3 { s += t }\n  }\n"
      "  return s\n}\n");
  const FunctionProto& f = function(*m, "f");
  const uint32_t back = first_pc(f, Op::FORLOOP);
  const uint32_t loop_regs = f.code[back].a;
  EXPECT_TRUE(register_live_at(f, back, reg_of(f, "s")));
  for (uint32_t r = loop_regs; r < loop_regs + 4; ++r) EXPECT_TRUE(register_live_at(f, back, r)) << r;
  EXPECT_FALSE(register_live_at(f, back, reg_of(f, "t")));
  EXPECT_FALSE(register_live_at(f, back, reg_of(f, "n")));
}

// `if a < b { return x }` is JLT a b; JMP else; RET x: x is read only on the
// path that skips the JMP, which the analysis must follow too.
TEST(RegisterLiveness, CompareAndBranchFollowsBothPaths) {
  auto m = compile_src("fn g(a, b, x) {\n  if a < b { return x }\n  return 0\n}\n");
  const FunctionProto& g = function(*m, "g");
  const uint32_t test = first_pc(g, Op::JLT);
  EXPECT_TRUE(register_live_at(g, test, 2));  // x
  EXPECT_TRUE(register_live_at(g, test, 0));  // a: the compare reads it
  const uint32_t ret0 = static_cast<uint32_t>(g.code.size()) - 1;
  EXPECT_FALSE(register_live_at(g, ret0, 2));  // after the branch, x is never read
}

TEST(RegisterLiveness, ReadInOneBranchOnlyIsLive) {
  auto m = compile_src(
      "fn h(c, x) {\n  let y = 0\n  if c { y = x } else { y = 1 }\n  return y\n}\n");
  const FunctionProto& h = function(*m, "h");
  EXPECT_TRUE(register_live_at(h, 0, 1));                   // x, read when c holds
  EXPECT_FALSE(register_live_at(h, first_pc(h, Op::JMPF), reg_of(h, "y")));  // written on both paths first
}

// A call with keywords reads its callee, its arguments and as many keyword
// values as K[C] names, not every register above it: a temporary above
// them, dead at an inner loop's exit, stays dead on the path that goes
// round the outer loop through the call (a fused trace's results were
// taken as escaping there).
TEST(RegisterLiveness, ACallWithKeywordsReadsOnlyItsKeywordValues) {
  auto m = compile_src(
      "fn f(xs) {\n  let s = 0\n  for c in xs {\n    let a = len(c, end=1)\n"
      "    for i in range(3) { s += ((a * 2 + i) * (a + 3) - i) * (s + 1) }\n  }\n  return s\n}\n");
  const FunctionProto& f = function(*m, "f");
  const uint32_t call = first_pc(f, Op::CALLKW);
  const Instr& in = f.code[call];
  const uint32_t past_kw = in.a + in.b + 2;  // callee, one argument, one keyword value
  for (uint32_t r = in.a; r < past_kw; ++r) EXPECT_TRUE(register_live_at(f, call, r)) << r;
  // The inner loop's temporaries, above its four registers (which FORPREP
  // is taken to read).
  const uint32_t inner_exit = first_pc(f, Op::FORLOOP) + 1;
  const uint32_t temps = std::max<uint32_t>(past_kw, f.code[first_pc(f, Op::FORPREP)].a + 4);
  ASSERT_GT(static_cast<uint32_t>(f.nregs), temps + 1);
  for (uint32_t r = temps; r < static_cast<uint32_t>(f.nregs); ++r) EXPECT_FALSE(register_live_at(f, inner_exit, r)) << r;
}

TEST(RegisterLiveness, OutsideTheFrameOrTheCodeCountsAsLive) {
  auto m = compile_src("fn k(a) { return a }\n");
  const FunctionProto& k = function(*m, "k");
  EXPECT_TRUE(register_live_at(k, 0, static_cast<uint32_t>(k.nregs) + 3));
  EXPECT_TRUE(register_live_at(k, static_cast<uint32_t>(k.code.size()) + 5, 0));
}

}  // namespace
}  // namespace tessera::jit
