// HotspotObserver as installed into a VM: which loops and functions the
// interpreter reports hot, how often, with which source lines; and that
// installing it does not change what a program prints.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

using testing::Outcome;

// Runs `source` as t.tsb in a fresh VM; `rt` (if any) is installed as hooks
// (hot-code detection only, no trace compiler).
Outcome run(const std::string& source, HotspotObserver* rt) { return testing::run_script(source, rt, false); }

JitParams params(std::initializer_list<const char*> settings) {
  JitParams p;
  for (const char* s : settings) p.set(s);
  return p;
}

const HotspotObserver::HotLoop* loop_at_line(const HotspotObserver& rt, int line) {
  for (const auto& l : rt.hot_loops()) {
    if (l.line == line) return &l;
  }
  return nullptr;
}

const char* kForLoop100 =
    "let s = 0\n"
    "for i in range(100) {\n"
    "  s = s + i\n"
    "}\n"
    "print(s)\n";

TEST(HotspotObserver, ThresholdsComeFromParams) {
  HotspotObserver rt(params({"hotloop=7", "hotcall=9"}));
  EXPECT_EQ(rt.hotloop_threshold(), 7);
  EXPECT_EQ(rt.hotcall_threshold(), 9u);
  HotspotObserver def;
  EXPECT_EQ(def.hotloop_threshold(), 56);
  EXPECT_EQ(def.hotcall_threshold(), 112u);
}

// Hotness by work: 40 iterations that each make a million-element tensor
// make the loop hot at once (each back-edge counts 1 + 1048576 / hotwork);
// counted by back-edges alone they never reach 56.
TEST(HotspotObserver, TensorWorkMakesALoopHotEarly) {
  const char* src =
      "let x = zeros([1024, 1024])\n"
      "let y = x\n"
      "for i in range(40) {\n"
      "  y = x + 1.0\n"
      "}\n"
      "print(item(sum(y)))\n";
  HotspotObserver rt(params({}));
  Outcome r = run(src, &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "1048576.0\n");
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  // Each taken back-edge (39: the 40th FORLOOP leaves) counts 1 + 64 > 56: hot every time.
  EXPECT_EQ(rt.hot_loops()[0].times, 39u);
  HotspotObserver off(params({"hotwork=0"}));
  r = run(src, &off);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_TRUE(off.hot_loops().empty());
  // Small tensors add nothing: a 16-element tensor per iteration is one back-edge.
  HotspotObserver small(params({}));
  r = run("let t = zeros([16])\nfor i in range(40) { t = t + 1.0 }\nprint(item(sum(t)))\n", &small);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_TRUE(small.hot_loops().empty());
}

TEST(HotspotObserver, HotloopOneReportsEveryBackEdge) {
  HotspotObserver rt(params({"hotloop=1"}));
  Outcome r = run(kForLoop100, &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "4950\n");
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  const auto& l = rt.hot_loops()[0];
  EXPECT_EQ(l.function, "<main>");
  EXPECT_EQ(l.opcode, "FORLOOP");
  // The back-edge instruction carries the loop header's line.
  EXPECT_EQ(l.line, 2);
  // 100 iterations take 99 or 100 back-edges depending on where the loop
  // test sits; either way one report per back-edge.
  EXPECT_GE(l.times, 99u);
  EXPECT_LE(l.times, 100u);
}

