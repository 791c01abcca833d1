// Allocation sinking inside the JIT: list literals that a loop only reads
// are not allocated on the trace, and every exit where the interpreter may
// read the list builds it (materialization) — in every tier, with exits in
// the middle of the body, and with lists that escape (not sunk).
#include <gtest/gtest.h>

#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "tests/runtime/sink_test_support.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

JitParams params(const std::string& tier) { return testing::sink_test_params(tier); }

// Whether any trace still allocates a list with the NewList helper, and
// whether any sank one.
struct Allocations {
  int calls = 0, sunk = 0;
};
Allocations allocations(const HotspotObserver& rt) {
  Allocations a;
  for (const auto& t : rt.tracing()->traces())
    for (const jit::IRIns& in : t->ir.instructions()) {
      if (in.op == jit::IROp::VNEWLIST) ++a.sunk;
      if (in.op == jit::IROp::CALL && t->ir.calls()[in.op2].kind() == jit::CallTarget::Kind::NewList) ++a.calls;
    }
  return a;
}

const char* kReadOnly =
    "fn run(n) {\n  let s = 0.0\n  for i in range(n) {\n    let p = [i * 1.0, i * 2.0]\n"
    "    s = s + p[0] * p[1]\n  }\n  return s\n}\nprint(run(200))\n";

// An exit in the middle of the body, where the interpreter reads the list.
const char* kExitReadsTheList =
    "fn run(n) {\n  let s = 0\n  for i in range(n) {\n    let p = [i, i + 1, \"x\"]\n"
    "    if i % 17 == 5 { s = s + len(p) * 1000\n print(p) }\n    s = s + p[0] + p[1]\n  }\n  return s\n}\n"
    "print(run(120))\n";

// The list escapes: appended to, stored in a global, passed to a built-in
// (len is a built-in call, not LLEN: the list is its argument).
const char* kEscapes =
    "let G = nil\nfn run(n) {\n  let s = 0\n  for i in range(n) {\n    let p = [i, i]\n"
    "    push(p, 3)\n    G = [i]\n    s = s + len(p) + len([i, 1])\n  }\n  return s\n}\nprint(run(100), G)\n";

// A list of lists whose inner list is loaded and read again (o[2][2][1]):
// the load of o[2] would stand for a sunk list, which code may not read
// (found by the differential fuzzer, seed 961112: every recording was
// dropped by the sinking pass, and the loop recorded again forever).
const char* kLoadFromALoadedList =
    "fn pick(n) {\n  let o = [[n, -4], n, [n * 1, n * 1.0, [n, n % 7]]]\n  return o[2][2][1] + o[0][1]\n}\n"
    "let s = 0\nfor i in range(300) { s = s + pick(i) }\nprint(s)\n";

TEST(AllocSinkInJit, AListLoadedFromAListIsReadByCodeSoNeitherIsSunk) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kLoadFromALoadedList, params(tier));
    const jit::TraceStats& st = rt->tracing()->stats();
    EXPECT_EQ(st.aborts[static_cast<int>(jit::AbortReason::OptimizerFailed)], 0u);
    EXPECT_GE(st.compiled, 1u);
  }
}

TEST(AllocSinkInJit, ReadOnlyListIsNotAllocatedOnTheTrace) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kReadOnly, params(tier));
    const Allocations a = allocations(*rt);
    EXPECT_GT(a.sunk, 0);
    EXPECT_EQ(a.calls, 0);
  }
}

TEST(AllocSinkInJit, ExitsBuildTheListWhereTheInterpreterReadsIt) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kExitReadsTheList, params(tier));
    EXPECT_GT(allocations(*rt).sunk, 0);
    // An exit whose snapshot names a sunk list was taken: it built the list.
    EXPECT_GT(testing::materializing_exits(*rt, jit::IROp::VNEWLIST), 0u);
  }
}

TEST(AllocSinkInJit, EscapingListsAreStillAllocated) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kEscapes, params(tier));
    EXPECT_GT(allocations(*rt).calls, 0);
  }
}

TEST(AllocSinkInJit, HotExitsEverywhereStayCorrect) {
  JitParams p = params("auto");
  p.set("hotloop=1");
  p.set("hotexit=1");
  p.set("hotcall=1");
  for (const char* src : {kReadOnly, kExitReadsTheList, kEscapes}) {
    auto rt = testing::expect_same_as_interpreter(src, p);
    // Traced from the first back-edge: the loops ran as compiled code.
    EXPECT_GE(rt->tracing()->stats().compiled, 1u) << src;
    EXPECT_GT(testing::total_entries(*rt), 0u) << src;
  }
}

}  // namespace
}  // namespace tessera
