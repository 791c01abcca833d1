// End-to-end tests of the trace JIT: each script runs once in the
// interpreter alone and once with the trace compiler (thresholds low, so
// loops are recorded early and guards fail while the trace runs); output,
// errors and tracebacks must be identical, and the traces must really have
// been compiled and entered.
#include <gtest/gtest.h>

#include <initializer_list>
#include <sstream>
#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

using testing::Outcome;

// Runs `source` with the trace compiler installed (or the interpreter alone).
Outcome run(const std::string& source, HotspotObserver* rt) { return testing::run_script(source, rt, true); }

JitParams hot_params(int hotloop = 3) {
  JitParams p;
  p.set("async=0");  // compile before going on: the checks below count entries and exits
  p.set("hotloop=" + std::to_string(hotloop));
  return p;
}

// Runs `source` with and without the JIT and expects identical behaviour.
// Returns the JIT run's runtime for further checks.
std::unique_ptr<HotspotObserver> expect_same(const std::string& source, int hotloop = 3) {
  return testing::expect_same_as_interpreter(source, hot_params(hotloop));
}

using testing::any_trace_has_op;
using testing::total_entries;
using testing::total_exits;

TEST(TraceJit, IntegerLoopCompilesAndMatches) {
  auto rt = expect_same(
      "fn f(n) {\n  let s = 0\n  for i in range(n) { s += (i * i) % 7 }\n  return s\n}\n"
      "print(f(1000), f(5), f(0))\n");
  ASSERT_EQ(rt->tracing()->stats().compiled, 1u);
  EXPECT_GT(rt->tracing()->traces()[0]->entries, 0u);
}

TEST(TraceJit, FloatLoopWithEarlyExitMatches) {
  auto rt = expect_same(
      "fn mandel(cr, ci, maxit) {\n"
      "  let zr = 0.0\n  let zi = 0.0\n"
      "  for it in range(maxit) {\n"
      "    let zr2 = zr * zr\n    let zi2 = zi * zi\n"
      "    if zr2 + zi2 > 4.0 { return it }\n"
      "    zi = 2.0 * zr * zi + ci\n    zr = zr2 - zi2 + cr\n"
      "  }\n  return maxit\n}\n"
      "let n = 0\nfor y in range(30) { for x in range(30) { n += mandel(x / 15.0 - 1.5, y / 15.0 - 1.0, 50) } }\n"
      "print(n)\n");
  EXPECT_GE(rt->tracing()->stats().compiled, 1u);
  EXPECT_GT(total_exits(*rt), 0u);
}

TEST(TraceJit, TypeChangeOfLoopCarriedVariableDeoptimizes) {
  // x is an int for 40 iterations, then becomes a float: the trace compiled
  // for ints must exit and the interpreter must carry on with the float.
  auto rt = expect_same(
      "let x = 0\nlet out = []\n"
      "fn run() {\n  let x = 0\n"
      "  for i in range(100) {\n    if i == 40 { x = x + 0.5 }\n    x = x + 1\n  }\n  return x\n}\n"
      "print(run())\n");
  EXPECT_GT(total_exits(*rt), 0u);
}

TEST(TraceJit, BranchFlipLateInHotLoop) {
  auto rt = expect_same(
      "fn f() {\n  let a = 0\n  let b = 0\n"
      "  for i in range(500) {\n    if i < 450 { a += 1 } else { b += i }\n  }\n"
      "  return [a, b]\n}\nprint(f())\n");
  EXPECT_GT(total_exits(*rt), 0u);
}

TEST(TraceJit, RuntimeErrorInsideCompiledCodeHasTheInterpretersTraceback) {
  auto rt = expect_same(
      "fn div(a, b) {\n  return a // b\n}\n"
      "fn f() {\n  let s = 0\n  for i in range(100) {\n    s += div(100, 60 - i)\n  }\n  return s\n}\n"
      "print(f())\n");
  // The loop (with div inlined) was compiled and running when b reached 0:
  // the divisor guard's exit handed the division to the interpreter.
  ASSERT_EQ(rt->tracing()->stats().compiled, 1u);
  EXPECT_GT(total_entries(*rt), 0u);
  EXPECT_GT(total_exits(*rt), 0u);
}

// What once aborted every recording as NYI is recorded (issue 17): generic
// element stores (a negative list index, a float into an int tensor) are
// helper calls, a range with another step than 1 run into on the way to the
// loop's trace is counted by division, a long list literal's LISTEXT is a
// helper call, and a loop that reassigns a global function it calls is
// recorded again with the global loaded instead of assumed constant.
// type(x) of a typed value and len(l) of a list are no helper calls: the
// type's name is a constant (so `type(v) == "int"` folds away) and the
// length an LLEN. The loops below then have no CALL at all.
TEST(TraceJit, TypeOfATypedValueAndLenOfAListAreNotCalls) {
  auto rt = expect_same(
      "let l = list(200, 0)\nfor i in range(200) { l[i] = i * 3 }\n"
      "let s = 0\nlet i = 0\nwhile i < len(l) {\n  if type(l[i]) == \"int\" { s = s + l[i] } else { s = s - 1 }\n  i = i + 1\n}\n"
      "print(s, type(s))\n");
  EXPECT_TRUE(any_trace_has_op(*rt, jit::IROp::LLEN));
  EXPECT_FALSE(any_trace_has_op(*rt, jit::IROp::CALL));
}

