// LoopPeelPass, IR in / IR out: the peeled first iteration before LOOP, its
// guards exiting through appended snapshots, the PHIs rewired to the values
// the peeled iteration carries in; and the traces it must leave alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "optimizer/loop_peel.h"
#include "optimizer/pipeline.h"
#include "tests/optimizer/loop_shapes.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

// while i < n { s = s + l[i] * 2; i = i + 1 }: the recorded shape (slot 3
// is s, slot 4 is i). In the peeled copy i and s are their entry SLOADs;
// in the body they are the PHIs, whose first operands are now the values
// the peeled iteration computed. Snapshots #1 and #2 stay the body's; #3
// and #4 are their copies for the peeled guards, naming the entry values.
TEST(LoopPeel, PeelsTheFirstIterationAndRewiresThePhis) {
  LoopPeelPass peel;
  EXPECT_IR_EQ(apply(peel,
                     "0000    int  KINT   2\n"
                     "0001    int  KINT   1\n"
                     "0002 >  int  SLOAD  4  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004 >  list SLOAD  0  0  #0\n"
                     "0005 >  int  SLOAD  3  0  #0\n"
                     "0006    int  LLEN   0004\n"
                     "0007    none LOOP\n"
                     "0008    bool LT     0002  0003\n"
                     "0009 >  none GUARDT 0008  #1\n"
                     "0010    bool ULT    0002  0006\n"
                     "0011 >  none GUARDT 0010  #2\n"
                     "0012 >  int  LLOAD  0004  0002  #2\n"
                     "0013    int  MUL    0012  0000\n"
                     "0014    int  ADD    0005  0013\n"
                     "0015    int  ADD    0002  0001\n"
                     "0016    int  PHI    0005  0014\n"
                     "0017    int  PHI    0002  0015\n"
                     "SNAP #0 ir=0002 pc=3 frames=[] []\n"
                     "SNAP #1 ir=0009 pc=3 frames=[] [3=0005 4=0002]\n"
                     "SNAP #2 ir=0011 pc=5 frames=[] [3=0005 4=0002]\n"),
               "0000    int  KINT   2\n"
               "0001    int  KINT   1\n"
               "0002 >  int  SLOAD  4  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004 >  list SLOAD  0  0  #0\n"
               "0005 >  int  SLOAD  3  0  #0\n"
               "0006    int  LLEN   0004\n"
               // The peeled iteration.
               "0007    bool LT     0002  0003\n"
               "0008 >  none GUARDT 0007  #3\n"
               "0009    bool ULT    0002  0006\n"
               "0010 >  none GUARDT 0009  #4\n"
               "0011 >  int  LLOAD  0004  0002  #4\n"
               "0012    int  MUL    0011  0000\n"
               "0013    int  ADD    0005  0012\n"
               "0014    int  ADD    0002  0001\n"
               "0015    none LOOP\n"
               "0016    bool LT     0014  0003\n"
               "0017 >  none GUARDT 0016  #1\n"
               "0018    bool ULT    0014  0006\n"
               "0019 >  none GUARDT 0018  #2\n"
               "0020 >  int  LLOAD  0004  0014  #2\n"
               "0021    int  MUL    0020  0000\n"
               "0022    int  ADD    0013  0021\n"
               "0023    int  ADD    0014  0001\n"
               "0024    int  PHI    0013  0022\n"
               "0025    int  PHI    0014  0023\n"
               "SNAP #0 ir=0002 pc=3 frames=[] []\n"
               "SNAP #1 ir=0017 pc=3 frames=[] [3=0013 4=0014]\n"
               "SNAP #2 ir=0019 pc=5 frames=[] [3=0013 4=0014]\n"
               "SNAP #3 ir=0008 pc=3 frames=[] [3=0005 4=0002]\n"
               "SNAP #4 ir=0010 pc=5 frames=[] [3=0005 4=0002]\n"
               // The state at the header for T1's tier-up exit.
               "SNAP #5 ir=0015 pc=3 frames=[] [3=0013 4=0014]\n"
               "HEADER #5\n");
}

