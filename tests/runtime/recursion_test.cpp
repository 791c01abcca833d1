// Function traces and recursion in compiled code: a hot function entry
// starts a trace; a recursive call pushes a real interpreter frame and jumps
// to the callee's function trace (up-recursion); a return from the base frame
// guards the return address, pops the frame and goes on in the caller
// (down-recursion). Output, errors and tracebacks must stay the interpreter's.
#include <gtest/gtest.h>

#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

using testing::Outcome;

JitParams recursion_params() {
  JitParams p;
  p.set("async=0");  // deterministic: traces are there as soon as recorded
  p.set("hotloop=3");
  p.set("hotcall=3");
  p.set("hotexit=2");
  return p;
}

// Runs `source` with and without the JIT and expects identical behaviour.
std::unique_ptr<HotspotObserver> expect_same(const std::string& source) {
  return testing::expect_same_as_interpreter(source, recursion_params());
}

using testing::trace_has_op;

// Which traces use an opcode, and whether one of them ran (was entered or
// reached through a link: its exits or its links were used).
struct OpUse {
  int traces = 0;
};
OpUse uses(const HotspotObserver& rt, jit::IROp op) {
  OpUse u;
  for (const auto& t : rt.tracing()->traces()) u.traces += trace_has_op(*t, op);
  return u;
}

// Whether `fn` got a function trace.
bool has_function_trace(const HotspotObserver& rt, const std::string& fn) {
  for (const auto& t : rt.tracing()->traces())
    if (t->kind == jit::Trace::Kind::Function && t->function == fn) return true;
  return false;
}

const char* kFib =
    "fn fib(n) {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\n"
    "print(fib(20), fib(1), fib(0))\n";

TEST(Recursion, FibCompilesToAFunctionTraceWithUpAndDownRecursion) {
  auto rt = expect_same(kFib);
  const auto& traces = rt->tracing()->traces();
  ASSERT_FALSE(traces.empty());
  // The first trace is fib's function trace, entered by calls of fib.
  EXPECT_EQ(traces[0]->kind, jit::Trace::Kind::Function);
  EXPECT_GT(traces[0]->entries, 0u);
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::Recursion)], 0u);
  EXPECT_GE(uses(*rt, jit::IROp::FPUSH).traces, 1);
  EXPECT_GE(uses(*rt, jit::IROp::FPOP).traces, 1);
  EXPECT_GE(uses(*rt, jit::IROp::RETGUARD).traces, 1);
  // Some trace links to the function trace (a recursive call jumps to it).
  bool linked = false;
  for (const auto& t : traces) linked = linked || (t->link == 0 && t->links[t->link_snap] == traces[0]->native);
  EXPECT_TRUE(linked);
}

TEST(Recursion, CallRegisterReachesMemoryOnlyThroughFpushSnapshot) {
  // The register holding the callee is not stored before FPUSH (nothing reads
  // it while the callee runs; its return overwrites it); FPUSH's snapshot
  // carries it, for the interpreter to redo the CALL when the push fails
  // (StackOverflowIsRaisedByTheInterpreter exercises that exit).
  auto rt = expect_same(kFib + std::string("print(fib(15))\n"));
  int pushes = 0;
  for (const auto& t : rt->tracing()->traces()) {
    const jit::TraceIR& ir = t->ir;
    for (jit::IRRef r = 0; r < ir.size(); ++r) {
      if (ir[r].op != jit::IROp::FPUSH) continue;
      ++pushes;
      const jit::IRRef callee = ir[r].op1;
      const uint32_t call_slot = ir[r].op2;
      for (jit::IRRef q = 0; q < r; ++q)
        EXPECT_FALSE(ir[q].op == jit::IROp::SSTORE && ir[q].op1 == call_slot && ir[q].op2 == callee)
            << jit::print_ir(ir);
      bool in_snapshot = false;
      for (const jit::SnapshotEntry& e : ir.snapshots()[ir[r].snap].entries)
        in_snapshot = in_snapshot || (e.slot == call_slot && e.ref == callee);
      EXPECT_TRUE(in_snapshot) << jit::print_ir(ir);
    }
  }
  EXPECT_GT(pushes, 0);
}

