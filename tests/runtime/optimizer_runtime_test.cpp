// The trace optimizer inside the JIT: programs behave exactly as in the
// interpreter with it (the default) and without it (opt=0), including where
// its transformations must hold back (aliased lists, a helper that moves a
// list's storage) and where a guard it moved before the loop fails on entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "optimizer/pipeline.h"
#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

JitParams params(int opt) {
  JitParams p;
  p.set("async=0");
  p.set("hotloop=3");
  p.set("hotexit=2");
  p.set("opt=" + std::to_string(opt));
  return p;
}

// Runs with the optimizer on and off; both must match the interpreter.
std::unique_ptr<HotspotObserver> expect_same_with_and_without_optimizer(const std::string& src) {
  testing::expect_same_as_interpreter(src, params(0));
  return testing::expect_same_as_interpreter(src, params(1));
}

// Whether some instruction with opcode `op` comes before the trace's LOOP.
bool before_loop(const jit::Trace& t, jit::IROp op) {
  const jit::IRRef loop = t.ir.loop_ref();
  for (jit::IRRef r = 0; r < loop && loop != jit::kNoRef; ++r)
    if (t.ir[r].op == op) return true;
  return false;
}

TEST(OptimizerInJit, InvariantGlobalLoadMovesBeforeTheLoopAndFailsThereOnEntry) {
  // G is read every iteration and never stored by the loop: its load and
  // type guard run once per entry. When G becomes a float the moved guard
  // fails before the first iteration, and the interpreter takes over.
  auto rt = expect_same_with_and_without_optimizer(
      "let G = 3\n"
      "fn run(n) {\n  let s = 0\n  for i in range(n) { s = s + G * i }\n  return s\n}\n"
      "print(run(100))\nG = 1.5\nprint(run(100))\nprint(run(100))\nG = 2\nprint(run(100))\n");
  const auto& traces = rt->tracing()->traces();
  ASSERT_FALSE(traces.empty());
  EXPECT_TRUE(before_loop(*traces[0], jit::IROp::GLOAD)) << jit::print_ir(traces[0]->ir);
  EXPECT_GT(traces[0]->exits[0], 0u);  // the moved guard's exit: snapshot 0
}

// Whether some trace loads a list element (LLOAD) after it stored one.
bool loads_after_a_store(const HotspotObserver& rt) {
  for (const auto& t : rt.tracing()->traces()) {
    bool stored = false;
    for (const jit::IRIns& in : t->ir.instructions()) {
      if (in.op == jit::IROp::LSTORE) stored = true;
      if (in.op == jit::IROp::LLOAD && stored) return true;
    }
  }
  return false;
}

TEST(OptimizerInJit, TwoNamesForOneListSeeEachOthersStores) {
  auto rt = expect_same_with_and_without_optimizer(
      "fn run(a, b, n) {\n  let s = 0\n"
      "  for i in range(n) {\n    let x = a[i % 4]\n    b[i % 4] = x + i\n    s += a[i % 4] - x\n  }\n"
      "  return s\n}\n"
      "let l = [1, 2, 3, 4]\nprint(run(l, l, 200), l)\nlet m = [1, 2, 3, 4]\nprint(run(l, m, 200), l, m)\n");
  // The optimized trace still reads a[i % 4] again after the store into b
  // (which may be the same list) instead of reusing the first load.
  ASSERT_GE(rt->tracing()->stats().compiled, 1u);
  EXPECT_TRUE(loads_after_a_store(*rt)) << jit::print_ir(rt->tracing()->traces()[0]->ir);
}

TEST(OptimizerInJit, PushInsideTheLoopMovesTheListsStorage) {
  // push may reallocate the list: an element address computed before it is
  // stale after it, and the length changes.
  auto rt = expect_same_with_and_without_optimizer(
      "fn run(l, n) {\n"
      "  for i in range(n) {\n    let x = l[i]\n    push(l, x * 2)\n    l[i] = x + len(l)\n  }\n"
      "  return l[n - 1]\n}\n"
      "let l = [1]\nprint(run(l, 300), len(l), l[299], l[300])\n");
  // The loop was compiled with push as an LPUSH (a direct call that may
  // move the elements), and the store after it computes its element
  // address after the push.
  ASSERT_GE(rt->tracing()->stats().compiled, 1u);
  bool ref_after_call = false;
  for (const auto& t : rt->tracing()->traces()) {
    bool called = false;
    for (const jit::IRIns& in : t->ir.instructions()) {
      if (in.op == jit::IROp::LPUSH) called = true;
      if (in.op == jit::IROp::LREF && called) ref_after_call = true;
    }
  }
  EXPECT_TRUE(ref_after_call);
}