// Runs `src` at tier=1 and at tier=2 (each printing the interpreter's
// output) and calls `check` with each run's runtime.
template <class Check>
void in_both_tiers(const std::string& src, Check check) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    JitParams p = hot_params();
    p.set(std::string("tier=") + tier);
    auto rt = testing::expect_same_as_interpreter(src, p);
    check(*rt);
  }
}

// Runs `src` in both tiers and expects some trace to hold every one of
// `ops` and no CALL.
void expect_a_trace_with_ops_and_no_call(const std::string& src, std::initializer_list<jit::IROp> ops) {
  in_both_tiers(src, [&](HotspotObserver& rt) {
    bool found = false;
    for (const auto& t : rt.tracing()->traces()) {
      bool all = !testing::trace_has_op(*t, jit::IROp::CALL);
      for (jit::IROp op : ops) all = all && testing::trace_has_op(*t, op);
      found = found || all;
    }
    EXPECT_TRUE(found);
  });
}

// A character loop (a search, a tokenizer's classes) runs without helper
// calls: s[i] is a byte and a shared one-byte string, len(s) an SLEN,
// characters compare with characters and constants as bytes (unsigned: the
// bytes of "é" sort after "z"), int(c) of a digit is its byte less '0', and
// assert(c) is a guard.
TEST(TraceJit, CharacterLoopsAreNotCalls) {
  expect_a_trace_with_ops_and_no_call(
      "let t = \"\"\nfor i in range(40) { t = t + \"ab9z é\" }\n"
      "let p = \"9z\"\nlet hits = 0\nlet digits = 0\nlet letters = 0\nlet high = 0\nlet last = \"\"\n"
      "let i = 0\nwhile i < len(t) - 1 {\n  let c = t[i]\n"
      "  if c == p[0] and t[i + 1] == p[1] { hits += 1 }\n"
      "  assert(c != \"\" and len(c) == 1, \"one byte\")\n"
      "  if c >= \"0\" and \"9\" >= c { digits += int(c) } elif c >= \"a\" and c <= \"z\" { letters += 1 }\n"
      "  if c > \"z\" { high += 1 }\n  if c != \"\" and c < \"ab\" { last = c }\n  i += 1\n}\n"
      "print(hits, digits, letters, high, last, len(t))\n",
      {jit::IROp::SBYTE, jit::IROp::SLEN});
}

// Ordering two strings (a sort's comparison, a binary search's) is a direct
// call of a bytewise compare (SLT, SLE), not the generic compare helper:
// `<`, `<=`, `>` and `>=` (the last two with the operands swapped), as
// branches and as values, on strings of every length, the empty one and
// capitals (which sort before lower case) among them.
TEST(TraceJit, StringOrderingIsADirectCompareNotAGenericCall) {
  expect_a_trace_with_ops_and_no_call(
      "let words = [\"pear\", \"apple\", \"fig\", \"banana\", \"kiwi\", \"apple\", \"Zed\", \"\", \"a\", \"ab\", \"\u00e9t\u00e9\"]\n"
      "let lt = 0\nlet le = 0\nlet gt = 0\nlet ge = 0\nlet agree = 0\n"
      "for k in range(300) {\n  for i in range(len(words)) {\n"
      "    let a = words[i]\n    let b = words[(i + k) % len(words)]\n"
      "    if a < b { lt += 1 }\n    if a <= b { le += 1 }\n    if a > b { gt += 1 }\n    if a >= b { ge += 1 }\n"
      "    let c = a < b\n    let d = b > a\n    if c == d { agree += 1 }\n  }\n}\n"
      "print(lt, le, gt, ge, agree)\n",
      {jit::IROp::SLT, jit::IROp::SLE});
}

// min and max of two ints are instructions (IMIN, IMAX: a compare and a
// conditional move), not calls of the tensor built-ins; of floats or mixed
// operands they stay calls.
TEST(TraceJit, MinAndMaxOfIntsAreNotCalls) {
  expect_a_trace_with_ops_and_no_call(
      "let best = list(50, 0)\nfor i in range(50) { best[i] = (i * 37) % 23 - 11 }\n"
      "let hi = -100\nlet lo = 100\nlet s = 0\n"
      "for k in range(2000) {\n  let a = best[k % 50]\n  let b = best[(k * 7) % 50]\n"
      "  hi = max(hi, a)\n  lo = min(lo, b)\n  s += max(a, b) - min(a, b) + min(a, 3)\n}\n"
      "print(hi, lo, s, max(2.5, 1), min(-0.0, 0))\n",
      {jit::IROp::IMIN, jit::IROp::IMAX});
}

