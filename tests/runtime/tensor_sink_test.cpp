// Tensor sinking inside the JIT: small tensor temporaries of a loop are not
// allocated on the trace (no helper calls for them), every exit where the
// interpreter may read one builds it, as one object for all its names, and
// tensors that escape or whose registers earlier exits need stay allocated.
// Every script must print what the interpreter prints, in every tier.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "tests/runtime/sink_test_support.h"
#include "vm/interp/vm.h"

namespace tessera {
namespace {

JitParams params(const std::string& tier) { return testing::sink_test_params(tier); }

// What the compiled traces hold: sunk tensors, and helper calls that still
// compute a tensor operation (tensor built-ins and operators on tensors).
struct TensorWork {
  int sunk = 0, calls = 0;
};
TensorWork tensor_work(const HotspotObserver& rt) {
  static const char* const kTensorBuiltins[] = {"tensor", "zeros", "ones", "full", "sum", "mean",
                                                "item", "sqrt", "len", "numel", "ndim"};
  TensorWork w;
  for (const auto& t : rt.tracing()->traces())
    for (const jit::IRIns& in : t->ir.instructions()) {
      if (in.op == jit::IROp::VNEWTENSOR) ++w.sunk;
      if (in.op != jit::IROp::CALL) continue;
      const jit::CallTarget& c = t->ir.calls()[in.op2];
      if (c.kind() == jit::CallTarget::Kind::Arith) ++w.calls;
      if (c.kind() == jit::CallTarget::Kind::Builtin)
        for (const char* name : kTensorBuiltins) w.calls += c.name == name;
    }
  return w;
}

const char* kFloatVectors =
    "fn run(n) {\n"
    "  let s = 0.0\n"
    "  for i in range(n) {\n"
    "    let x = i * 0.5\n"
    "    let v = tensor([x, x * 0.25, 1.0])\n"
    "    let w = v * v + 1.0\n"
    "    s = s + item(sum(w)) + w[1] - item(mean(sqrt(w))) / 3.0 + item(sum(exp(v * 0.01))) + item(sum(-v))\n"
    "  }\n"
    "  return s\n"
    "}\n"
    "print(run(300))\n";

const char* kIntsFillsAndBroadcasts =
    "fn run(n) {\n"
    "  let s = 0\n"
    "  let f = 0.0\n"
    "  for i in range(n) {\n"
    "    let a = tensor([i, i + 1, 3])\n"
    "    let b = a * 7 - 2\n"
    "    s = s + item(sum(b)) + len(b) + numel(b) + ndim(b) + b[2] - item(sum(-b))\n"
    "    let z = zeros([2, 3]) + ones([3]) * i\n"
    "    let g = full([3, 1], 0.5) - tensor([1.0, 2.0, 3.0])\n"
    "    f = f + item(sum(z)) + g[2, 1] + item(mean(a)) + item(sum(a / 2)) + item(sum(a * 0.1))\n"
    "  }\n"
    "  return [s, f]\n"
    "}\n"
    "print(run(200))\n";

// The tensors live in an inlined call: its exits' snapshots carry the
// inlined frame, whose registers' liveness comes from the callee's code.
const char* kInlinedCall =
    "fn norm2(x, y) {\n"
    "  let v = tensor([x, y]) * 0.5\n"
    "  return item(sum(v * v))\n"
    "}\n"
    "fn run(n) {\n"
    "  let s = 0.0\n"
    "  for i in range(n) { s = s + norm2(i * 1.0, 2.0) }\n"
    "  return s\n"
    "}\n"
    "print(run(300))\n";

// Vectors the trace did not make (elements of a list): their layouts, seen
// while recording, are guarded, and the temporaries made from them sink.
// Then every vector becomes 4 long: the guards fail, and the interpreter
// (and the side traces recorded from there) compute the rest.
const char* kListOfVectors =
    "fn energy(pos, n) {\n"
    "  let e = 0.0\n"
    "  for k in range(n) {\n"
    "    let d = pos[(k + 1) % 4] - pos[k % 4]\n"
    "    e = e + 1.0 / (item(sum(d * d)) + 0.5) + item(mean(-d))\n"
    "  }\n"
    "  return e\n"
    "}\n"
    "let pos = [tensor([0.0, 1.0, 2.0]), tensor([1.5, -1.0, 0.5]), tensor([3.0, 0.25, -2.0]), tensor([0.1, 0.2, 0.3])]\n"
    "print(energy(pos, 400))\n"
    "for q in range(4) { pos[q] = tensor([q * 1.0, 2.0, 3.0, -1.0]) }\n"
    "print(energy(pos, 400))\n";

// Every 23rd iteration leaves the trace where the interpreter mutates the
// tensor through one name and prints both: the exit must build one object.
const char* kExitBuildsOneObject =
    "fn run(n) {\n"
    "  let s = 0.0\n"
    "  for i in range(n) {\n"
    "    let v = tensor([i * 1.0, 2.0])\n"
    "    let u = v * 3.0\n"
    "    let alias = u\n"
    "    if i % 23 == 7 {\n"
    "      u[0] = -1.0\n"
    "      print(alias, u, v)\n"
    "    }\n"
    "    s = s + item(sum(alias))\n"
    "  }\n"
    "  return s\n"
    "}\n"
    "print(run(200))\n";

// Escapes: a loop-carried tensor (PHI), one stored in a global, one passed
// to a helper; and a tensor register the loop reads before writing it (on a
// path the recording did not take), which earlier exits and the loop
// header need as the previous iteration left it.
const char* kEscapes =
    "let G = nil\n"
    "fn run(n) {\n"
    "  let acc = zeros([2])\n"
    "  let keep = []\n"
    "  let w = zeros([2])\n"
    "  let s = 0.0\n"
    "  for i in range(n) {\n"
    "    if i == n - 1 { s = s + item(sum(w)) }\n"
    "    let v = tensor([i * 1.0, 1.0])\n"
    "    acc = acc + v\n"
    "    G = v * 2.0\n"
    "    push(keep, v + 1.0)\n"
    "    w = tensor([i * 1.0, 2.0]) * 2.0\n"
    "    s = s + item(sum(v)) + w[0]\n"
    "  }\n"
    "  return [acc, len(keep), s]\n"
    "}\n"
    "print(run(100), G)\n";

TEST(TensorSinkInJit, SmallTensorTemporariesBecomeScalarCode) {
  for (const char* src : {kFloatVectors, kIntsFillsAndBroadcasts, kInlinedCall}) {
    for (const char* tier : {"1", "2", "auto"}) {
      SCOPED_TRACE(tier);
      auto rt = testing::expect_same_as_interpreter(src, params(tier));
      const TensorWork w = tensor_work(*rt);
      EXPECT_GT(w.sunk, 0);
      EXPECT_EQ(w.calls, 0);
    }
  }
}

TEST(TensorSinkInJit, LayoutsSeenWhileRecordingAreGuarded) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kListOfVectors, params(tier));
    EXPECT_GT(tensor_work(*rt).sunk, 0);
    // The traces of the loop over the vectors keep no call (the loop that
    // builds the new vectors stores them into the list: those stay calls),
    // and their layout guards failed once the vectors grew.
    uint64_t exits = 0;
    for (const auto& t : rt->tracing()->traces()) {
      if (!testing::trace_has_op(*t, jit::IROp::VNEWTENSOR)) continue;
      EXPECT_FALSE(testing::trace_has_op(*t, jit::IROp::CALL)) << "trace " << t->id;
      for (uint64_t e : t->exits) exits += e;
    }
    EXPECT_GT(exits, 0u);
  }
}