// A for loop after CSE: its hidden index (slot 0) and its variable (slot
// 3) are one value, 0012, carried by two PHIs from different entry values.
// From the second iteration on they are the same value: one PHI carries it,
// and the body's uses and snapshot entries of both name it.
TEST(LoopPeel, PhisWithTheSameNextValueBecomeOne) {
  LoopPeelPass peel;
  EXPECT_IR_EQ(apply(peel,
                     "0000    int  KINT   0\n"
                     "0001    int  KINT   1\n"
                     "0002 >  int  SLOAD  3  0  #0\n"
                     "0003 >  int  SLOAD  1  0  #0\n"
                     "0004 >  int  SLOAD  2  0  #0\n"
                     "0005 >  int  SLOAD  0  0  #0\n"
                     "0006    none LOOP\n"
                     "0007    int  ADD    0002  0002\n"
                     "0008    none SSTORE 5  0007\n"
                     "0009    bool GT     0003  0000\n"
                     "0010 >  none GUARDT 0009  #1\n"
                     "0011    int  SUB    0003  0001\n"
                     "0012    int  ADD    0005  0004\n"
                     "0013    int  PHI    0005  0012\n"
                     "0014    int  PHI    0003  0011\n"
                     "0015    int  PHI    0002  0012\n"
                     "SNAP #0 ir=0002 pc=31 frames=[] []\n"
                     "SNAP #1 ir=0010 pc=35 frames=[] [0=0005 1=0003 3=0002 5=0007]\n"),
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002 >  int  SLOAD  3  0  #0\n"
               "0003 >  int  SLOAD  1  0  #0\n"
               "0004 >  int  SLOAD  2  0  #0\n"
               "0005 >  int  SLOAD  0  0  #0\n"
               "0006    int  ADD    0002  0002\n"
               "0007    none SSTORE 5  0006\n"
               "0008    bool GT     0003  0000\n"
               "0009 >  none GUARDT 0008  #2\n"
               "0010    int  SUB    0003  0001\n"
               "0011    int  ADD    0005  0004\n"
               "0012    none LOOP\n"
               "0013    int  ADD    0011  0011\n"
               "0014    none SSTORE 5  0013\n"
               "0015    bool GT     0010  0000\n"
               "0016 >  none GUARDT 0015  #1\n"
               "0017    int  SUB    0010  0001\n"
               "0018    int  ADD    0011  0004\n"
               "0019    int  PHI    0011  0018\n"
               "0020    int  PHI    0010  0017\n"
               "SNAP #0 ir=0002 pc=31 frames=[] []\n"
               "SNAP #1 ir=0016 pc=35 frames=[] [0=0011 1=0010 3=0011 5=0013]\n"
               "SNAP #2 ir=0009 pc=35 frames=[] [0=0005 1=0003 3=0002 5=0006]\n"
               "SNAP #3 ir=0012 pc=31 frames=[] [0=0011 1=0010 3=0011]\n"
               "HEADER #3\n");
}

// Snapshots with inlined frames (and a base frame) are copied whole: the
// frames, the resume position and every entry, only the values renumbered.
TEST(LoopPeel, SnapshotsWithInlinedFramesAreCopiedWhole) {
  LoopPeelPass peel;
  EXPECT_IR_EQ(apply(peel,
                     "0000    flt  KFLOAT 0.5\n"
                     "0001 >  flt  SLOAD  1  0  #0\n"
                     "0002    none LOOP\n"
                     "0003    flt  FMUL   0001  0000\n"
                     "0004    bool LT     0003  0000\n"
                     "0005 >  none GUARDF 0004  #1\n"
                     "0006    flt  PHI    0001  0003\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=7 frames=[half@4/12] [1=0001 4=0003 5=0000]\n"),
               "0000    flt  KFLOAT 0.5\n"
               "0001 >  flt  SLOAD  1  0  #0\n"
               "0002    flt  FMUL   0001  0000\n"
               "0003    bool LT     0002  0000\n"
               "0004 >  none GUARDF 0003  #2\n"
               "0005    none LOOP\n"
               "0006    flt  FMUL   0002  0000\n"
               "0007    bool LT     0006  0000\n"
               "0008 >  none GUARDF 0007  #1\n"
               "0009    flt  PHI    0002  0006\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0008 pc=7 frames=[half@4/12] [1=0002 4=0006 5=0000]\n"
               "SNAP #2 ir=0004 pc=7 frames=[half@4/12] [1=0001 4=0002 5=0000]\n"
               "SNAP #3 ir=0005 pc=0 frames=[] [1=0002]\n"
               "HEADER #3\n");
}