// == and != of values of different types (not two numbers; no tensor,
// whose == is elementwise) are decided by the trace's type guards: a tree
// walk's `node == nil` of a list is false, `nil == nil` true, no call.
TEST(TraceJit, EqualityOfDifferentTypesIsDecidedByTypeGuards) {
  expect_a_trace_with_ops_and_no_call(
      "let xs = []\nfor i in range(60) { if i % 3 == 0 { push(xs, [i]) } else { push(xs, [i, i]) } }\n"
      "let c = 0\nlet none = nil\n"
      "for x in xs {\n  if x != nil and x != \"s\" and x != 3 { c += len(x) }\n"
      "  if x == nil or x == 2.5 { c -= 100 }\n  if none == nil and c != nil { c += 1 }\n}\n"
      "print(c, xs[0] == nil, nil == nil, [1] == [1])\n",
      {jit::IROp::LLOAD, jit::IROp::LLEN});
}

// push(l, v) of a list is LPUSH, a direct call that appends (the list takes
// its reference to objects), not the generic built-in call.
TEST(TraceJit, PushIsADirectCallNotABuiltinCall) {
  expect_a_trace_with_ops_and_no_call(
      "let out = []\nlet words = [\"a\", \"bc\"]\nlet nested = []\n"
      "for i in range(300) {\n  push(out, i)\n  push(out, i * 0.5)\n  push(out, words[i % 2])\n"
      "  push(out, i > 1000)\n  push(nested, words)\n}\n"
      "words = nil\nprint(len(out), out[0], out[1], out[2], out[3], out[4 * 299 + 2], len(nested), nested[299])\n",
      {jit::IROp::LPUSH});
}

TEST(TraceJit, FormerlyNyiBytecodesAreRecorded) {
  std::string literal = "[0";
  for (int k = 1; k < 1030; ++k) literal += ", " + std::to_string(k % 7);
  literal += "]";
  auto rt = expect_same(
      "fn twice(x) { return x * 2 }\nfn thrice(x) { return x * 3 }\nlet op = twice\n"
      "fn f(n) {\n  let xs = list(4, 0)\n  let t = zeros([3], i64)\n  let s = 0\n"
      "  for i in range(n) {\n    xs[-1 - i % 4] = i\n    t[i % 3] = i * 0.5\n"
      "    for j in range(i % 9, 30, 4) { s += j }\n    for j in range(12, i % 5, -3) { s -= j }\n"
      "    let l = " + literal + "\n    s += l[i % 1030] + len(l)\n"
      "    s += op(i)\n    if op == twice { op = thrice } else { op = twice }\n  }\n"
      "  print(xs, t)\n  return s\n}\nprint(f(200))\n");
  const jit::TraceStats& st = rt->tracing()->stats();
  EXPECT_GE(st.compiled, 1u);
  EXPECT_EQ(st.aborts[static_cast<int>(jit::AbortReason::NYIBytecode)], 0u);
  EXPECT_GE(st.aborts[static_cast<int>(jit::AbortReason::AssumedGlobalStored)], 1u);
}

// A side trace takes the constants its parent left in registers (a string
// LOADK'd for a compare the parent turned into a guard on the byte) as
// constants behind a guard, so `c == " "` at its start compares bytes: no
// helper call in any side trace. (It took both operands from registers and
// compared them through a helper before.)
TEST(TraceJit, SideTracesTakeTheirParentsConstantsFromRegisters) {
  in_both_tiers(
      "let s = \"\"\nfor k in range(80) { s = s + \"ab cd\" }\n"
      "let spaces = 0\nlet others = 0\nlet i = 0\n"
      "while i < len(s) {\n  let c = s[i]\n  if c == \" \" { spaces += 1; i += 1; continue }\n"
      "  others += 1\n  i += 1\n}\nprint(spaces, others)\n",
      [](HotspotObserver& rt) {
        size_t sides = 0;
        for (const auto& t : rt.tracing()->traces()) {
          if (!t->is_side) continue;
          ++sides;
          EXPECT_FALSE(testing::trace_has_op(*t, jit::IROp::CALL)) << "side trace " << t->id;
        }
        EXPECT_GE(sides, 1u);
      });
}

// A register that holds one of the function's own string constants, loaded
// before the trace began (a local set before the loop, or a constant loaded
// before a call the trace starts after), is that constant behind an identity
// guard: `w == sep` compares w's length and bytes, no compare helper call.
TEST(TraceJit, AStringConstantInARegisterIsAConstant) {
  in_both_tiers(
      "fn count(words) {\n  let sep = \"and\"\n  let n = 0\n"
      "  for w in words { if w == sep { n += 1 } elif w != sep { n += 100 } }\n  return n\n}\n"
      "let ws = []\nfor i in range(300) { push(ws, [\"but\", \"and\", \"nor\"][i % 3]) }\n"
      "print(count(ws))\n",
      [](HotspotObserver& rt) {
        size_t compares = 0, in_count = 0;
        for (const auto& t : rt.tracing()->traces()) {
          for (const jit::CallTarget& c : t->ir.calls()) compares += c.kind() == jit::CallTarget::Kind::Compare;
          in_count += t->function == "count";
        }
        EXPECT_GE(in_count, 1u);
        EXPECT_EQ(compares, 0u);
      });
}