TEST(OptimizerInJit, GlobalStoredInTheLoopIsReadBackEachIteration) {
  auto rt = expect_same_with_and_without_optimizer(
      "let G = 0\nlet H = [0, 0]\n"
      "fn run(n) {\n  for i in range(n) { G = G + i\n H[1] = H[1] + G }\n  return G\n}\n"
      "print(run(100), H)\nprint(run(50), H)\n");
  // Compiled code stored G, in the loop's body.
  ASSERT_GE(rt->tracing()->stats().compiled, 1u);
  bool body_store = false;
  for (const auto& t : rt->tracing()->traces()) {
    const jit::IRRef loop = t->ir.loop_ref();
    for (jit::IRRef r = loop == jit::kNoRef ? 0 : loop; r < t->ir.size(); ++r)
      body_store = body_store || t->ir[r].op == jit::IROp::GSTORE;
  }
  EXPECT_TRUE(body_store);
  EXPECT_GT(testing::total_entries(*rt), 0u);
}

TEST(OptimizerInJit, OptimizedTracesAreSmallerThanRecorded) {
  // (Without loop predication, which adds its checks before LOOP: fewer
  // instructions per iteration, more in all.)
  const char* src =
      "let X = [0.0, 1.0, 2.0, 3.0]\nlet V = [0.5, 0.5, 0.5, 0.5]\n"
      "fn step(n) {\n  for k in range(n) {\n    for i in range(4) { X[i] = X[i] + V[i] * 0.01 }\n  }\n}\n"
      "step(300)\nprint(X)\n";
  testing::expect_same_as_interpreter(src, params(0));
  JitParams p = params(1);
  p.set("predicate=0");
  auto rt = testing::expect_same_as_interpreter(src, p);
  uint64_t recorded = 0, compiled = 0;
  for (const auto& t : rt->tracing()->traces()) {
    recorded += t->recorded_size;
    compiled += t->ir.size();
  }
  EXPECT_LT(compiled, recorded);
  EXPECT_EQ(rt->tracing()->stats().ir_recorded, recorded);
  EXPECT_EQ(rt->tracing()->stats().ir_instructions, compiled);
}

// A pass switched by a JIT parameter (peel, predicate) in every tier: the
// program must give the interpreter's results with the pass on and off.
JitParams switched_params(const std::string& param, int on, int tier) {
  JitParams p = params(1);
  p.set(param + "=" + std::to_string(on));
  p.set("tier=" + std::to_string(tier));
  p.set("tier2=2");
  return p;
}

// Runs `src` with `param`=0 and `on` in each tier; returns the `param`=`on`,
// tier=1 runtime.
std::unique_ptr<HotspotObserver> expect_same_with_and_without(const std::string& param, const std::string& src,
                                                         RunStatus status = RunStatus::Ok, int on = 1) {
  EXPECT_EQ(testing::run_script(src, nullptr, false).status, status);  // the program ends as intended
  std::unique_ptr<HotspotObserver> t1;
  for (int tier : {0, 1, 2}) {
    SCOPED_TRACE(param + ", tier=" + std::to_string(tier));
    testing::expect_same_as_interpreter(src, switched_params(param, 0, tier));
    auto rt = testing::expect_same_as_interpreter(src, switched_params(param, on, tier));
    if (tier == 1) t1 = std::move(rt);
  }
  return t1;
}

// Loop peeling of every loop it can (peel=2, optimizer/loop_peel.h; the
// default peel=1 peels only where that pays, which these loops need not).
std::unique_ptr<HotspotObserver> expect_same_with_and_without_peeling(const std::string& src,
                                                                 RunStatus status = RunStatus::Ok) {
  return expect_same_with_and_without("peel", src, status, 2);
}

// Exits taken through snapshots the optimizer appended (the peeled
// iteration's): those past the last snapshot a guard of the body uses.
uint64_t peeled_exits(const jit::Trace& t) {
  const jit::IRRef loop = t.ir.loop_ref();
  if (loop == jit::kNoRef) return 0;
  uint32_t body_max = 0;
  for (jit::IRRef r = loop + 1; r < t.ir.size(); ++r)
    if (t.ir[r].snap != jit::kNoSnap) body_max = std::max<uint32_t>(body_max, t.ir[r].snap);
  uint64_t n = 0;
  for (size_t k = body_max + 1; k < t.exits.size(); ++k) n += t.exits[k];
  return n;
}

// Whether some loop trace was peeled: its PHIs start from values computed
// before LOOP, not from entry SLOADs.
bool has_peeled_loop(const HotspotObserver& rt) {
  for (const auto& t : rt.tracing()->traces()) {
    const jit::IRRef loop = t->ir.loop_ref();
    for (jit::IRRef r = loop == jit::kNoRef ? t->ir.size() : loop + 1; r < t->ir.size(); ++r)
      if (t->ir[r].op == jit::IROp::PHI && t->ir[t->ir[r].op1].op != jit::IROp::SLOAD) return true;
  }
  return false;
}

