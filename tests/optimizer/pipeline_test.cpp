// The optimizer pipeline on a loop trace as the recorder writes it (the
// shape of nbody's inner loop: a global list read and written at the loop
// index, with a bounds check per access).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "optimizer/pipeline.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

TEST(TracePipeline, PassOrderAndAfterPassCallback) {
  TracePipeline p;
  EXPECT_EQ(p.pass_names(), (std::vector<std::string>{"fold", "cse", "licm", "tsink", "sink", "guards", "predicate",
                                                       "cse", "dse", "dce"}));
  EXPECT_EQ(TracePipeline(TracePipeline::Options{.sink = false}).pass_names(),
            (std::vector<std::string>{"fold", "cse", "licm", "guards", "predicate", "cse", "dse", "dce"}));
  TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  // The callback also sees the inner steps: tensor sinking's own result,
  // then its inner fold (the dumps .4-tsink.ir and .5-tsink.fold.ir).
  EXPECT_EQ(p.step_names(), (std::vector<std::string>{"fold", "cse", "licm", "tsink", "tsink.fold", "sink", "guards",
                                                       "predicate", "cse", "dse", "dce"}));
  EXPECT_EQ(TracePipeline(TracePipeline::Options{.sink = false}).step_names(),
            TracePipeline(TracePipeline::Options{.sink = false}).pass_names());
  std::vector<std::string> seen;
  p.run(ir, [&](const char* pass, const TraceIR&) { seen.emplace_back(pass); });
  EXPECT_EQ(seen, p.step_names());
}

// verify_each: the verifier runs on the input and after every step, and a
// broken trace throws naming where.
TEST(TracePipeline, VerifyEachNamesWhereTheTraceBroke) {
  const ScopedIRVerifyMode throwing("1");
  TraceIR ir = parse_ir(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    int  ADD    0001  0000\n"
      "0003 >  none EXIT    #0\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  ir[3].snap = kNoSnap;  // EXIT without a snapshot
  TracePipeline verifying(TracePipeline::Options{.verify_each = true});
  try {
    verifying.run(ir);
    ADD_FAILURE() << "no IRVerifyError";
  } catch (const IRVerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("before the optimizer"), std::string::npos) << e.what();
  }
}

// V[i] = V[i] + G * 2.0 in a counting loop: G, V, V's length and G * 2.0
// move before LOOP; the second bounds check goes; the body keeps one
// bounds check, the load, the add and the store.
TEST(TracePipeline, CountingLoopOverAGlobalList) {
  TracePipeline p;
  EXPECT_IR_EQ(passtest::apply(p,
                               "0000    int  KINT   1\n"
                               "0001    flt  KFLOAT 2.0\n"
                               "0002 >  int  SLOAD  1  0  #0\n"
                               "0003 >  int  SLOAD  2  0  #0\n"
                               "0004    none LOOP\n"
                               "0005 >  list GLOAD  0  #1\n"
                               "0006    int  LLEN   0005\n"
                               "0007    bool ULT    0002  0006\n"
                               "0008 >  none GUARDT 0007  #2\n"
                               "0009 >  flt  LLOAD  0005  0002  #2\n"
                               "0010 >  flt  GLOAD  1  #3\n"
                               "0011    flt  FMUL   0010  0001\n"
                               "0012    flt  FADD   0009  0011\n"
                               "0013 >  list GLOAD  0  #4\n"
                               "0014    int  LLEN   0013\n"
                               "0015    bool ULT    0002  0014\n"
                               "0016 >  none GUARDT 0015  #5\n"
                               "0017    none LREF   0013  0002\n"
                               "0018    none LSTORE 0017  0012\n"
                               "0019    int  ADD    0002  0000\n"
                               "0020    bool LT     0019  0003\n"
                               "0021 >  none GUARDT 0020  #6\n"
                               "0022    int  PHI    0002  0019\n"
                               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                               "SNAP #1 ir=0005 pc=1 frames=[] []\n"
                               "SNAP #2 ir=0008 pc=2 frames=[] []\n"
                               "SNAP #3 ir=0010 pc=3 frames=[] []\n"
                               "SNAP #4 ir=0013 pc=5 frames=[] [3=0012]\n"
                               "SNAP #5 ir=0016 pc=6 frames=[] [3=0012]\n"
                               "SNAP #6 ir=0021 pc=8 frames=[] [1=0019]\n"),
               "0000    int  KINT   1\n"
               "0001    flt  KFLOAT 2.0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004 >  list GLOAD  0  #0\n"
               "0005    int  LLEN   0004\n"
               "0006 >  flt  GLOAD  1  #0\n"
               "0007    flt  FMUL   0006  0001\n"
               "0008    none LOOP\n"
               "0009    bool ULT    0002  0005\n"
               "0010 >  none GUARDT 0009  #2\n"
               "0011 >  flt  LLOAD  0004  0002  #2\n"
               "0012    flt  FADD   0011  0007\n"
               "0013    none LREF   0004  0002\n"
               "0014    none LSTORE 0013  0012\n"
               "0015    int  ADD    0002  0000\n"
               "0016    bool LT     0015  0003\n"
               "0017 >  none GUARDT 0016  #6\n"
               "0018    int  PHI    0002  0015\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=1 frames=[] []\n"
               "SNAP #2 ir=0010 pc=2 frames=[] []\n"
               "SNAP #3 ir=0006 pc=3 frames=[] []\n"
               "SNAP #4 ir=0013 pc=5 frames=[] [3=0012]\n"
               "SNAP #5 ir=0013 pc=6 frames=[] [3=0012]\n"
               "SNAP #6 ir=0017 pc=8 frames=[] [1=0015]\n");
}

}  // namespace
}  // namespace tessera::jit