TEST(Recursion, ErrorDeepInRecursionHasTheInterpretersTraceback) {
  // Warm up with good calls, then divide by zero at the bottom of a deep
  // recursion whose frames compiled code pushed: the traceback lists them all
  // (truncated the same way).
  auto rt = expect_same(
      "fn down(n, d) {\n  if n == 0 { return 10 // d }\n  return down(n - 1, d) + 1\n}\n"
      "let s = 0\nfor i in range(30) { s += down(i, 1) }\nprint(s)\nprint(down(40, 0))\n");
  // down got a function trace that pushes its recursive frames, and the
  // division by zero left compiled code.
  EXPECT_TRUE(has_function_trace(*rt, "down"));
  EXPECT_GE(uses(*rt, jit::IROp::FPUSH).traces, 1);
  EXPECT_GT(testing::total_exits(*rt), 0u);
}

TEST(Recursion, StackOverflowIsRaisedByTheInterpreter) {
  // Compiled code refuses to push past the depth limit; the interpreter then
  // makes the call and raises `stack overflow` with its usual traceback.
  auto rt = expect_same("fn f(n) { return f(n + 1) }\nfor i in range(3) { print(i) }\nf(0)\n");
  // f's function trace pushed frames until the push at the limit failed.
  EXPECT_TRUE(has_function_trace(*rt, "f"));
  EXPECT_GE(uses(*rt, jit::IROp::FPUSH).traces, 1);
  EXPECT_GT(testing::total_exits(*rt), 0u);
}

TEST(Recursion, ReturnAddressGuardFailsForAnotherCaller) {
  // g returns to two different callers, a and b, which the loop trace
  // inlines: the call of g from inside them makes their frame real and
  // links to g's function trace; the trace that learnt g's return to one of
  // them must leave (RETGUARD) when g returns to the other.
  auto rt = expect_same(
      "fn g(n) {\n  if n <= 0 { return 1 }\n  return g(n - 1) + 1\n}\n"
      "fn a(n) { return g(n) * 2 }\nfn b(n) { return g(n) * 3 }\n"
      "let s = 0\nfor i in range(60) {\n  if i % 5 == 0 { s += b(i % 7) } else { s += a(i % 4) }\n}\nprint(s)\n");
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::Recursion)], 0u);
  EXPECT_TRUE(has_function_trace(*rt, "g"));
  const auto& traces = rt->tracing()->traces();
  int pushes_two_frames = 0;
  uint64_t retguard_exits = 0;
  for (const auto& t : traces) {
    int fpush = 0;
    for (jit::IRRef r = 0; r < t->ir.size(); ++r) {
      const jit::IRIns& in = t->ir[r];
      fpush += in.op == jit::IROp::FPUSH;
      if (in.op == jit::IROp::RETGUARD) retguard_exits += t->exits[in.snap];
    }
    // a's (or b's) frame made real, then g's pushed, and a link to g's trace.
    if (fpush >= 2 && t->link >= 0 && traces[static_cast<size_t>(t->link)]->function == "g") ++pushes_two_frames;
  }
  EXPECT_GE(pushes_two_frames, 1);
  EXPECT_GT(retguard_exits, 0u);
}

TEST(Recursion, TypeChangeOfTheArgumentLeavesTheTrace) {
  auto rt = expect_same(kFib + std::string("print(fib(12.0), fib(2.5))\n"));
  EXPECT_TRUE(has_function_trace(*rt, "fib"));
  EXPECT_GT(testing::total_exits(*rt), 0u);
}