TEST(OptimizerInJit, PeeledLoopWhoseFirstIterationExits) {
  // Each call starts at an element of another type than the rest: the
  // peeled iteration's type guard fails, often enough for side traces.
  auto rt = expect_same_with_and_without_peeling(
      // (len(l) is a helper call, and bodies with calls are not peeled.)
      "fn run(l, k) {\n  let s = 0\n  let i = k\n  let n = len(l)\n"
      "  while i < n { s = s + l[i] * 2\n i = i + 1 }\n  return s\n}\n"
      "let l = []\nfor j in range(40) { push(l, j) }\n"
      "print(run(l, 0), run(l, 5))\n"
      "l[10] = 2.5\nl[20] = 1.5\n"
      "for r in range(12) { print(run(l, 10), run(l, 20), run(l, 30)) }\n");
  ASSERT_TRUE(rt);
  EXPECT_TRUE(has_peeled_loop(*rt));
  uint64_t peeled = 0;
  for (const auto& t : rt->tracing()->traces()) peeled += peeled_exits(*t);
  EXPECT_GT(peeled, 0u);
}

TEST(OptimizerInJit, PeeledLoopThatExitsInALaterIteration) {
  // The float, and then the string, sit in the middle: the body's guards
  // fail there, after the peeled iteration passed.
  auto rt = expect_same_with_and_without_peeling(
      "fn run(l) {\n  let s = 0\n  for i in range(len(l)) { s = s + l[i] }\n  return s\n}\n"
      "let l = []\nfor j in range(60) { push(l, j) }\n"
      "for r in range(5) { print(run(l)) }\n"
      "l[30] = 0.5\nfor r in range(5) { print(run(l)) }\n"
      "l[45] = \"x\"\nprint(run(l))\n",
      RunStatus::RuntimeError);  // the string: the interpreter raises the error
  ASSERT_TRUE(rt);
  EXPECT_TRUE(has_peeled_loop(*rt));
}

TEST(OptimizerInJit, PeeledLoopsWithObjectsCallsInlinedAndNestedLoops) {
  auto rt = expect_same_with_and_without_peeling(
      // An object slot assigned every iteration (stored through, and a PHI).
      "let a = [1, 2]\nlet b = [3, 4, 5]\nlet cur = a\nlet t = 0\n"
      "for i in range(100) { if i % 3 == 0 { cur = a } else { cur = b }\n t = t + len(cur) + cur[1] }\n"
      "print(t, cur)\n"
      // An inlined call whose guard fails inside it (snapshots with frames).
      "fn half(x) {\n  if x > 150 { return x / 2 }\n  return x // 2\n}\n"
      "let h = 0\nfor i in range(200) { h = h + half(i) }\nprint(h)\n"
      // Nested loops, float accumulators, a rotation (not peeled).
      "let x = 0.0\nlet p = 1\nlet q = 2\n"
      "for i in range(30) {\n  for j in range(20) { x = x * 0.5 + j\n let tmp = p\n p = q\n q = tmp + i }\n}\n"
      "print(x, p, q)\n"
      // A global accumulator read and written in the body.
      "let G = 0\nfor i in range(300) { G = G + i * i }\nprint(G)\n");
  ASSERT_TRUE(rt);
  EXPECT_TRUE(has_peeled_loop(*rt));
}

// Loop predication (predicate=1, optimizer/loop_predicate.h): loops whose
// index stays in range, one that leaves it at its last iteration (the error
// is the interpreter's), and one that breaks out first (its predicate fails
// on every entry).
// Whether a loop trace has no bounds check left in its body while one of
// the checks before its LOOP compares against that list's length.
bool has_predicated_loop(const HotspotObserver& rt) {
  for (const auto& t : rt.tracing()->traces()) {
    const jit::IRRef loop = t->ir.loop_ref();
    if (loop == jit::kNoRef || t->dead) continue;
    bool body_check = false, hoisted = false;
    for (jit::IRRef r = 0; r < t->ir.size(); ++r) {
      const jit::IRIns& g = t->ir[r];
      if (g.op != jit::IROp::GUARDT || t->ir[g.op1].op != jit::IROp::ULT) continue;
      if (r > loop) body_check = true;
      else if (t->ir[t->ir[g.op1].op2].op == jit::IROp::LLEN) hoisted = true;
    }
    if (hoisted && !body_check) return true;
  }
  return false;
}

