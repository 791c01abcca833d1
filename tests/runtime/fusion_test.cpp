// Fusion in running traces (optimizer/fusion.h, docs/tensor-jit.md): runs of
// elementwise tensor operations become one generated kernel, and programs
// print what the interpreter prints, including where fusion must not apply
// or must give way: shapes that change, an error inside a run, an element
// store between two operations, an intermediate that an exit needs.
#include <gtest/gtest.h>

#include <string>

#include "runtime/hotspot_observer.h"
#include "vm/graph/region.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

JitParams params(std::initializer_list<const char*> settings) {
  JitParams p;
  p.set("async=0");
  for (const char* s : settings) p.set(s);
  return p;
}

// Kernel calls in the compiled traces.
size_t kernel_calls(const HotspotObserver& rt) {
  size_t n = 0;
  for (const auto& t : rt.tracing()->traces())
    for (const jit::IRIns& in : t->ir.instructions())
      if (in.op == jit::IROp::CALL && t->ir.calls()[in.op2].kind() == jit::CallTarget::Kind::Kernel) ++n;
  return n;
}

const char* kChain =
    "let x = sin(arange(300) * 0.37) * 0.5\n"
    "let y = cos(arange(300) * 0.11) * 0.5\n"
    "for i in range(80) {\n"
    "  x = tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 + x * 0.05\n"
    "}\n"
    "print(item(sum(x)), x[7], shape(x))\n";

// Tensor inputs of the kernel calls in the compiled traces.
size_t kernel_tensor_inputs(const HotspotObserver& rt) {
  size_t n = 0;
  for (const auto& t : rt.tracing()->traces())
    for (const jit::IRIns& in : t->ir.instructions())
      if (in.op == jit::IROp::CALL && t->ir.calls()[in.op2].kind() == jit::CallTarget::Kind::Kernel)
        for (const RegionType& ty : t->ir.calls()[in.op2].kernel_region()->inputs) n += ty.tensor;
  return n;
}

TEST(FusionInJit, AnElementwiseChainIsOneKernelAndPrintsWhatTheInterpreterPrints) {
  for (const char* tier : {"tier=1", "tier=2", "tier=0"}) {
    SCOPED_TRACE(tier);
    auto rt = testing::expect_same_as_interpreter(kChain, params({tier}));
    EXPECT_EQ(kernel_calls(*rt), 1u);
    // x and y are each loaded twice in the chain: one input each.
    EXPECT_EQ(kernel_tensor_inputs(*rt), 2u);
  }
  auto off = testing::expect_same_as_interpreter(kChain, params({"fuse=0"}));
  EXPECT_EQ(kernel_calls(*off), 0u);
}

// A cast in a chain fuses with it: its dtype, passed from a global, is a
// constant of the trace (the global assumed constant, as a callee's is).
TEST(FusionInJit, CastsFuseWithTheirChain) {
  const char* chain =
      "let x = sin(arange(300) * 0.37) * 300.0\n"
      "let s = 0.0\n"
      "for i in range(80) {\n"
      "  let h = cast(x * 1.5 + 0.25, f16) * 0.5\n"
      "  let k = cast(cast(x, i32) % 7, f32) + cast(h, bf16)\n"
      "  s += item(sum(k))\n"
      "}\n"
      "print(s)\n";
  auto rt = testing::expect_same_as_interpreter(chain, params({}));
  ASSERT_GE(kernel_calls(*rt), 1u);
  size_t casts = 0;
  for (const auto& t : rt->tracing()->traces())
    for (const jit::CallTarget& c : t->ir.calls())
      if (c.kind() == jit::CallTarget::Kind::Kernel)
        for (const RegionOp& o : c.kernel_region()->ops) casts += o.op == OpId::Cast;
  // f16 in the first kernel, bf16 in the second (the i32 cast is cut off by
  // `%`, which the interpreter computes; the f32 one by the move of h into
  // an argument register before cast(h, bf16)).
  EXPECT_GE(casts, 2u);
}

// The length changes every iteration (beyond what tensor sinking takes):
// one K2 kernel serves them all (its dims are parameters); a length of 1
// does not fit its symbols and runs the interpreter's kernels.
TEST(FusionInJit, ShapesThatChangeEveryIteration) {
  const char* src =
      "let acc = 0.0\n"
      "for i in range(60) {\n"
      "  let n = 17 + (i * 7) % 23\n"
      "  if i % 13 == 5 { n = 1 }\n"
      "  let a = arange(n) * 0.5\n"
      "  let b = exp(a * -0.1) + a * a - 1.0\n"
      "  acc = acc + item(sum(b))\n"
      "}\n"
      "print(acc)\n";
  for (const char* hot : {"hotloop=1", "hotloop=56"}) {
    SCOPED_TRACE(hot);
    auto rt = testing::expect_same_as_interpreter(src, params({hot, "hotexit=1"}));
    EXPECT_GE(kernel_calls(*rt), 1u);
  }
}

// Broadcasting stops working in iteration 50 (the row vector grows): the
// kernel call raises, the trace leaves before the run, and the interpreter
// reports the error at its own line with its traceback.
TEST(FusionInJit, AnErrorInsideARunIsTheInterpretersError) {
  const char* src =
      "let m = ones([4, 8])\n"
      "let r = ones([8])\n"
      "fn step(i) {\n"
      "  if i == 50 { r = ones([9]) }\n"
      "  return exp(m * 0.5 + r) - 1.0\n"
      "}\n"
      "for i in range(100) {\n"
      "  let t = step(i)\n"
      "}\n";
  auto rt = testing::expect_same_as_interpreter(src, params({}));
  (void)rt;
}

// An element store between two operations on the same tensor ends the run
// there, and an intermediate that a later exit reads (u, printed after a
// branch that leaves the trace) stays allocated.
TEST(FusionInJit, StoresAndIntermediatesThatExitsNeed) {
  const char* src =
      "let t = arange(32) * 1.0\n"
      "let s = 0.0\n"
      "for i in range(90) {\n"
      "  let u = t * 2.0 + 1.0\n"
      "  u[3] = i * 1.0\n"
      "  let w = sqrt(u) * 0.5 - u\n"
      "  if i % 37 == 36 { print(i, item(sum(u))) }\n"
      "  s = s + item(sum(w))\n"
      "}\n"
      "print(s)\n";
  for (const char* hot : {"hotloop=1", "hotloop=56"}) {
    SCOPED_TRACE(hot);
    testing::expect_same_as_interpreter(src, params({hot, "hotexit=1"}));
  }
}

// A tensor that escapes into a list is the run's output; f16 inputs are
// rounded after each operation as the interpreter's tensors are.
TEST(FusionInJit, EscapingTensorsAndHalfPrecision) {
  const char* src =
      "let x = cast(arange(40) * 0.3, f16)\n"
      "let keep = []\n"
      "for i in range(70) {\n"
      "  let y = (x * 1.5 - 0.25) * x\n"
      "  if i % 10 == 0 { push(keep, y) }\n"
      "  x = relu(y) + 0.125\n"
      "}\n"
      "print(len(keep), item(sum(keep[3])), x[5], dtype(x))\n";
  auto rt = testing::expect_same_as_interpreter(src, params({}));
  EXPECT_GE(kernel_calls(*rt), 1u);
}

}  // namespace
}  // namespace tessera
