// The host tiers inside the JIT: tier=1 (asmjit only), tier=2 (LLVM only)
// and auto (asmjit first, LLVM for traces that run `tier2` iterations)
// give the interpreter's results; auto swaps T2 code in at the loop header
// through the tier-up exit, for loops, side traces and function traces.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include <unistd.h>

#include "runtime/hotspot_observer.h"
#include "runtime/tier_policy.h"
#include "tests/runtime/script_runner.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

JitParams params(const std::string& tier, int tier2 = 5) {
  JitParams p;
  p.set("async=0");  // upgrades happen at the tier-up exit: deterministic
  p.set("hotloop=3");
  p.set("hotcall=3");
  p.set("hotexit=2");
  p.set("tier=" + tier);
  p.set("tier2=" + std::to_string(tier2));
  return p;
}

// Loop-carried ints, floats and a bool, an exit to a side trace, a list
// element store and a call: everything the tier-up exit must write back.
const char* kLoops =
    "fn run(n) {\n"
    "  let s = 0\n  let f = 0.5\n  let flag = false\n  let xs = [0, 0, 0]\n"
    "  for i in range(n) {\n"
    "    s = s + i * 3\n    f = f * 1.0001 + 0.25\n"
    "    if i % 7 == 0 { flag = not flag; xs[i % 3] = xs[i % 3] + 1 }\n"
    "  }\n"
    "  return [s, f, flag, xs, abs(-s)]\n}\n"
    "print(run(50))\nprint(run(1000))\nprint(run(3))\n";

const char* kFib = "fn fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\nprint(fib(20))\n";

// Which tiers compiled code in a run: a pinned tier only its own; auto
// starts every trace in T1 and, at tier2=1, upgrades some to T2.
void expect_tiers_used(const HotspotObserver& rt, const std::string& tier, int tier2) {
  const jit::TraceStats& s = rt.tracing()->stats();
  EXPECT_GE(s.compiled, 1u);
  if (tier == "1") {
    EXPECT_EQ(s.tier_compiled[0], s.compiled);
    EXPECT_EQ(s.tier_compiled[1], 0u);
  } else if (tier == "2") {
    EXPECT_EQ(s.tier_compiled[0], 0u);
    EXPECT_EQ(s.tier_compiled[1], s.compiled);
  } else {
    EXPECT_EQ(s.tier_compiled[0], s.compiled);
    if (tier2 == 1) {
      EXPECT_GT(s.upgrades, 0u);
    }
  }
}

TEST(Tiers, EachTierGivesTheInterpretersResults) {
  for (const char* src : {kLoops, kFib}) {
    for (const char* tier : {"1", "2", "auto"}) {
      SCOPED_TRACE(std::string("tier=") + tier);
      for (int tier2 : {5, 1}) {
        auto rt = testing::expect_same_as_interpreter(src, params(tier, tier2));
        expect_tiers_used(*rt, tier, tier2);
      }
    }
  }
}

TEST(Tiers, PinnedTiersCompileWithOneBackendOnly) {
  auto t1 = testing::expect_same_as_interpreter(kLoops, params("1"));
  const jit::TraceStats& s1 = t1->tracing()->stats();
  EXPECT_GT(s1.tier_compiled[0], 0u);
  EXPECT_EQ(s1.tier_compiled[1], 0u);
  EXPECT_EQ(s1.tier_up_exits, 0u);
  for (const auto& t : t1->tracing()->traces())
    if (!t->dead) {
      EXPECT_EQ(t->tier, 1);
    }

  auto t2 = testing::expect_same_as_interpreter(kLoops, params("2"));
  const jit::TraceStats& s2 = t2->tracing()->stats();
  EXPECT_EQ(s2.tier_compiled[0], 0u);
  EXPECT_GT(s2.tier_compiled[1], 0u);
  for (const auto& t : t2->tracing()->traces())
    if (!t->dead) {
      EXPECT_EQ(t->tier, 2);
    }
}