// A range whose step changes from run to run (a sieve strikes out the
// multiples of each prime in turn) is one trace: its direction is guarded,
// not its value (a guard on the value made a side trace per prime).
TEST(TraceJit, ARangeWithAVariableStepIsNotASideTracePerStep) {
  auto rt = expect_same(
      "fn f(n) {\n  let flags = list(n, true)\n  let count = 0\n"
      "  for p in range(2, n) {\n    if flags[p] {\n      count += 1\n"
      "      for j in range(p * p, n, p) { flags[j] = false }\n    }\n  }\n"
      "  for q in range(n - 1, 0, -(n // 50 + 1)) { count += q % 3 }\n  return count\n}\nprint(f(3000))\n");
  const jit::TraceStats& st = rt->tracing()->stats();
  EXPECT_GE(st.compiled, 1u);
  EXPECT_LT(st.compiled, 12u);  // 430 primes below 3000: not one trace each
  EXPECT_EQ(st.aborts[static_cast<int>(jit::AbortReason::NYIBytecode)], 0u);
}

// `-x` of a tensor is a helper call (it aborted the recording before), and
// of a string the helper's error leaves the trace: the interpreter raises
// it with its own message and traceback.
TEST(TraceJit, NegationOfTensorsAndStringsIsAHelperCall) {
  auto rt = expect_same(
      "fn f(n) {\n  let t = arange(20) * 0.5\n  let s = 0.0\n"
      "  for i in range(n) {\n    let u = -t\n    s = s + u[i % 20]\n  }\n  return s\n}\n"
      "print(f(100))\n");
  EXPECT_GE(rt->tracing()->stats().compiled, 1u);
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::NYIBytecode)], 0u);
  auto str_rt = expect_same(
      "fn f(n) {\n  let x = 1\n  for i in range(n) {\n    if i == 50 { x = \"s\" }\n    let y = -x\n  }\n}\n"
      "f(100)\n");
  // The int loop was compiled; x turning into a string left it.
  EXPECT_GE(str_rt->tracing()->stats().compiled, 1u);
  EXPECT_GT(total_exits(*str_rt), 0u);
}

TEST(TraceJit, GuardFailureInsideInlinedFramesRebuildsThem) {
  // g and h are inlined into the loop's trace; at i == 70 the innermost
  // frame takes a new path and raises, three frames deep.
  auto rt = expect_same(
      "fn h(x) {\n  if x == 70 { return [1][x] }\n  return x * 2\n}\n"
      "fn g(x) {\n  return h(x) + 1\n}\n"
      "fn f() {\n  let s = 0\n  for i in range(100) {\n    s += g(i)\n  }\n  return s\n}\n"
      "print(f())\n");
  // The guard that failed is h's, with g's and h's frames in its snapshot.
  ASSERT_EQ(rt->tracing()->stats().compiled, 1u);
  const jit::Trace& t = *rt->tracing()->traces()[0];
  bool exit_with_frames = false;
  for (size_t k = 0; k < t.exits.size(); ++k)
    exit_with_frames = exit_with_frames || (t.exits[k] > 0 && t.ir.snapshots()[k].frames.size() >= 2);
  EXPECT_TRUE(exit_with_frames) << jit::print_ir(t.ir);
}

TEST(TraceJit, ReassignedGlobalFunctionLeavesTheTrace) {
  auto rt = expect_same(
      "fn one() { return 1 }\nfn two() { return 2 }\nlet fun = one\n"
      "fn f() {\n  let s = 0\n  for i in range(100) {\n    if i == 60 { fun = two }\n    s += fun()\n  }\n  return s\n}\n"
      "print(f())\n");
  EXPECT_GT(total_exits(*rt), 0u);
}

TEST(TraceJit, ListLoadsAndStoresWithBoundsAndTypeGuards) {
  auto rt = expect_same(
      "fn f(n) {\n  let a = list(n, 0)\n"
      "  for i in range(n) { a[i] = i * 3 }\n"
      "  a[n - 10] = 1.5\n"
      "  let s = 0.0\n  for i in range(n) { s += a[i] }\n"
      "  for i in range(n + 5) { s += a[i] }\n"
      "  return s\n}\nprint(f(200))\n");
  // The three loops were compiled, their list accesses are raw loads and
  // stores (the sums' loads number loads: an int or the float element added
  // to a float, optimizer/number_load.h), and the index past the end left.
  const jit::TraceStats& st = rt->tracing()->stats();
  EXPECT_EQ(st.compiled - st.side_traces, 3u);  // one root trace per loop
  EXPECT_TRUE(any_trace_has_op(*rt, jit::IROp::LLOADN));
  EXPECT_TRUE(any_trace_has_op(*rt, jit::IROp::LSTORE));
  EXPECT_GT(total_exits(*rt), 0u);
}