TEST(TensorSinkInJit, ExitsBuildOneTensorForAllItsNames) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kExitBuildsOneObject, params(tier));
    EXPECT_GT(tensor_work(*rt).sunk, 0);
    EXPECT_GT(testing::materializing_exits(*rt, jit::IROp::VNEWTENSOR), 0u);
  }
}

TEST(TensorSinkInJit, EscapingTensorsAreStillAllocated) {
  for (const char* tier : {"1", "2", "auto"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kEscapes, params(tier));
    EXPECT_GT(tensor_work(*rt).calls, 0);
  }
}

TEST(TensorSinkInJit, StatsCountWhatSinkingTookOffTheTraces) {
  auto rt = testing::expect_same_as_interpreter(kFloatVectors, params("1"));
  std::ostringstream os;
  rt->print_stats(os, 0.1);
  const std::string want =
      "  allocation sinking: not allocated by the compiled traces: tensors " + std::to_string(tensor_work(*rt).sunk) + ",";
  EXPECT_NE(os.str().find(want), std::string::npos) << os.str();
  EXPECT_GT(tensor_work(*rt).sunk, 0);
}

TEST(TensorSinkInJit, SinkZeroAllocatesEverything) {
  JitParams p = params("auto");
  p.set("sink=0");
  auto rt = testing::expect_same_as_interpreter(kFloatVectors, p);
  EXPECT_EQ(tensor_work(*rt).sunk, 0);
  EXPECT_GT(tensor_work(*rt).calls, 0);
}

TEST(TensorSinkInJit, HotExitsEverywhereStayCorrect) {
  JitParams p = params("auto");
  p.set("hotloop=1");
  p.set("hotexit=1");
  p.set("hotcall=1");
  for (const char* src :
       {kFloatVectors, kIntsFillsAndBroadcasts, kInlinedCall, kListOfVectors, kExitBuildsOneObject, kEscapes}) {
    for (const char* peel : {"peel=0", "peel=1", "peel=2"}) {
      SCOPED_TRACE(peel);
      p.set(peel);
      auto rt = testing::expect_same_as_interpreter(src, p);
      // Traced from the first back-edge: the loops ran as compiled code.
      EXPECT_GE(rt->tracing()->stats().compiled, 1u);
      EXPECT_GT(testing::total_entries(*rt), 0u);
    }
  }
}

}  // namespace
}  // namespace tessera