TEST(Tiers, AutoUpgradesHotTracesAtTheTierUpExit) {
  for (const char* src : {kLoops, kFib}) {
    auto rt = testing::expect_same_as_interpreter(src, params("auto", 5));
    const jit::TraceStats& s = rt->tracing()->stats();
    EXPECT_GT(s.tier_up_exits, 0u);
    EXPECT_GT(s.upgrades, 0u);
    EXPECT_EQ(s.tier_compiled[0], s.compiled);  // every trace started in T1
    bool side_upgraded = false, root_upgraded = false;
    for (const auto& t : rt->tracing()->traces()) {
      if (t->tier != 2) continue;
      EXPECT_EQ(t->upgrade, jit::Trace::Upgrade::Done);
      EXPECT_GT(t->code_size[0], 0u);  // its T1 code came first
      EXPECT_GT(t->code_size[1], 0u);
      (t->is_side ? side_upgraded : root_upgraded) = true;
    }
    EXPECT_TRUE(root_upgraded);
    if (src == kLoops) {
      EXPECT_TRUE(side_upgraded);
    }
  }
}

// A counted loop's trace carries its index once (PhiMergePass): the
// visible variable's PHI stays, so that T1's tier-up exit, which writes each
// PHI's register, leaves the variable right for the interpreter that resumes
// in the body (it read the value on entry to the trace when the PHI was
// dropped: a fuzzed program summed wrong under tier=auto only).
TEST(Tiers, TheTierUpExitWritesACountedLoopsVariable) {
  const char* src =
      "let u = list(50, 0.0)\n"
      "for i in range(50) { u[i] = i * 0.5 }\n"
      "let s = 0.0\n"
      "for r in range(40) { for j in range(1, 49) { s = s + u[j - 1] * 0.25 + u[j] + j } }\n"
      "print(s)\n";
  for (int tier2 : {2, 5, 40}) {
    SCOPED_TRACE("tier2=" + std::to_string(tier2));
    auto rt = testing::expect_same_as_interpreter(src, params("auto", tier2));
    EXPECT_GT(rt->tracing()->stats().tier_up_exits, 0u);
  }
}

// A peeled loop's PHIs start from the peeled iteration's values, not from
// entry SLOADs: its back-edge tier-up exit writes the slots its header
// snapshot names (TraceIR::header_snapshot). One loop entered once, with
// ints and a float carried (peeled: its bounds check of l[i] goes, as
// loop_peel_test.cpp's PeeledBoundsCheck... shows), moves to T2 in the
// middle of its run and still computes what the interpreter does.
TEST(Tiers, APeeledLoopTiersUpAtItsBackEdge) {
  const char* src =
      "fn run(l) {\n  let s = 0\n  let f = 0.5\n  let i = 5\n"
      "  while i < len(l) { s = s + l[i] * i % 7\n    f = f * 0.999 + i\n    i = i + 1 }\n"
      "  return [s, f]\n}\nprint(run(list(3000, 2)))\n";
  JitParams p = params("auto", 20);
  p.set("peel=1");
  auto rt = testing::expect_same_as_interpreter(src, p);
  const auto& traces = rt->tracing()->traces();
  ASSERT_FALSE(traces.empty());
  EXPECT_NE(traces[0]->ir.header_snapshot(), jit::kNoSnap);
  EXPECT_LE(traces[0]->entries, 2u);  // entered once, and again at the tier-up exit
  EXPECT_EQ(traces[0]->tier, 2);
  EXPECT_GT(rt->tracing()->stats().tier_up_exits, 0u);
}

TEST(Tiers, LoopsEnteredThroughLinksCountTheirEntries) {
  // The outer loop runs 3 iterations per call, and each leaves its body for
  // the inner loop's trace and comes back through a link: it reaches its
  // own back-edge about once per call. Counting entries upgrades it anyway.
  const char* src =
      "fn step(xs) {\n  let t = 0\n  for i in range(3) {\n    let a = xs[i]\n"
      "    for j in range(i + 1, 3) { t = t + a * xs[j] }\n  }\n  return t\n}\n"
      "let xs = [1, 2, 3]\nlet s = 0\nfor r in range(400) { s = s + step(xs) }\nprint(s)\n";
  auto rt = testing::expect_same_as_interpreter(src, params("auto", 20));
  int loops = 0;
  for (const auto& t : rt->tracing()->traces()) {
    if (t->dead || t->is_side || t->ir.loop_ref() == jit::kNoRef) continue;
    ++loops;
    EXPECT_EQ(t->tier, 2) << "trace " << t->id << " at line " << t->line;
  }
  EXPECT_GE(loops, 2);
}