TEST(TraceJit, TensorElementsAreRawLoadsAndStoresBehindDtypeAndBoundsGuards) {
  // f32, i32 (wrapping), i64 and bool elements in compiled loops; then the
  // guards fail: the variable is rebound to a tensor of another dtype (and
  // an f16 one, which goes through the helper), and an index runs past the
  // dimension inside compiled code (the interpreter raises the error).
  auto rt = expect_same(
      "fn run(T, I, B, n) {\n  let s = 0.0\n"
      "  for k in range(n) {\n"
      "    for i in range(4) {\n      for j in range(3) {\n"
      "        T[i, j] = T[i, j] + i * 0.5 + j\n        s += T[i, j]\n      }\n    }\n"
      "    I[k % 5] = I[k % 5] + k * 1000000000\n    B[k % 6] = not B[k % 6]\n"
      "  }\n  return s\n}\n"
      "let T = zeros([4, 3])\nlet I = zeros([5], dtype=i32)\nlet B = zeros([6], dtype=bool)\n"
      "print(run(T, I, B, 50), T, I, B)\n"
      "print(run(zeros([4, 3], dtype=i64), zeros([5], dtype=i64), B, 5))\n"
      "print(run(zeros([4, 3], dtype=f16), I, B, 5))\n"
      "print(run(zeros([4, 2]), I, B, 5))\n");
  bool raw = false;
  for (const auto& t : rt->tracing()->traces()) raw = raw || testing::trace_has_op(*t, jit::IROp::TLOAD);
  EXPECT_TRUE(raw);
  EXPECT_GT(total_exits(*rt), 0u);
}

// t[i, j] reads two dimensions: the trace must check the rank before it
// reads the second one (TDIM past a tensor's rank reads past its shape), so
// that a rank-1 tensor of the same dtype leaves the trace and the
// interpreter raises "too many indices".
TEST(TraceJit, TensorElementAccessGuardsTheRankBeforeItsDimensions) {
  auto rt = expect_same(
      "fn get(t, i, j) { return t[i, j] }\n"
      "fn run(t, n) {\n  let s = 0.0\n  for k in range(n) { s = s + get(t, 0, 0) }\n  return s\n}\n"
      "print(run(ones([2, 2]), 500))\nprint(run(ones([3]), 500))\n");
  bool checked = false;
  for (const auto& t : rt->tracing()->traces()) {
    const auto& ins = t->ir.instructions();
    for (jit::IRRef r = 0; r < ins.size(); ++r) {
      if (ins[r].op != jit::IROp::TDIM) continue;
      // Some guard before this TDIM compares the same tensor's TRANK.
      bool guarded = false;
      for (jit::IRRef g = 0; g < r; ++g)
        if (ins[g].op == jit::IROp::GUARDT && ins[ins[g].op1].op == jit::IROp::EQ) {
          const jit::IRIns& eq = ins[ins[g].op1];
          for (jit::IRRef side : {eq.op1, eq.op2})
            guarded = guarded || (ins[side].op == jit::IROp::TRANK && ins[side].op1 == ins[r].op1);
        }
      EXPECT_TRUE(guarded) << "TDIM at " << r << " of trace " << t->id;
      checked = true;
    }
  }
  EXPECT_TRUE(checked);
}

TEST(TraceJit, ListLiteralsKeywordCallsAndNestedForInLoops) {
  // NEWLIST and keyword calls of built-ins run as helper calls inside the
  // trace (a bad keyword raises from compiled code); an outer `for in` loop
  // gets into the inner loop's trace through ITERPREP and JITERLOOP.
  auto rt = expect_same(
      "fn f(rows) {\n  let s = 0\n  for r in rows {\n    for x in r { s += x }\n    s += 1\n  }\n  return s\n}\n"
      "let rows = []\nfor i in range(200) {\n  push(rows, [i, i + 1, i * 2, 3])\n"
      "  let t = zeros([2], dtype=i64)\n  t[1] = i\n  if i % 50 == 0 { print(t, full([2], 1.5, dtype=f32)) }\n}\n"
      "print(f(rows))\npush(rows, [1.5, 2])\npush(rows, [])\nprint(f(rows))\n"
      "for i in range(100) { if i == 90 { let q = zeros([2], dtype=i64, bogus=1) } }\n");
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::KeywordCall)], 0u);
  bool newlist = false, kwcall = false;
  for (const auto& t : rt->tracing()->traces())
    for (const jit::CallTarget& c : t->ir.calls()) {
      newlist = newlist || c.kind() == jit::CallTarget::Kind::NewList;
      kwcall = kwcall || c.kind() == jit::CallTarget::Kind::BuiltinKw;
    }
  EXPECT_TRUE(newlist);
  EXPECT_TRUE(kwcall);
}