TEST(Recursion, ObjectsReturnedThroughCompiledFramesStayOwned) {
  // Strings and lists returned from frames that compiled code pops: the
  // result's reference is taken before the callee's registers are released.
  auto rt = expect_same(
      "fn s(n) {\n  if n == 0 { return \"\" }\n  let t = s(n - 1)\n  return t + \"ab\"\n}\n"
      "fn l(n) {\n  if n == 0 { return [] }\n  return [n] + l(n - 1)\n}\n"
      "for i in range(12) { print(len(s(i)), len(l(i))) }\nprint(s(5), l(6))\n");
  // Compiled code did pop frames that returned objects.
  EXPECT_GE(uses(*rt, jit::IROp::FPOP).traces, 1);
  EXPECT_GT(testing::total_entries(*rt), 0u);
}

TEST(Recursion, HelperResultsAfterFramePushesAndPopsLandInTheirFrame) {
  // Compiled code moves its base on FPUSH and FPOP without updating
  // JitContext::base; a helper with a result register (str(), `+` on
  // strings) gets it just before the call. In every tier, and with traces
  // of both tiers linked to each other (auto, tier2=1).
  const char* src =
      "fn f(n) {\n  if n == 0 { return str(n) }\n  let t = f(n - 1)\n  let u = str(n % 10)\n"
      "  return t + u\n}\n"
      "fn g(n) {\n  if n < 2 { return len(str(n)) }\n  return g(n - 1) + g(n - 2) + len(str(n))\n}\n"
      "for i in range(25) { print(f(i % 13), g(i % 11)) }\n";
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    JitParams p = recursion_params();
    p.set(std::string("tier=") + tier);
    p.set("tier2=1");
    auto rt = testing::expect_same_as_interpreter(src, p);
    EXPECT_GE(uses(*rt, jit::IROp::FPUSH).traces, 1);
    EXPECT_GE(uses(*rt, jit::IROp::FPOP).traces, 1);
  }
}

TEST(Recursion, MutualRecursionFromInlinedFramesLinksToTheFunctionTrace) {
  auto rt = expect_same(
      "fn even(n) {\n  if n == 0 { return true }\n  return odd(n - 1)\n}\n"
      "fn odd(n) {\n  if n == 0 { return false }\n  return even(n - 1)\n}\n"
      "let c = 0\nfor i in range(40) { if even(i) { c += 1 } }\nprint(c)\n");
  // even's function trace inlines odd, whose call of even makes odd's frame
  // real, pushes even's and links back to the same trace: nothing aborts.
  EXPECT_EQ(rt->tracing()->stats().aborts[static_cast<int>(jit::AbortReason::Recursion)], 0u);
  const auto& traces = rt->tracing()->traces();
  ASSERT_FALSE(traces.empty());
  EXPECT_EQ(traces[0]->function, "even");
  EXPECT_EQ(traces[0]->kind, jit::Trace::Kind::Function);
  int fpush = 0;
  for (jit::IRRef r = 0; r < traces[0]->ir.size(); ++r) fpush += traces[0]->ir[r].op == jit::IROp::FPUSH;
  EXPECT_EQ(fpush, 2);
  EXPECT_EQ(traces[0]->link, 0);
}