TEST(Tiers, PollsWhileLlvmWorksComeAtDoublingIntervals) {
  // While a trace waits for LLVM, each tier-up exit sets the next poll twice
  // as far away: a trace running N iterations polls at most about
  // log2(N / tier2) + 1 times, however long the compile takes.
  JitParams p = params("auto", 10);
  p.set("async=1");
  auto rt = testing::expect_same_as_interpreter(
      "let s = 0\nfor i in range(200000) { s = (s + i * 7) % 1000003 }\nprint(s)\n", p);
  const jit::TraceStats& st = rt->tracing()->stats();
  ASSERT_GE(st.compiled, 1u);
  // 200000 / 10 = 2^14.3: at most 16 polls per trace (the first included).
  EXPECT_LE(st.tier_up_exits, 16u * st.compiled);
  EXPECT_GT(st.tier_up_exits, 0u);
}

TEST(Tiers, LargerTracesRunLongerBeforeTheyTierUp) {
  // `tier2` per 100 IR instructions, at least once, capped below overflow.
  EXPECT_EQ(jit::tier_up_count(1000, 20), 1000u);
  EXPECT_EQ(jit::tier_up_count(1000, 199), 1000u);
  EXPECT_EQ(jit::tier_up_count(1000, 918), 9000u);
  EXPECT_EQ(jit::tier_up_count(1000000, 10000000), 1u << 30);
  // A loop trace of over 300 instructions with tier2=1000 is not upgraded
  // within 1500 iterations (it would be at the flat count), but is within
  // 6000.
  std::string body = "let s = 0\nfor i in range(N) {\n";
  for (int k = 0; k < 80; ++k) body += "  s = (s + i * " + std::to_string(k + 3) + ") % 1000003\n";
  body += "}\nprint(s)\n";
  auto run = [&](int n) {
    std::string src = body;
    src.replace(src.find('N'), 1, std::to_string(n));
    auto rt = testing::expect_same_as_interpreter(src, params("auto", 1000));
    return rt->tracing()->stats().upgrades;
  };
  EXPECT_EQ(run(1500), 0u);
  EXPECT_EQ(run(6000), 1u);
}

TEST(Tiers, TracesBelowTheThresholdStayInT1) {
  auto rt = testing::expect_same_as_interpreter(kLoops, params("auto", 1000000));
  const jit::TraceStats& s = rt->tracing()->stats();
  EXPECT_EQ(s.upgrades, 0u);
  EXPECT_EQ(s.tier_compiled[1], 0u);
  EXPECT_GT(s.tier_compiled[0], 0u);
}

TEST(Tiers, BackgroundUpgradeGivesTheSameResults) {
  // async=1: LLVM works on its thread while T1 code keeps running; when the
  // swap happens depends on timing, the results must not.
  JitParams p = params("auto", 2);
  p.set("async=1");
  auto rt = testing::expect_same_as_interpreter(kLoops, p);
  EXPECT_GT(rt->tracing()->stats().tier_up_exits, 0u);
  auto fib = testing::expect_same_as_interpreter(kFib, p);
  // T1 code is compiled on the interpreter's thread: it is there whatever
  // the timing, and it left for the upgrade at least once.
  EXPECT_GT(fib->tracing()->stats().tier_compiled[0], 0u);
  EXPECT_GT(fib->tracing()->stats().tier_up_exits, 0u);
}

// One line of a perf map as the JIT writes it:
// "START SIZE tessera:SCRIPT:LINE:traceN:TK", START and SIZE in hex.
// (Parsed by hand: GCC 12's -Wmaybe-uninitialized misfires inside
// std::regex under the sanitizers, which -Werror makes a build failure.)
struct PerfMapLine {
  uint64_t start = 0, size = 0;
  unsigned long trace = 0;
  int tier = 0;
};