TEST(TraceJit, FloatComparedWithIntConstantInABranch) {
  // `x == 0` and `x < 3` with x a float: the constant becomes a float
  // (exactly), so the branch is recorded, not aborted.
  auto rt = expect_same(
      "fn f(n) {\n  let x = 0.0\n  let c = 0\n  for i in range(n) {\n    if x == 0 { c += 1 }\n"
      "    if x < 3 { x += 0.5 } else { x = 0.0 }\n  }\n  return c\n}\nprint(f(200))\n");
  EXPECT_GE(rt->tracing()->stats().compiled, 1u);
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::NYIBytecode)], 0u);
}

TEST(TraceJit, BackgroundCompilationGivesTheSameResults) {
  // async=1: traces compile on the worker thread while the interpreter goes
  // on, and are installed at safe points; behaviour must not change.
  const char* scripts[] = {
      "fn fib(n) {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\nprint(fib(25))\n",
      "fn f(n) {\n  let s = 0\n  for i in range(n) {\n    for j in range(i % 7) { s += i * j % 5 }\n  }\n  return s\n}\n"
      "print(f(100000))\n",
      "fn one() { return 1 }\nfn two() { return 2 }\nlet fun = one\n"
      "fn run() {\n  let s = 0\n  for i in range(30000) { s += fun() }\n  return s\n}\n"
      "print(run())\nfun = two\nprint(run())\nprint(1 // 0)\n",
  };
  for (const char* src : scripts) {
    Outcome ref = run(src, nullptr);
    JitParams p = hot_params(3);
    p.set("async=1");
    HotspotObserver rt(p);
    Outcome jit = run(src, &rt);
    EXPECT_EQ(jit.status, ref.status) << src;
    EXPECT_EQ(jit.out, ref.out) << src;
    EXPECT_EQ(jit.err, ref.err) << src;
    EXPECT_GE(rt.tracing()->stats().recorded, 1u) << src;
  }
}

TEST(TraceJit, WhileLoopsAndBuiltinCalls) {
  auto rt = expect_same(
      "fn f() {\n  let i = 0\n  let s = 0.0\n"
      "  while i < 300 {\n    s += sqrt(i)\n    i += 1\n  }\n  return s\n}\nprint(fmt(f(), 6))\n");
  EXPECT_GE(rt->tracing()->stats().compiled, 1u);
}

TEST(TraceJit, StringsAndListsOfObjectsStayOwned) {
  auto rt = expect_same(
      "fn f() {\n  let parts = []\n  let s = \"\"\n"
      "  for i in range(100) {\n    s = s + \"x\"\n    push(parts, [i, s])\n  }\n"
      "  return [len(s), len(parts), parts[99][0]]\n}\nprint(f())\n");
  // The objects were made by compiled code: the loop ran as a trace.
  ASSERT_EQ(rt->tracing()->stats().compiled, 1u);
  EXPECT_GT(total_entries(*rt), 0u);
}