TEST(HotspotObserver, HotloopTenReportsOncePerTenBackEdges) {
  HotspotObserver every(params({"hotloop=1"}));
  run(kForLoop100, &every);
  ASSERT_EQ(every.hot_loops().size(), 1u);
  const uint64_t back_edges = every.hot_loops()[0].times;

  HotspotObserver rt(params({"hotloop=10"}));
  Outcome r = run(kForLoop100, &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  // The counter restarts at the threshold after each report.
  EXPECT_EQ(rt.hot_loops()[0].times, back_edges / 10);
  EXPECT_GE(rt.hot_loops()[0].times, 9u);
}

TEST(HotspotObserver, DefaultHotloopIs56) {
  HotspotObserver rt;
  run("let s = 0\nfor i in range(50) { s = s + 1 }\n", &rt);
  EXPECT_TRUE(rt.hot_loops().empty());
  run("let s = 0\nfor i in range(200) { s = s + 1 }\n", &rt);
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  EXPECT_EQ(rt.hot_loops()[0].times, 3u);  // 199 or 200 back-edges / 56
}

TEST(HotspotObserver, WhileAndListLoopsAndNestedLoops) {
  HotspotObserver rt(params({"hotloop=5"}));
  Outcome r = run(
      "let j = 0\n"                      // 1
      "while j < 20 {\n"                 // 2
      "  j = j + 1\n"                    // 3
      "}\n"                              // 4
      "let t = 0\n"                      // 5
      "for x in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] {\n"  // 6
      "  t = t + x\n"                    // 7
      "}\n"                              // 8
      "for a in range(3) {\n"            // 9
      "  for b in range(30) {\n"         // 10
      "    t = t + 1\n"                  // 11
      "  }\n"                            // 12
      "}\n"                              // 13
      "print(j, t)\n",
      &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "20 168\n");
  const auto* w = loop_at_line(rt, 2);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->opcode, "LOOP");
  EXPECT_GE(w->times, 3u);
  EXPECT_LE(w->times, 4u);
  const auto* it = loop_at_line(rt, 6);
  ASSERT_NE(it, nullptr);
  EXPECT_EQ(it->opcode, "ITERLOOP");
  EXPECT_GE(it->times, 2u);
  // The inner loop runs 3 x 30 iterations; its counter carries over between
  // the outer iterations, so it reports about 90 / 5 times.
  const auto* inner = loop_at_line(rt, 10);
  ASSERT_NE(inner, nullptr);
  EXPECT_GE(inner->times, 17u);
  EXPECT_LE(inner->times, 18u);
  // The outer loop has only 2-3 back-edges: never hot at 5.
  EXPECT_EQ(loop_at_line(rt, 9), nullptr);
}

TEST(HotspotObserver, LoopsInsideFunctionsNameTheFunction) {
  HotspotObserver rt(params({"hotloop=10"}));
  Outcome r = run(
      "fn sum(n) {\n"
      "  let s = 0\n"
      "  for i in range(n) { s = s + i }\n"
      "  return s\n"
      "}\n"
      "print(sum(40))\n",
      &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  EXPECT_EQ(rt.hot_loops()[0].function, "sum");
  EXPECT_EQ(rt.hot_loops()[0].function_line, 1);
  EXPECT_EQ(rt.hot_loops()[0].line, 3);
}

const char* kCalls300 =
    "fn inc(x) {\n"
    "  return x + 1\n"
    "}\n"
    "fn twice(x) { return x * 2 }\n"
    "let s = 0\n"
    "for i in range(300) { s = inc(s) }\n"
    "print(twice(s))\n";

TEST(HotspotObserver, HotFunctions) {
  HotspotObserver rt(params({"hotcall=100"}));
  Outcome r = run(kCalls300, &rt);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "600\n");
  ASSERT_EQ(rt.hot_functions().size(), 1u);  // twice() is called once
  EXPECT_EQ(rt.hot_functions()[0].function, "inc");
  EXPECT_EQ(rt.hot_functions()[0].line, 1);
  EXPECT_EQ(rt.hot_functions()[0].times, 3u);

  HotspotObserver def;
  run(kCalls300, &def);
  ASSERT_EQ(def.hot_functions().size(), 1u);
  EXPECT_EQ(def.hot_functions()[0].times, 2u);  // 300 / 112

  HotspotObserver every(params({"hotcall=1"}));
  run(kCalls300, &every);
  ASSERT_EQ(every.hot_functions().size(), 2u);
  EXPECT_EQ(every.hot_functions()[0].times, 300u);
  EXPECT_EQ(every.hot_functions()[1].function, "twice");
  EXPECT_EQ(every.hot_functions()[1].times, 1u);
}