TEST(Recursion, ReturnOfAFunctionTraceToAnInterpretedCallerIsNoExit) {
  // The caller's loop never gets hot, so every call of peek enters its
  // function trace from the interpreter and runs to one of its RETs. That is
  // the run's end (Trace::returns): no exit, and no side trace recorded from
  // there into the caller (which made a chain of them, one per call site).
  JitParams p = recursion_params();
  p.set("hotloop=65535");
  auto rt = testing::expect_same_as_interpreter(
      "let xs = [4, 8, 15, 16, 23, 42]\n"
      "fn peek(i) {\n  if i < len(xs) { return xs[i] }\n  return -1\n}\n"
      "let s = 0\nfor i in range(300) { s = s + peek(i % 9) }\nprint(s)\n",
      p);
  const auto& traces = rt->tracing()->traces();
  ASSERT_FALSE(traces.empty());
  const jit::Trace& peek = *traces[0];
  EXPECT_EQ(peek.kind, jit::Trace::Kind::Function);
  EXPECT_GT(peek.entries, 250u);
  EXPECT_GT(peek.returns_taken, 150u);
  // The exits are the other path's (i >= 6: its branch guard), none at a
  // RET, and no side trace starts at a RET (the module is gone by now: the
  // traces' own tables say which exits resume at one).
  for (const auto& t : traces) {
    if (t->is_side) {
      const jit::Trace& parent = *traces[t->parent];
      ASSERT_LT(t->parent_snap, parent.returns.size());
      EXPECT_FALSE(parent.returns_at(t->parent_snap)) << "trace " << t->id << " starts at a RET";
    }
    for (size_t snap = 0; snap < t->returns.size(); ++snap)
      if (t->returns_at(snap)) {
        EXPECT_EQ(t->exits[snap], 0u) << "trace " << t->id << " exit " << snap;
      }
  }
  EXPECT_GT(peek.exits.total(), 0u);
}

TEST(Recursion, ReturnsThroughSeveralFramesIntoACallerLoop) {
  // Regression: one side trace returns through several frames (FPOP after
  // FPOP) whose exits share a snapshot; each exit must write and link
  // relative to the base frame it is taken in (fuzzer seed 57).
  JitParams p;
  p.set("async=0");
  p.set("hotloop=1");
  p.set("hotcall=1");
  p.set("hotexit=1");
  const std::string src =
      "fn rec(n, acc) {\n  if n <= 0 { return acc % 890 }\n  return rec(n - 1, acc * 3 + n)\n}\n"
      "let g1 = 19\nfor i in range(40) {\n  for j in range(69) { g1 = g1 + rec((j * 7) % 6, g1 - 14) }\n}\n"
      "print(g1)\n";
  HotspotObserver rt(p);
  Outcome jit = testing::run_script(src, &rt, true);
  Outcome ref = testing::run_script(src, nullptr, true);
  EXPECT_EQ(jit.err, ref.err);
  EXPECT_EQ(jit.out, ref.out);
  EXPECT_GE(uses(rt, jit::IROp::FPOP).traces, 1);
}

TEST(NestedLoops, OuterLoopRootTraceLinksToTheInnerTrace) {
  // The inner loop (3 iterations) gets hot first; when the outer loop does,
  // its root trace runs the outer body up to the inner loop and links into
  // the inner loop's trace instead of recording it again.
  auto rt = expect_same(
      "fn f(n) {\n  let s = 0\n  for i in range(n) {\n    let k = i % 5\n"
      "    for j in range(3) { s += j * k }\n    s += 1\n  }\n  return s\n}\nprint(f(500))\n");
  bool outer_links_inner = false;
  for (const auto& t : rt->tracing()->traces())
    if (t->kind == jit::Trace::Kind::Loop && t->link >= 0 &&
        rt->tracing()->traces()[static_cast<size_t>(t->link)]->kind == jit::Trace::Kind::Loop)
      outer_links_inner = true;
  EXPECT_TRUE(outer_links_inner);
}

TEST(NestedLoops, CallsOfAFunctionWithLoopsGoThroughItsFunctionTrace) {
  // nbody's shape: a loop calls a function whose own loops are traced. A
  // trace does not inline such a function: it stops at the call until the
  // function has a function trace, then pushes the frame and links to it,
  // and the function's loop exits return into the caller's loop natively.
  auto rt = expect_same(
      "let X = [1.0, 2.0, 3.0, 4.0, 5.0]\n"
      "fn step(dt) {\n  for i in range(5) {\n    for j in range(i + 1, 5) { X[j] = X[j] + dt * X[i] }\n  }\n}\n"
      "for s in range(300) { step(0.001) }\nprint(X)\n");
  // Some trace pushes step's frame and links to step's function trace.
  const auto& traces = rt->tracing()->traces();
  bool pushes_step = false;
  for (const auto& t : traces)
    if (trace_has_op(*t, jit::IROp::FPUSH) && t->link >= 0 &&
        traces[static_cast<size_t>(t->link)]->kind == jit::Trace::Kind::Function &&
        traces[static_cast<size_t>(t->link)]->function == "step")
      pushes_step = true;
  EXPECT_TRUE(pushes_step);
  EXPECT_EQ(rt->tracing()->stats().blacklisted_loops, 0u);
  EXPECT_EQ(rt->tracing()->stats().blacklisted_functions, 0u);
}