std::unique_ptr<HotspotObserver> expect_same_with_and_without_predication(const std::string& src,
                                                                     RunStatus status = RunStatus::Ok) {
  return expect_same_with_and_without("predicate", src, status);
}

TEST(OptimizerInJit, PredicatedLoopsGiveTheInterpretersResults) {
  auto rt = expect_same_with_and_without_predication(
      "fn total(l, a, b, step) {\n  let s = 0\n  for i in range(a, b, step) { s = s + l[i] }\n  return s\n}\n"
      "let l = []\nfor j in range(100) { push(l, j * 3) }\n"
      "for r in range(6) { print(total(l, 0, 100, 1), total(l, 5, 100, 7), total(l, 99, 100, 1), total(l, 3, 3, 1)) }\n"
      // Negative starts wrap to the end of the list (l[-1]): not provable,
      // the predicate fails on entry and the interpreter or a side trace runs it.
      "for r in range(6) { print(total(l, -5, 5, 1)) }\n"
      // Breaks out before its index leaves the list.
      "fn first_big(l, n) {\n  for i in range(n) {\n    if i >= len(l) { return -1 }\n    if l[i] > 200 { return i }\n  }\n  return -2\n}\n"
      "for r in range(8) { print(first_big(l, 1000), first_big(l, 50)) }\n");
  ASSERT_TRUE(rt);
  EXPECT_TRUE(has_predicated_loop(*rt));
}

TEST(OptimizerInJit, ShortLoopsAreNotPredicated) {
  // The inner loop runs 3 times per entry: its trace records a trip hint
  // below 8 and keeps its bounds check in the body.
  auto rt = expect_same_with_and_without_predication(
      "let l = [1, 2, 3]\nlet s = 0\nfor r in range(200) {\n  for i in range(3) { s = s + l[i] }\n}\nprint(s)\n");
  ASSERT_TRUE(rt);
  bool short_loop = false;
  for (const auto& t : rt->tracing()->traces()) {
    if (t->ir.loop_ref() == jit::kNoRef || t->ir.loop_trip_hint() < 0 || t->ir.loop_trip_hint() >= 8) continue;
    short_loop = true;
    EXPECT_FALSE(has_predicated_loop(*rt));
  }
  EXPECT_TRUE(short_loop);
}

TEST(OptimizerInJit, PredicatedLoopThatLeavesTheListRaisesTheInterpretersError) {
  auto rt = expect_same_with_and_without_predication(
      "fn total(l, n) {\n  let s = 0\n  for i in range(n) { s = s + l[i] }\n  return s\n}\n"
      "let l = []\nfor j in range(50) { push(l, j) }\n"
      "for r in range(10) { print(total(l, 50)) }\nprint(total(l, 51))\n",
      RunStatus::RuntimeError);
  // The loop was predicated, and the call with n = 51 failed its predicate
  // (or a guard): the trace was left before the index ran out.
  ASSERT_TRUE(rt);
  EXPECT_TRUE(has_predicated_loop(*rt));
  EXPECT_GT(testing::total_exits(*rt), 0u);
}

TEST(OptimizerInJit, DumpWritesTheIrAfterEachPass) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera-optimizer-dump-test";
  std::filesystem::remove_all(dir);
  {
    HotspotObserver rt(params(1));
    VMOptions opts;
    std::ostringstream out;
    opts.out = &out;
    VM vm(opts);
    rt.set_script_name("t.tsb");
    rt.enable_tracing(vm, dir.string());
    vm.set_jit_hooks(&rt);
    ASSERT_EQ(vm.run_source("t.tsb", "let s = 0\nfor i in range(100) { s += i }\nprint(s)\n"), RunStatus::Ok);
    EXPECT_EQ(out.str(), "4950\n");
  }
  // tier=auto: the trace ran in T1 only (too few iterations for T2), so
  // its code is T1's assembly listing (.s); T2's LLVM IR (.ll) would follow
  // an upgrade.
  EXPECT_FALSE(std::filesystem::exists(dir / "t-2-trace0.ll"));
  // The IR as recorded, then after each step of the pipeline, numbered in
  // order (optimizer/passes.def): .1-fold.ir, .2-cse.ir, ...
  std::vector<std::string> suffixes = {".ir", ".s", ".0-recorded.ir"};
  const std::vector<std::string> steps = jit::TracePipeline(jit::TracePipeline::Options(params(1))).step_names();
  for (size_t i = 0; i < steps.size(); ++i) suffixes.push_back("." + std::to_string(i + 1) + "-" + steps[i] + ".ir");
  EXPECT_GT(suffixes.size(), 4u);
  for (const std::string& suffix : suffixes)
    EXPECT_TRUE(std::filesystem::exists(dir / ("t-2-trace0" + suffix))) << suffix;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