TEST(TraceJit, HotloopOneTracesEverything) {
  auto rt = expect_same(
      "let total = 0\nfor i in range(50) {\n  for j in range(i) { total += j % 3 }\n}\nprint(total)\n",
      1);
  // Both loops got traces at their first back-edge, and the inner loop's
  // exits (at its end, each outer iteration) went on in side traces.
  const jit::TraceStats& st = rt->tracing()->stats();
  EXPECT_GE(st.compiled, 2u);
  EXPECT_GE(st.side_traces, 1u);
  EXPECT_GT(total_entries(*rt), 0u);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(TraceJitSideTraces, HotExitGetsASideTraceThatLinksBack) {
  // The branch taken at every 3rd iteration leaves the root trace; after
  // hotexit such exits a side trace covers it and links back to the loop.
  auto rt = expect_same(
      "fn f(n) {\n  let a = 0\n  let b = 0\n"
      "  for i in range(n) {\n    if i % 3 == 0 { b += i } else { a += 1 }\n  }\n"
      "  return [a, b]\n}\nprint(f(3000))\n");
  const auto& stats = rt->tracing()->stats();
  EXPECT_GE(stats.side_traces, 1u);
  bool linked = false;
  for (const auto& t : rt->tracing()->traces()) {
    if (!t->is_side || t->link < 0) continue;
    const auto& parent = *rt->tracing()->traces()[t->parent];
    // The parent's exit and the side trace's final exit both go on natively.
    if (parent.links[t->parent_snap] == t->native && t->links[t->link_snap] != nullptr) linked = true;
  }
  EXPECT_TRUE(linked);
  // 1000 branch flips, but only the exits before the side trace existed (and
  // the loop's end) come back to the interpreter.
  EXPECT_LT(total_exits(*rt), 100u);
}

TEST(TraceJitSideTraces, OuterLoopThroughSideTraceIntoInnerTrace) {
  // The inner loop's trace exits at its end; the side trace runs the rest of
  // the outer body, the outer back-edge and the next inner prologue, then
  // links into the inner trace again.
  auto rt = expect_same(
      "fn f(n) {\n  let s = 0\n  let rows = 0\n"
      "  for i in range(n) {\n    for j in range(20) { s += i * j }\n    rows += 1\n  }\n"
      "  return [s, rows]\n}\nprint(f(400))\n");
  EXPECT_GE(rt->tracing()->stats().side_traces, 1u);
}

TEST(TraceJitSideTraces, SideTracesInheritTheTypesTheirParentProved) {
  // The side trace for `i % 3 == 0` reads i, b and n, whose types the root
  // trace proved before the exit: it loads them without a type guard (SLOAD
  // op2 = 2), and the program still gives the interpreter's results in every
  // tier, also once b turns into a float (the side trace's own guards, and
  // then the root trace's, catch that).
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    JitParams p;
    p.set("async=0");
    p.set(std::string("tier=") + tier);
    auto rt = testing::expect_same_as_interpreter(
        "fn f(n, x) {\n  let a = 0\n  let b = x\n"
        "  for i in range(n) {\n    if i % 3 == 0 { b += i * 2 } else { a += 1 }\n  }\n"
        "  return [a, b]\n}\nprint(f(3000, 0))\nprint(f(3000, 0))\nprint(f(3000, 0.5))\n",
        p);
    int inherited = 0;
    for (const auto& t : rt->tracing()->traces()) {
      if (!t->is_side) continue;
      for (jit::IRRef r = 0; r < t->ir.size(); ++r)
        if (t->ir[r].op == jit::IROp::SLOAD && t->ir[r].op2 == 2) {
          ++inherited;
          EXPECT_EQ(t->ir[r].snap, jit::kNoSnap);
        }
    }
    EXPECT_GT(inherited, 0);
  }
}