// A tree walk returns to the same point from many traces (each inlined
// level, each side trace of a side trace): a hot exit that resumes where
// another exit's side trace starts, with the types it assumes, links to that
// trace instead of recording a copy of it. No exit back to its own trace's
// start is linked so (two such traces would hand the state to and fro).
TEST(Recursion, ExitsThatResumeAlikeShareOneSideTrace) {
  for (const char* tier : {"tier=1", "tier=2"}) {
    SCOPED_TRACE(tier);
    JitParams p = recursion_params();
    p.set(tier);
    auto rt = testing::expect_same_as_interpreter(
        "let seed = 7\nfn rand(n) {\n  seed = seed * 48271 % 2147483647\n  return seed % n\n}\n"
        "fn gen(depth) {\n  if depth == 0 or rand(10) < 3 { return [\"leaf\", rand(5)] }\n"
        "  return [\"op\", rand(3), gen(depth - 1), gen(depth - 1)]\n}\n"
        "fn total(node) {\n  if node[0] == \"leaf\" { return node[1] }\n"
        "  let l = total(node[2])\n  let r = total(node[3])\n"
        "  if node[1] == 0 { return l + r }\n  if node[1] == 1 { return l - r }\n  return l * r % 1009\n}\n"
        "let s = 0\nfor t in range(300) { s = (s * 31 + total(gen(7))) % 1000003 }\nprint(s)\n",
        p);
    const auto& traces = rt->tracing()->traces();
    EXPECT_GE(rt->tracing()->stats().shared_exits, 1u);
    size_t shared = 0;
    for (const auto& t : traces)
      for (const auto& [snap, id] : t->shared_exits) {
        ++shared;
        const jit::Snapshot& exit = t->ir.snapshots()[snap];
        const jit::Trace& side = *traces[id];
        EXPECT_TRUE(side.is_side);
        EXPECT_NE(side.id, t->id);
        EXPECT_EQ(side.proto, exit.base_proto ? exit.base_proto : t->proto);
        EXPECT_EQ(side.start_pc, exit.pc);
        EXPECT_FALSE(exit.base_proto == nullptr && exit.pc == t->start_pc) << "trace " << t->id << " exit " << snap;
        EXPECT_TRUE(t->links[snap] == side.native || side.dead);
      }
    EXPECT_EQ(shared, rt->tracing()->stats().shared_exits);
  }
}

TEST(Globals, ObjectBorrowedFromAGlobalOutlivesTheGlobalsReassignment) {
  // `a` holds the list loaded from L without a reference of its own until
  // L is reassigned; the store must give it one first (ASan checks this).
  auto rt = expect_same(
      "let L = [1, 2, 3]\nfn f(n) {\n  let s = 0\n  for i in range(n) {\n"
      "    let a = L\n    L = [i, i + 1, i + 2]\n    s += a[0] + L[1]\n  }\n  return s\n}\n"
      "print(f(200), L)\n");
  // The store into L was compiled code's.
  ASSERT_GE(rt->tracing()->stats().compiled, 1u);
  EXPECT_TRUE(testing::any_trace_has_op(*rt, jit::IROp::GSTORE));
  EXPECT_GT(testing::total_entries(*rt), 0u);
}

}  // namespace
}  // namespace tessera
