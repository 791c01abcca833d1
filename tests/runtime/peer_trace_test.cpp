// Peer loop traces (TraceJit::wants_peer, TraceRecorder::set_peer): a loop
// whose entry types change from one run of it to the next (a factor that is
// an int in one pass of an outer loop and a float in the next) gets a second
// loop trace for the new types, hung off the first one's entry exit, instead
// of a side trace that runs one iteration and links back to the entry that
// just failed. Side traces of the peer link back to it.
#include <gtest/gtest.h>

#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

// f is an int in even passes of the outer loop and a float in odd ones; the
// branch on xs[i] makes side traces inside either loop trace.
const char* kPhases =
    "fn scaled_sum(xs, f) {\n"
    "  let s = 0.0\n"
    "  for i in range(len(xs)) {\n"
    "    if xs[i] > 60.0 { s = s + f * xs[i] } else { s = s - f }\n"
    "  }\n"
    "  return s\n"
    "}\n"
    "let xs = []\n"
    "for i in range(300) { push(xs, i * 0.5) }\n"
    "let total = 0.0\n"
    "for k in range(40) {\n"
    "  if k % 2 == 0 { total += scaled_sum(xs, 3) } else { total += scaled_sum(xs, 0.25) }\n"
    "}\n"
    "print(total)\n";

const jit::Trace* find_peer(const HotspotObserver& rt) {
  for (const auto& t : rt.tracing()->traces())
    if (t->peer) return t.get();
  return nullptr;
}

TEST(PeerTraces, ALoopWhoseEntryTypesChangeGetsAPeerLoopTraceOnItsEntryExit) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = testing::expect_same_in_tier(kPhases, tier);
    const jit::Trace* peer = find_peer(*rt);
    ASSERT_NE(peer, nullptr);
    const jit::Trace& first = *rt->tracing()->traces()[peer->parent];
    // The peer is a loop of its own for the loop the first trace runs, and
    // the first trace's entry exit goes straight into it.
    EXPECT_EQ(peer->parent_snap, 0u);
    EXPECT_EQ(first.kind, jit::Trace::Kind::Loop);
    EXPECT_EQ(peer->loop_pc, first.loop_pc);
    EXPECT_TRUE(testing::trace_has_op(*peer, jit::IROp::LOOP));
    EXPECT_EQ(first.links[0], peer->native);
    // Its entry guard loads f as a float where the first trace's loads an int.
    bool float_factor = false;
    for (const jit::IRIns& in : peer->ir.instructions())
      if (in.op == jit::IROp::SLOAD && in.op2 == 0 && in.type == jit::IRType::Float) float_factor = true;
    EXPECT_TRUE(float_factor);
    // A side trace of the peer's branch ends at the loop's back-edge and goes
    // back into the peer, not into the first trace (whose entry would fail).
    bool side_links_to_peer = false;
    for (const auto& t : rt->tracing()->traces())
      if (t->is_side && !t->peer && t->parent == peer->id && t->link == static_cast<int32_t>(peer->id))
        side_links_to_peer = true;
    EXPECT_TRUE(side_links_to_peer);
    // 20 float passes of 300 iterations each run compiled: few exits come
    // back to the interpreter (each pass leaves once at its end).
    EXPECT_LT(testing::total_exits(*rt), 200u);
  }
}

