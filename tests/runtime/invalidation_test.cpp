// Trace invalidation: a trace that calls a function through a global assumes
// the global constant (no load, no guard); a store into that global, by the
// interpreter or by compiled code, invalidates the trace (its back-edge or
// entry no longer enters it, no exit links to it), and the program goes on
// with the new value.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

using testing::Outcome;

std::unique_ptr<HotspotObserver> expect_same(const std::string& source) {
  JitParams p;
  p.set("async=0");
  p.set("hotloop=3");
  p.set("hotexit=2");
  return testing::expect_same_as_interpreter(source, p);
}

using testing::trace_has_op;

const char* kPrelude =
    "fn one() { return 1 }\nfn two() { return 2 }\nlet fun = one\n"
    "fn run() {\n  let s = 0\n  for i in range(100) { s += fun() }\n  return s\n}\n";

TEST(Invalidation, CalleeThroughAGlobalIsAssumedConstant) {
  auto rt = expect_same(std::string(kPrelude) + "print(run())\n");
  const auto& t = *rt->tracing()->traces().at(0);
  EXPECT_EQ(t.ir.assumed_globals().size(), 1u);
  EXPECT_FALSE(trace_has_op(t, jit::IROp::GLOAD));  // no load, no identity guard
}

TEST(Invalidation, StoreByTheInterpreterInvalidatesTheTrace) {
  auto rt = expect_same(std::string(kPrelude) + "print(run())\nfun = two\nprint(run())\nfun = one\nprint(run())\n");
  EXPECT_GE(rt->tracing()->stats().invalidated, 1u);
  EXPECT_TRUE(rt->tracing()->traces().at(0)->dead);
}

TEST(Invalidation, StoreByCompiledCodeInvalidatesTheTrace) {
  // flip's trace stores into `fun` on every iteration: the first compiled
  // store reports it, and run's trace (which assumed `one`) is invalidated.
  auto rt = expect_same(std::string(kPrelude) +
                        "fn flip(n) {\n  for i in range(n) {\n    if i % 2 == 0 { fun = two } else { fun = one }\n  }\n}\n"
                        "print(run())\nflip(41)\nprint(run())\n");
  EXPECT_GE(rt->tracing()->stats().invalidated, 1u);
  bool compiled_store = false;
  for (const auto& t : rt->tracing()->traces()) compiled_store = compiled_store || trace_has_op(*t, jit::IROp::GSTORE);
  EXPECT_TRUE(compiled_store);
}

// A dtype passed from a global is assumed constant too (a constant of the
// trace, so that a cast fuses): storing another dtype, or something else,
// into the global, or into a built-in dtype's name, invalidates the trace.
TEST(Invalidation, DtypesFromGlobalsAreAssumedConstant) {
  auto rt = expect_same(
      "let dt = f16\nlet x = ones([4, 4])\n"
      "fn run() {\n  let s = 0.0\n  for i in range(100) { s += item(sum(cast(x * 1.5, dt) + 1.0)) }\n  return s\n}\n"
      "fn plain() {\n  let s = 0.0\n  for i in range(100) { s += item(sum(cast(x * 1.5, f16))) }\n  return s\n}\n"
      "print(run(), plain())\ndt = i32\nf16 = bf16\nprint(run(), plain())\n");
  const auto& t = *rt->tracing()->traces().at(0);
  EXPECT_FALSE(std::any_of(t.ir.instructions().begin(), t.ir.instructions().end(), [](const jit::IRIns& in) {
    return in.op == jit::IROp::GLOAD && in.type == jit::IRType::DType;  // x is loaded, dt is not
  }));
  EXPECT_TRUE(std::any_of(t.ir.assumed_globals().begin(), t.ir.assumed_globals().end(),
                          [](const auto& a) { return a.value == jit::TraceIR::assumption_of(Value::dtype(DType::F16)); }));
  EXPECT_GE(rt->tracing()->stats().invalidated, 2u);
  EXPECT_TRUE(t.dead);
}

TEST(Invalidation, ATraceThatStoresTheGlobalDoesNotAssumeIt) {
  // A loop that both reassigns and calls through the global cannot assume
  // it: it calls what it stored (the functions themselves, one and two,
  // are what it assumes), and its own stores invalidate nothing. The store
  // is on the recorded path (i < 50) and on the side trace's (i >= 50).
  // (The script used to store only at i == 50, off the recorded path: no
  // trace stored the global and the check below never ran.)
  auto rt = expect_same(
      std::string(kPrelude) +
      "fn mix(n) {\n  let s = 0\n  for i in range(n) {\n    if i < 50 { fun = two } else { fun = one }\n"
      "    s += fun()\n  }\n  return s\n}\n"
      "print(mix(100))\n");
  int storing = 0;
  for (const auto& t : rt->tracing()->traces()) {
    if (t->function != "mix") continue;
    for (const jit::IRIns& in : t->ir.instructions()) {
      if (in.op != jit::IROp::GSTORE) continue;
      ++storing;
      for (const auto& a : t->ir.assumed_globals()) EXPECT_NE(a.index, in.op1) << jit::print_ir(t->ir);
    }
  }
  EXPECT_EQ(storing, 2);  // the root trace and the side trace
  EXPECT_EQ(rt->tracing()->stats().invalidated, 0u);
}

}  // namespace
}  // namespace tessera
