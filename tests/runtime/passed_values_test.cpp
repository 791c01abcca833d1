// Values passed in registers from a linked exit to its side trace
// (codegen/host/trace_abi.h, ExitPlan::passed): the side trace recorded from
// an exit loads the ints and floats that exit writes as SLOADs of mode
// 3 + i, and the exit, once the side trace is linked, jumps into its second
// entry point with them in registers instead of writing them to memory; the
// side trace's exits write them. Anything else that goes into the side
// trace (another exit sharing it, C++) uses its first entry, which loads
// them from memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/hotspot_observer.h"
#include "tracer/ir_operands.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

// The branch's exit writes s, i and the IMOD temporary (ints) and f (a
// float): its side trace changes s and f and links back to the loop.
const char* kBranchy =
    "fn run(n) {\n"
    "  let s = 0\n"
    "  let f = 0.5\n"
    "  let i = 0\n"
    "  while i < n {\n"
    "    if i % 3 == 0 { s = s + i * 2; f = f + 1.5 } else { s = s + 1; f = f * 1.0001 }\n"
    "    i = i + 1\n"
    "  }\n"
    "  print(s)\n"
    "  print(f)\n"
    "}\n"
    "run(3000)\n"
    "run(7)\n";

// The side trace that hangs off the root loop trace's exit, or null.
const jit::Trace* side_of_root(const HotspotObserver& rt) {
  for (const auto& t : rt.tracing()->traces())
    if (t->is_side && !t->peer && t->parent == t->root) return t.get();
  return nullptr;
}

std::vector<jit::IRRef> passed_loads(const jit::Trace& t) {
  std::vector<jit::IRRef> out;
  for (jit::IRRef r = 0; r < t.ir.size(); ++r)
    if (jit::sload_passed(t.ir[r])) out.push_back(r);
  return out;
}

TEST(PassedValues, ASideTraceTakesItsParentExitsIntsAndFloatsInRegisters) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = testing::expect_same_in_tier(kBranchy, tier);
    const jit::Trace* side = side_of_root(*rt);
    ASSERT_NE(side, nullptr);
    const jit::Trace& parent = *rt->tracing()->traces()[side->parent];
    // Every value the parent's exit passes, and nothing else, is a passed load.
    const jit::ExitPlan& plan = (*parent.exit_plans)[side->parent_snap];
    ASSERT_FALSE(plan.passed.empty());
    const std::vector<jit::IRRef> loads = passed_loads(*side);
    ASSERT_EQ(loads.size(), plan.passed.size());
    bool a_float = false;
    size_t named = 0;
    const auto& entry = side->ir.snapshots()[0].entries;
    for (size_t k = 0; k < loads.size(); ++k) {
      const jit::IRIns& in = side->ir[loads[k]];
      const jit::ExitWrite& w = plan.writes[plan.passed[k].write];
      EXPECT_EQ(in.op1, w.slot);
      EXPECT_EQ(jit::sload_passed_reg(in), plan.passed[k].reg);
      EXPECT_EQ(in.type, plan.values[w.value].type);
      a_float |= in.type == jit::IRType::Float;
      named += std::any_of(entry.begin(), entry.end(),
                           [&](const jit::SnapshotEntry& e) { return e.slot == w.slot && e.ref == loads[k]; });
    }
    // Snapshot 0 names them all (an entry guard that fails writes what the
    // parent's exit did not): s, f and i, and the IMOD result, which the
    // comparison the side trace starts at reads.
    EXPECT_EQ(named, loads.size());
    EXPECT_TRUE(a_float) << "f is passed in an XMM register";
    // The parent's exit goes into the side trace's second entry point.
    ASSERT_NE(side->native_passed, nullptr);
    EXPECT_NE(side->native_passed, side->native);
    EXPECT_EQ(parent.passed_links[side->parent_snap], side->native_passed);
    EXPECT_EQ(parent.links[side->parent_snap], side->native);
    // The loop runs compiled: only the loop's ends come back.
    EXPECT_LT(testing::total_exits(*rt), 20u);
  }
}

TEST(PassedValues, APassedValueTheSideTraceNeverReadsIsWrittenBackAtItsStart) {
  // t changes in every iteration of the root trace, so its branch exit
  // passes it; the side trace (s = s + i) never reads it: it stores t into
  // its register at once instead of carrying it to every exit.
  const char* src =
      "fn run(n) {\n"
      "  let s = 0\n"
      "  let t = 0\n"
      "  let i = 0\n"
      "  while i < n {\n"
      "    t = t + 3\n"
      "    if i % 3 == 0 { s = s + i }\n"
      "    i = i + 1\n"
      "  }\n"
      "  print(s)\n"
      "  print(t)\n"
      "}\n"
      "run(3000)\n";
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = testing::expect_same_in_tier(src, tier);
    const jit::Trace* side = side_of_root(*rt);
    ASSERT_NE(side, nullptr);
    size_t written_back = 0;
    for (jit::IRRef r : passed_loads(*side)) {
      const uint32_t slot = side->ir[r].op1;
      bool read = false, stored = false;
      for (const jit::IRIns& in : side->ir.instructions()) {
        if (in.op == jit::IROp::SSTORE && in.op1 == slot && in.op2 == r) stored = true;
        else jit::for_each_operand_ref(in, [&](jit::IRRef a) { read |= a == r; });
      }
      if (read) continue;
      EXPECT_TRUE(stored) << "slot " << slot;
      for (const jit::Snapshot& snap : side->ir.snapshots())
        for (const jit::SnapshotEntry& e : snap.entries) EXPECT_FALSE(e.slot == slot && e.ref == r) << "slot " << slot;
      ++written_back;
    }
    EXPECT_EQ(written_back, 1u) << "t";
  }
}

TEST(PassedValues, WithPassregsOffEveryLinkedExitWritesItsRegisters) {
  JitParams p;
  p.set("async=0");
  p.set("tier=1");
  p.set("passregs=0");
  auto rt = testing::expect_same_as_interpreter(kBranchy, p);
  const jit::Trace* side = side_of_root(*rt);
  ASSERT_NE(side, nullptr);
  EXPECT_TRUE(passed_loads(*side).empty());
  EXPECT_EQ(side->native_passed, nullptr);
  EXPECT_EQ(rt->tracing()->traces()[side->parent]->passed_links, nullptr);
}

TEST(PassedValues, AnUpgradedSideTraceIsLinkedAtItsNewSecondEntry) {
  // tier=auto, upgrading after about 60 iterations: the side trace (linked
  // after about 30) and then its parent go to T2 while the loop runs, and
  // the parent's link follows the side trace's T2 code.
  JitParams p;
  p.set("async=0");
  p.set("tier2=300");
  auto rt = testing::expect_same_as_interpreter(kBranchy, p);
  const jit::Trace* side = side_of_root(*rt);
  ASSERT_NE(side, nullptr);
  EXPECT_EQ(side->tier, 2);
  const jit::Trace& parent = *rt->tracing()->traces()[side->parent];
  ASSERT_NE(side->native_passed, nullptr);
  EXPECT_EQ(parent.passed_links[side->parent_snap], side->native_passed);
  // The parent was upgraded after its side trace was linked: its T2 exit
  // there reads passed_links (ExitLinking::passed_exits).
  EXPECT_EQ(parent.tier, 2);
  ASSERT_EQ(parent.upgrade_passed_exits.size(), parent.ir.snapshots().size());
  EXPECT_EQ(parent.upgrade_passed_exits[side->parent_snap], 1);
}

}  // namespace
}  // namespace tessera