TEST(LoopPeel, PipelineRunsItAfterLicmOnlyWhenAskedFor) {
  // Peeling goes in right before guard elimination, after LICM (peel=1,
  // the default, or 2); peel=0 leaves it out.
  TracePipeline::Options peeling = passtest::default_options();
  peeling.peel = true;
  TracePipeline::Options none = passtest::default_options();
  none.peel = false;
  std::vector<std::string> names = TracePipeline(none).pass_names();
  const auto licm = std::find(names.begin(), names.end(), "licm");
  const auto guards = std::find(names.begin(), names.end(), "guards");
  ASSERT_LT(licm, guards);
  names.insert(guards, "peel");
  EXPECT_EQ(TracePipeline(peeling).pass_names(), names);
}

// i = k; while i < len(l) { s += l[i]; i += 1 } with k unknown. Without
// peeling the body keeps its bounds check ULT(i, len): i < len is a fact,
// but i >= 0 is not (nothing bounds k from below). Peeled, the first
// iteration's bounds check gives 0 <= k, so the body's i starts at k + 1 >= 1
// and counts up below len: guard elimination drops the body's bounds check.
TEST(LoopPeel, PeeledBoundsCheckLetsGuardEliminationDropTheBodysCheck) {
  const char* in =
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003 >  list SLOAD  0  0  #0\n"
      "0004 >  int  SLOAD  3  0  #0\n"
      "0005    none LOOP\n"
      "0006    int  LLEN   0003\n"
      "0007    bool LT     0001  0006\n"
      "0008 >  none GUARDT 0007  #1\n"
      "0009    bool ULT    0001  0006\n"
      "0010 >  none GUARDT 0009  #2\n"
      "0011 >  int  LLOAD  0003  0001  #2\n"
      "0012    int  ADD    0004  0011\n"
      "0013    int  ADD    0001  0000\n"
      "0014    int  PHI    0004  0012\n"
      "0015    int  PHI    0001  0013\n"
      "SNAP #0 ir=0001 pc=3 frames=[] []\n"
      "SNAP #1 ir=0008 pc=3 frames=[] [1=0001 3=0004]\n"
      "SNAP #2 ir=0010 pc=5 frames=[] [1=0001 3=0004]\n";
  TracePipeline::Options peeling = passtest::default_options();
  peeling.peel = true;
  TracePipeline::Options none = passtest::default_options();
  none.peel = false;
  const std::string plain = passtest::apply(TracePipeline(none), in);
  EXPECT_NE(plain.find("0009    bool ULT    0001  0005\n0010 >  none GUARDT 0009  #2\n"), std::string::npos) << plain;
  EXPECT_IR_EQ(passtest::apply(TracePipeline(peeling), in),
               "0000    int  KINT   1\n"
               "0001 >  int  SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003 >  list SLOAD  0  0  #0\n"
               "0004 >  int  SLOAD  3  0  #0\n"
               "0005    int  LLEN   0003\n"
               // The peeled iteration keeps both checks.
               "0006    bool LT     0001  0005\n"
               "0007 >  none GUARDT 0006  #3\n"
               "0008    bool ULT    0001  0005\n"
               "0009 >  none GUARDT 0008  #4\n"
               "0010 >  int  LLOAD  0003  0001  #4\n"
               "0011    int  ADD    0004  0010\n"
               "0012    int  ADD    0001  0000\n"
               "0013    none LOOP\n"
               "0014    bool LT     0012  0005\n"
               "0015 >  none GUARDT 0014  #1\n"
               "0016 >  int  LLOAD  0003  0012  #2\n"
               "0017    int  ADD    0011  0016\n"
               "0018    int  ADD    0012  0000\n"
               "0019    int  PHI    0011  0017\n"
               "0020    int  PHI    0012  0018\n"
               "SNAP #0 ir=0001 pc=3 frames=[] []\n"
               "SNAP #1 ir=0015 pc=3 frames=[] [1=0012 3=0011]\n"
               "SNAP #2 ir=0016 pc=5 frames=[] [1=0012 3=0011]\n"
               "SNAP #3 ir=0007 pc=3 frames=[] [1=0001 3=0004]\n"
               "SNAP #4 ir=0009 pc=5 frames=[] [1=0001 3=0004]\n"
               "SNAP #5 ir=0013 pc=3 frames=[] [1=0012 3=0011]\n"
               "HEADER #5\n");
}