TEST(PeerTraces, AnElementWhoseTypeChangedAtTheBodysStartGetsAPeer) {
  // The row's first trace is recorded while its elements are ints; once they
  // are floats, the guard of row[j], the body's first load, fails on every
  // element with the loop's entry types unchanged: that exit gets a peer for
  // float elements, and the side traces of the peer (b[j] alternates between
  // an int and a float) go back into the peer, not into the first trace.
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = testing::expect_same_in_tier(
        "fn add_into(row, b, f) {\n"
        "  for j in range(len(row)) { row[j] = row[j] + f * b[j] }\n"
        "}\n"
        "let row = list(300, 0)\n"
        "let b = []\n"
        "for i in range(300) { if i % 2 == 0 { push(b, i % 7) } else { push(b, i * 0.25) } }\n"
        "for k in range(30) { add_into(row, b, k + 1) }\n"
        "print(row[0], row[1], row[299])\n",
        tier);
    const jit::Trace* peer = find_peer(*rt);
    ASSERT_NE(peer, nullptr);
    EXPECT_NE(peer->parent_snap, 0u) << "the exit of an element's type guard, not the entry exit";
    const jit::Trace& first = *rt->tracing()->traces()[peer->parent];
    EXPECT_EQ(first.links[peer->parent_snap], peer->native);
    bool side_links_to_peer = false;
    for (const auto& t : rt->tracing()->traces())
      if (t->is_side && !t->peer && t->parent == peer->id && t->link == static_cast<int32_t>(peer->id))
        side_links_to_peer = true;
    EXPECT_TRUE(side_links_to_peer);
    EXPECT_LT(testing::total_exits(*rt), 300u);
  }
}

TEST(PeerTraces, AnEntryExitWhoseTypesHoldGetsASideTraceNotAPeer) {
  // The loop's entry exit is taken when the hoisted bounds check fails
  // (xs is shorter than the range in the late calls), not a type: no peer.
  JitParams p;
  p.set("async=0");
  auto rt = testing::expect_same_as_interpreter(
      "fn sum_first(xs, n) {\n"
      "  let s = 0\n"
      "  for i in range(n) {\n"
      "    if i < len(xs) { s += xs[i] }\n"
      "  }\n"
      "  return s\n"
      "}\n"
      "let xs = []\n"
      "for i in range(100) { push(xs, i) }\n"
      "let t = 0\n"
      "for k in range(60) { t += sum_first(xs, 50 + k) }\n"
      "print(t)\n",
      p);
  EXPECT_EQ(find_peer(*rt), nullptr);
  // The entry exit did get hot: it has an ordinary side trace.
  bool side_on_entry_exit = false;
  for (const auto& t : rt->tracing()->traces())
    if (t->is_side && t->parent_snap == 0 && rt->tracing()->traces()[t->parent]->kind == jit::Trace::Kind::Loop)
      side_on_entry_exit = true;
  EXPECT_TRUE(side_on_entry_exit);
}

TEST(PeerTraces, AWhileLoopWhoseEntryTypesChangeGetsAPeerToo) {
  // Regression: the peer's recorder found the loop's bounds from its LOOP
  // instruction, which the first trace had patched to enter it: a while
  // loop's peer took the for-loop reading, its body came out empty, and
  // every recording left the loop at its first instruction (the float half
  // of a sort ran interpreted). The scan runs a few iterations per entry.
  const char* source =
      "fn scan(xs, pivot, n) {\n"
      "  let total = 0\n"
      "  for s in range(n) {\n"
      "    let j = len(xs) - 1\n"
      "    while xs[j] > pivot { j -= 1 }\n"
      "    total += j\n"
      "  }\n"
      "  return total\n"
      "}\n"
      "let ints = []\n"
      "for i in range(100) { push(ints, i) }\n"
      "let floats = []\n"
      "for i in range(100) { push(floats, i * 1.0) }\n"
      "print(scan(ints, 95, 2000))\n"
      "print(scan(floats, 95.5, 2000))\n";
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = testing::expect_same_in_tier(source, tier);
    const jit::Trace* peer = find_peer(*rt);
    ASSERT_NE(peer, nullptr);
    const jit::Trace& first = *rt->tracing()->traces()[peer->parent];
    EXPECT_EQ(peer->loop_pc, first.loop_pc);
    EXPECT_TRUE(testing::trace_has_op(*peer, jit::IROp::LOOP));
    // The float scan runs compiled: its 2000 entries into the while loop
    // leave at its end, not at the first trace's entry guard (8000 times).
    EXPECT_LT(testing::total_exits(*rt), 4000u);
  }
}

}  // namespace
}  // namespace tessera