TEST(HotspotObserver, OutputUnchangedWithRuntimeInstalled) {
  const std::string programs[] = {
      kForLoop100,
      kCalls300,
      // (This program used to be a syntax error, `}` then `return` on one
      // line and a `.append` method: it ran no loop and compared only the
      // error message.)
      "fn fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\n"
      "let l = []\n"
      "for i in range(15) { push(l, fib(i)) }\n"
      "print(l)\n"
      "let k = 0\n"
      "while k < 1000 { k = k + 3 }\n"
      "print(k, \"done\")\n",
      // A runtime error inside a hot loop: same output, same report.
      "for i in range(100) {\n"
      "  print(i)\n"
      "  if i == 70 { let x = 1 + nil }\n"
      "}\n",
  };
  for (const std::string& src : programs) {
    Outcome plain = run(src, nullptr);
    for (auto settings : {std::initializer_list<const char*>{"hotloop=1", "hotcall=1"},
                          std::initializer_list<const char*>{}}) {
      HotspotObserver rt(params(settings));
      Outcome jit = run(src, &rt);
      EXPECT_EQ(jit.status, plain.status) << src;
      EXPECT_EQ(jit.out, plain.out) << src;
      EXPECT_EQ(jit.err, plain.err) << src;
      // At hotloop=1 the runtime was really consulted: every program runs
      // a loop, and it was reported hot.
      if (settings.size() == 2) {
        EXPECT_FALSE(rt.hot_loops().empty()) << src;
      }
    }
  }
}

TEST(HotspotObserver, EventsAccumulateAcrossRunsByContent) {
  HotspotObserver rt(params({"hotloop=10"}));
  run(kForLoop100, &rt);
  const uint64_t once = rt.hot_loops().at(0).times;
  run(kForLoop100, &rt);
  ASSERT_EQ(rt.hot_loops().size(), 1u);
  EXPECT_EQ(rt.hot_loops()[0].times, 2 * once);
}

TEST(HotspotObserver, PrintStats) {
  HotspotObserver rt(params({"hotloop=10", "hotcall=100"}));
  rt.set_script_name("dir/t.tsb");
  run(kCalls300, &rt);
  std::ostringstream os;
  rt.print_stats(os, 0.25);
  const std::string s = os.str();
  EXPECT_EQ(s.rfind("tessera-vm stats\n", 0), 0u) << s;
  EXPECT_NE(s.find("jit: on"), std::string::npos) << s;
  EXPECT_NE(s.find("hot-code detection only"), std::string::npos) << s;
  EXPECT_NE(s.find("hotloop=10 hotcall=100 hotexit=10"), std::string::npos) << s;
  EXPECT_NE(s.find("hot loops: 1"), std::string::npos) << s;
  // A loop or function is named by the source it came from (its
  // FunctionProto::file, "t.tsb" as run), not by the script name, which
  // stands in only where the source is not known.
  EXPECT_NE(s.find("    t.tsb:6  in <main>  FORLOOP"), std::string::npos) << s;
  EXPECT_NE(s.find("hot functions: 1"), std::string::npos) << s;
  EXPECT_NE(s.find("    t.tsb:1  inc  hot 3 times"), std::string::npos) << s;
  EXPECT_NE(s.find("wall time: 250.000 ms"), std::string::npos) << s;
}

TEST(HotspotObserver, PrintStatsJitOff) {
  JitParams p;
  p.enabled = false;
  HotspotObserver rt(p);
  std::ostringstream os;
  rt.print_stats(os, 0.001);
  const std::string s = os.str();
  EXPECT_NE(s.find("jit: off"), std::string::npos) << s;
  // Nothing was measured, so no counts are claimed.
  EXPECT_EQ(s.find("hot loops"), std::string::npos) << s;
  EXPECT_EQ(s.find("hot functions"), std::string::npos) << s;
}

}  // namespace
}  // namespace tessera