// Peeling where it pays (the pipeline's peel=1) leaves a counted loop whose
// bounds checks loop predication hoists (loop_shapes.h's kForLoop): the
// peeled iteration's stores would leave no preamble for its predicates to
// exit from, and the body would keep its checks.
TEST(LoopPeel, CountedLoopsThatPredicationCoversAreLeftToIt) {
  {
    LoopPeelPass leave(/*where_it_pays=*/true);
    TraceIR ir = parse_ir(passtest::kForLoop);
    EXPECT_FALSE(leave.run(ir));
    EXPECT_IR_EQ(print_ir(ir), passtest::kForLoop);
  }
  {
    LoopPeelPass peel;
    TraceIR ir = parse_ir(passtest::kForLoop);
    EXPECT_TRUE(peel.run(ir));
  }
  // Through the pipeline with both on: the body's bounds check is gone.
  TracePipeline::Options both = passtest::default_options();
  both.peel = true;
  both.predicate = true;
  const std::string out = passtest::apply(TracePipeline(both), passtest::kForLoop);
  const std::string body = out.substr(out.find("LOOP"));
  EXPECT_EQ(body.find("ULT"), std::string::npos) << out;
}

// Traces peeling leaves exactly as they are.
void expect_untouched(const char* in) {
  LoopPeelPass peel;
  TraceIR ir = parse_ir(in);
  EXPECT_FALSE(peel.run(ir));
  EXPECT_IR_EQ(print_ir(ir), in);
}

TEST(LoopPeel, LinearTraceIsLeftAlone) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    int  ADD    0000  0000\n"
      "0002 >  none EXIT    #1\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] [1=0001]\n");
}

TEST(LoopPeel, LoopWithoutPhisIsLeftAlone) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    none LOOP\n"
      "0002 >  int  GLOAD  4  #1\n"
      "0003    int  ADD    0002  0000\n"
      "0004    none GSTORE 4  0003\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n");
}

// x = 5 every iteration: after one iteration the PHI would carry the
// constant on both sides, and a constant cannot be a PHI's first operand.
TEST(LoopPeel, PhiOfAConstantIsNotPeeled) {
  expect_untouched(
      "0000    int  KINT   5\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003    none LOOP\n"
      "0004    int  ADD    0002  0001\n"
      "0005    int  PHI    0001  0000\n"
      "0006    int  PHI    0002  0004\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
}

// x = n every iteration, n invariant: the PHI becomes non-carried (n on
// both sides) and its new first operand would be another slot's SLOAD.
TEST(LoopPeel, PhiOfAnInvariantValueIsNotPeeled) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001 >  int  SLOAD  2  0  #0\n"
      "0002 >  int  SLOAD  3  0  #0\n"
      "0003    none LOOP\n"
      "0004    int  ADD    0002  0000\n"
      "0005    int  PHI    0000  0001\n"
      "0006    int  PHI    0002  0004\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
}

// a, b = b, a: each PHI's next value is the other's entry value; the new
// first operands would be entry SLOADs of the wrong slots.
TEST(LoopPeel, RotationOfCarriedValuesIsNotPeeled) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001 >  int  SLOAD  2  0  #0\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0000  0001\n"
      "0004    none SSTORE 3  0003\n"
      "0005    int  PHI    0000  0001\n"
      "0006    int  PHI    0001  0000\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
}

TEST(LoopPeel, HelperCallsAndFrameSwitchesInTheBodyAreNotPeeled) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    none LOOP\n"
      "0002    none CARG   0000  0000\n"
      "0003    none CALL   0002  0  #1\n"
      "0004    int  ADD    0000  0000\n"
      "0005    int  PHI    0000  0004\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "CALL #0 builtin 0 print 0x0\n");
  expect_untouched(
      "0000    func KOBJ   0x1000\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002    none LOOP\n"
      "0003 >  none FPUSH  0000  4  #1\n"
      "0004    int  ADD    0001  0001\n"
      "0005    int  PHI    0001  0004\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=1 frames=[] []\n");
}

// Snapshot #1 is exited from before LOOP (the entry value of slot 1) and
// from the body (the carried value): after peeling those are two values.
TEST(LoopPeel, SnapshotSharedByPreambleAndBodyIsNotPeeled) {
  expect_untouched(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001 >  int  GLOAD  2  #1\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0000  0001\n"
      "0004    bool LT     0003  0001\n"
      "0005 >  none GUARDT 0004  #1\n"
      "0006    int  PHI    0000  0003\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=1 frames=[] [1=0000]\n");
}

TEST(LoopPeel, MalformedTracesThrow) {
  LoopPeelPass peel;
  TraceIR const_phi = parse_ir(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0001  0000\n"
      "0004    int  PHI    0000  0003\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_THROW(peel.run(const_phi), std::invalid_argument);
  TraceIR body_phi = parse_ir(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0001  0000\n"
      "0004    int  PHI    0003  0003\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_THROW(peel.run(body_phi), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::jit