TEST(TraceJitSideTraces, SideTraceGuardsFailToo) {
  // The side trace is specialised to ints; late in the run b becomes a float.
  auto rt = expect_same(
      "fn f(n) {\n  let a = 0\n  let b = 0\n"
      "  for i in range(n) {\n    if i % 4 == 0 {\n      if i > 2500 { b += 0.5 } else { b += 1 }\n    }\n    a += 1\n  }\n"
      "  return [a, b]\n}\nprint(f(3000))\n");
  EXPECT_GE(rt->tracing()->stats().side_traces, 1u);
  EXPECT_GT(testing::side_trace_exits(*rt), 0u);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Exits test all the registers they overwrite at once and release old
// objects through a helper; returning frames (FPOP) clear the callee's
// objects the same way. Registers holding lists and strings are overwritten
// at hot exits and at returns here; the ASan build checks the counts.
TEST(TraceJit, ExitsAndReturnsReleaseTheObjectsTheyOverwrite) {
  auto rt = expect_same(
      "let G = [1, 2, 3]\n"
      "fn run(n) {\n  let s = 0\n  let name = \"x\"\n"
      "  for i in range(n) {\n    let l = G\n    let t = [i, name]\n    s += l[i % 3] + len(t)\n"
      "    if i % 7 == 0 { name = name + \"y\"\n s += 1 }\n  }\n  return [s, len(name)]\n}\n"
      "fn walk(l, d) {\n  if d == 0 { return len(l) }\n  let m = [d, l]\n  return walk(m, d - 1) + 1\n}\n"
      "print(run(500), G)\nlet k = 0\nfor i in range(200) { k += walk([i], 6) }\nprint(k)\n");
  // Exits were taken (the name change every 7th iteration), and the
  // recursion's frames were popped by compiled code.
  EXPECT_GT(total_exits(*rt), 0u);
  EXPECT_TRUE(any_trace_has_op(*rt, jit::IROp::FPOP));
}

// A local declared inside the loop body is dead at the back-edge: it is not
// written back at the end of each iteration (only exits write it, from the
// point of its declaration on). A local declared before the loop that the
// body overwrites before reading it is live there and is written back.
TEST(TraceRecorderIR, LocalsDeclaredInTheBodyAreNotWrittenBackEachIteration) {
  const std::string src =
      "fn f(n) {\n  let last = 0\n  let s = 0\n  let i = 0\n"
      "  while i < n {\n    let t = i * 3\n    last = t + 1\n    s += t\n    i += 1\n  }\n"
      "  return [s, last]\n}\nprint(f(100), f(3), f(0))\n";
  auto rt = expect_same(src);
  const auto& traces = rt->tracing()->traces();
  ASSERT_GE(traces.size(), 1u);
  const jit::TraceIR& ir = traces[0]->ir;
  // Registers: n=0, last=1, s=2, i=3, t=4.
  bool stores_t = false, stores_last = false;
  for (const jit::IRIns& in : ir.instructions()) {
    if (in.op != jit::IROp::SSTORE) continue;
    stores_t = stores_t || in.op1 == 4;
    stores_last = stores_last || in.op1 == 1;
  }
  EXPECT_FALSE(stores_t) << jit::print_ir(ir);
  EXPECT_TRUE(stores_last) << jit::print_ir(ir);
}

// A loop whose variable changes type every iteration (issue 17's
// polymorphic loops): the root trace cannot close as a loop (its PHI would
// change type), so it links to its own entry; the entry's type guard fails
// for the other type, and that exit grows a peer loop trace for it
// (peer_trace_test.cpp), which cannot close either and links back to the
// root. The loop runs compiled in both types, with no abort.
TEST(TraceRecorderIR, TypeUnstableLoopIsATraceTreeNotAnAbort) {
  HotspotObserver rt(hot_params(3));
  Outcome o = run("fn f(n) {\n  let x = 0\n  let s = 0.0\n  for i in range(n) {\n"
                  "    if x == 0 { x = 0.5 } else { x = 0 }\n    s = s + x\n  }\n"
                  "  return [x, s]\n}\nprint(f(1000))\n", &rt);
  EXPECT_EQ(o.out, "[0, 250.0]\n");
  const jit::TraceStats& st = rt.tracing()->stats();
  EXPECT_EQ(st.aborts[static_cast<int>(jit::AbortReason::TypeUnstable)], 0u);
  EXPECT_GE(st.side_traces, 1u);
  const auto& traces = rt.tracing()->traces();
  ASSERT_FALSE(traces.empty());
  const jit::Trace& root = *traces[0];
  EXPECT_FALSE(root.is_side);
  EXPECT_EQ(root.link, static_cast<int32_t>(root.id)) << "the root links to its own entry";
  bool side_links_root = false;
  for (const auto& t : traces)
    if (t->is_side && t->parent == root.id && t->link == static_cast<int32_t>(root.id)) side_links_root = true;
  EXPECT_TRUE(side_links_root) << "the other type's side trace goes back through the root's entry";
  // Most iterations ran in compiled code: few exits to the interpreter.
  uint64_t exits = 0;
  for (const auto& t : traces) exits += t->exits.total();
  EXPECT_LT(exits, 100u);
}

// Issue 17, item 4: an exit inside a frame the trace inlined gets a side
// trace. It starts in that frame (its snapshot 0 pushes it back), returns
// through it into the loop, and links to the root: the branch the recording
// did not take runs compiled too.
TEST(TraceJit, AnExitInsideAnInlinedFrameGetsASideTrace) {
  auto rt = expect_same(
      "fn f(x) {\n  if x % 3 == 0 { return x * 2 }\n  let y = x + 1\n  return y * y % 7\n}\n"
      "let s = 0\nfor i in range(4000) { s = s + f(i) }\nprint(s)\n");
  const auto& traces = rt->tracing()->traces();
  bool inside = false;
  for (const auto& t : traces) {
    if (!t->is_side) continue;
    // The parent's exit it hangs off is inside f (named, as the protos
    // went with the interpreter).
    const auto& frames = traces[t->parent]->ir.snapshots().at(t->parent_snap).frames;
    if (frames.size() == 1 && frames[0].name == "f") {
      inside = true;
      EXPECT_EQ(t->line, 2) << "its line is f's, where it starts";
      EXPECT_GE(t->link, 0) << "it returns through f and links to a loop trace";
    }
  }
  EXPECT_TRUE(inside) << "a side trace that starts inside the inlined f";
  // Without it every third iteration left for the interpreter (over 1000
  // exits); now the tree covers both branches.
  EXPECT_LT(total_exits(*rt), 100u);
}

// A loop and a function whose recordings always abort are blacklisted; the
// report counts them apart (it once called both "loops").
TEST(TraceJit, BlacklistedLoopsAndFunctionsAreCountedApart) {
  JitParams p = hot_params(3);
  p.set("hotcall=3");
  p.set("blacklist=2");
  p.set("maxrecord=40");
  HotspotObserver rt(p);
  // f's body is longer than maxrecord, so the loop's recordings (which
  // inline f) and f's own abort every time.
  std::string sum = "x";
  for (int k = 1; k < 30; ++k) sum += " + x * " + std::to_string(k);
  Outcome o = run("fn f(x) {\n  let y = " + sum + "\n  return 2\n}\n"
                  "let s = 0\nlet i = 0\nwhile i < 200 { s = s + f(i); i = i + 1 }\nprint(s)\n",
                  &rt);
  EXPECT_EQ(o.out, "400\n");
  const jit::TraceStats& st = rt.tracing()->stats();
  EXPECT_EQ(st.blacklisted_loops, 1u);
  EXPECT_EQ(st.blacklisted_functions, 1u);
  std::ostringstream os;
  rt.tracing()->print_stats(os);
  EXPECT_NE(os.str().find("1 loop and 1 function blacklisted"), std::string::npos) << os.str();
}

}  // namespace
}  // namespace tessera