std::optional<uint64_t> number(std::string_view s, int base) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<PerfMapLine> parse_perf_map_line(std::string_view l) {
  PerfMapLine p;
  const size_t sp1 = l.find(' '), sp2 = sp1 == std::string_view::npos ? sp1 : l.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return std::nullopt;
  const auto start = number(l.substr(0, sp1), 16), size = number(l.substr(sp1 + 1, sp2 - sp1 - 1), 16);
  std::string_view name = l.substr(sp2 + 1);
  if (!start || !size || !name.starts_with("tessera:")) return std::nullopt;
  name.remove_prefix(8);
  // SCRIPT:LINE:traceN:TK, SCRIPT without ':'.
  const size_t c1 = name.find(':');
  const size_t c2 = c1 == std::string_view::npos ? c1 : name.find(':', c1 + 1);
  const size_t c3 = c2 == std::string_view::npos ? c2 : name.find(':', c2 + 1);
  if (c1 == 0 || c3 == std::string_view::npos) return std::nullopt;
  const std::string_view trace = name.substr(c2 + 1, c3 - c2 - 1), tier = name.substr(c3 + 1);
  const auto line = number(name.substr(c1 + 1, c2 - c1 - 1), 10);
  const auto id = trace.starts_with("trace") ? number(trace.substr(5), 10) : std::nullopt;
  if (!line || !id || (tier != "T1" && tier != "T2")) return std::nullopt;
  p.start = *start;
  p.size = *size;
  p.trace = static_cast<unsigned long>(*id);
  p.tier = tier[1] - '0';
  return p;
}

TEST(Tiers, PerfMapLinesAreParsedStrictly) {
  const auto ok = parse_perf_map_line("7f00aa 1c0 tessera:t.tsb:12:trace3:T2");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->start, 0x7f00aau);
  EXPECT_EQ(ok->size, 0x1c0u);
  EXPECT_EQ(ok->trace, 3u);
  EXPECT_EQ(ok->tier, 2);
  for (const char* bad : {"7f00aa 1c0 tessera:t.tsb:12:trace3:T3", "7f00aa 1c0 tessera:t.tsb:x:trace3:T1",
                          "7f00aa 1c0 other:t.tsb:12:trace3:T1", "7f00ag 1c0 tessera:t.tsb:12:trace3:T1",
                          "7f00aa tessera:t.tsb:12:trace3:T1", "7f00aa 1c0 tessera::12:trace3:T1",
                          "7f00aa 1c0 tessera:t.tsb:12:tr3:T1"})
    EXPECT_FALSE(parse_perf_map_line(bad)) << bad;
}

TEST(Tiers, PerfMapNamesEachTiersCodeOfEachTrace) {
  // perfmap=1: Linux perf's /tmp/perf-PID.map gets "START SIZE NAME" (hex)
  // for every trace each tier compiled, so `perf report` names traces.
  const std::string path = "/tmp/perf-" + std::to_string(static_cast<long>(getpid())) + ".map";
  std::remove(path.c_str());
  JitParams p = params("auto", 5);
  p.set("perfmap=1");
  auto rt = testing::expect_same_as_interpreter(kFib, p);
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  size_t lines = 0, t1 = 0, t2 = 0;
  for (std::string l; std::getline(in, l); ++lines) {
    const std::optional<PerfMapLine> m = parse_perf_map_line(l);
    ASSERT_TRUE(m) << l;
    EXPECT_NE(m->start, 0u);
    EXPECT_GT(m->size, 0u);
    EXPECT_LT(m->trace, rt->tracing()->traces().size());
    (m->tier == 1 ? t1 : t2) += 1;
  }
  const jit::TraceStats& s = rt->tracing()->stats();
  EXPECT_EQ(t1, s.tier_compiled[0]);
  EXPECT_EQ(t2, s.tier_compiled[1]);
  EXPECT_GT(t2, 0u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera
