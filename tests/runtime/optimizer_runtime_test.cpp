// The trace optimizer inside the JIT: programs behave exactly as in the
// interpreter with it (the default) and without it (opt=0), including where
// its transformations must hold back (aliased lists, a helper that moves a
// list's storage) and where a guard it moved before the loop fails on entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/jit_runtime.h"
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
std::unique_ptr<JitRuntime> expect_same_with_and_without_optimizer(const std::string& src) {
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

TEST(OptimizerInJit, TwoNamesForOneListSeeEachOthersStores) {
  expect_same_with_and_without_optimizer(
      "fn run(a, b, n) {\n  let s = 0\n"
      "  for i in range(n) {\n    let x = a[i % 4]\n    b[i % 4] = x + i\n    s += a[i % 4] - x\n  }\n"
      "  return s\n}\n"
      "let l = [1, 2, 3, 4]\nprint(run(l, l, 200), l)\nlet m = [1, 2, 3, 4]\nprint(run(l, m, 200), l, m)\n");
}

TEST(OptimizerInJit, PushInsideTheLoopMovesTheListsStorage) {
  // push may reallocate the list: an element address computed before it is
  // stale after it, and the length changes.
  expect_same_with_and_without_optimizer(
      "fn run(l, n) {\n"
      "  for i in range(n) {\n    let x = l[i]\n    push(l, x * 2)\n    l[i] = x + len(l)\n  }\n"
      "  return l[n - 1]\n}\n"
      "let l = [1]\nprint(run(l, 300), len(l), l[299], l[300])\n");
}

TEST(OptimizerInJit, GlobalStoredInTheLoopIsReadBackEachIteration) {
  expect_same_with_and_without_optimizer(
      "let G = 0\nlet H = [0, 0]\n"
      "fn run(n) {\n  for i in range(n) { G = G + i\n H[1] = H[1] + G }\n  return G\n}\n"
      "print(run(100), H)\nprint(run(50), H)\n");
}

TEST(OptimizerInJit, OptimizedTracesAreSmallerThanRecorded) {
  auto rt = expect_same_with_and_without_optimizer(
      "let X = [0.0, 1.0, 2.0, 3.0]\nlet V = [0.5, 0.5, 0.5, 0.5]\n"
      "fn step(n) {\n  for k in range(n) {\n    for i in range(4) { X[i] = X[i] + V[i] * 0.01 }\n  }\n}\n"
      "step(300)\nprint(X)\n");
  uint64_t recorded = 0, compiled = 0;
  for (const auto& t : rt->tracing()->traces()) {
    recorded += t->recorded_size;
    compiled += t->ir.size();
  }
  EXPECT_LT(compiled, recorded);
  EXPECT_EQ(rt->tracing()->stats().ir_recorded, recorded);
  EXPECT_EQ(rt->tracing()->stats().ir_instructions, compiled);
}

TEST(OptimizerInJit, DumpWritesTheIrAfterEachPass) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera-optimizer-dump-test";
  std::filesystem::remove_all(dir);
  {
    JitRuntime rt(params(1));
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
  for (const char* suffix : {".ir", ".s", ".0-recorded.ir", ".1-fold.ir", ".2-cse.ir", ".3-licm.ir", ".4-guards.ir",
                             ".5-cse.ir", ".6-dse.ir", ".7-dce.ir"})
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string("t-2-trace0") + suffix))) << suffix;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
