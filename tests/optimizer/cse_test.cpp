// CsePass, IR in / IR out: what it merges, forwards and removes, and where
// it must leave loads alone (possible aliasing, calls, the loop boundary).
#include <gtest/gtest.h>

#include "optimizer/cse.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

TEST(Cse, RepeatedPureInstructionIsReusedAndItsUsesFollow) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000 >  int  SLOAD  0  0  #0\n"
                     "0001 >  int  SLOAD  1  0  #0\n"
                     "0002    int  ADD    0000  0001\n"
                     "0003    int  ADD    0000  0001\n"
                     "0004    int  MUL    0002  0003\n"
                     "0005 >  none EXIT    #1\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=4 frames=[] [2=0003 3=0004]\n"),
               "0000 >  int  SLOAD  0  0  #0\n"
               "0001 >  int  SLOAD  1  0  #0\n"
               "0002    int  ADD    0000  0001\n"
               "0003    int  MUL    0002  0002\n"
               "0004 >  none EXIT    #1\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=4 frames=[] [2=0002 3=0003]\n");
}

// Equality is symmetric: the recorder's guard that two dims are one symbol
// and fusion's may compare them in either order; the second goes.
TEST(Cse, EqualityWithSwappedOperandsIsTheSameValue) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000 >  tens SLOAD  0  0  #0\n"
                     "0001 >  tens SLOAD  1  0  #0\n"
                     "0002    int  TDIM   0000  1\n"
                     "0003    int  TDIM   0001  0\n"
                     "0004    bool EQ     0002  0003\n"
                     "0005 >  none GUARDT 0004  #1\n"
                     "0006    bool EQ     0003  0002\n"
                     "0007 >  none GUARDT 0006  #1\n"
                     "0008    bool NE     0003  0002\n"
                     "0009    bool LT     0003  0002\n"
                     "0010    bool LT     0002  0003\n"
                     "0011 >  none EXIT    #2\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=3 frames=[] []\n"
                     "SNAP #2 ir=0011 pc=5 frames=[] [2=0008 3=0009 4=0010]\n"),
               "0000 >  tens SLOAD  0  0  #0\n"
               "0001 >  tens SLOAD  1  0  #0\n"
               "0002    int  TDIM   0000  1\n"
               "0003    int  TDIM   0001  0\n"
               "0004    bool EQ     0002  0003\n"
               "0005 >  none GUARDT 0004  #1\n"
               "0006    bool NE     0003  0002\n"
               "0007    bool LT     0003  0002\n"
               "0008    bool LT     0002  0003\n"
               "0009 >  none EXIT    #2\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=3 frames=[] []\n"
               "SNAP #2 ir=0009 pc=5 frames=[] [2=0006 3=0007 4=0008]\n");
}

// x[i] += 1 records a bounds check for the load and another for the store:
// the second length, comparison and guard go; the guard's snapshot stays.
TEST(Cse, SecondBoundsCheckOfTheSameElementIsRemoved) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000    int  KINT   1\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  int  SLOAD  2  0  #0\n"
                     "0003    int  LLEN   0001\n"
                     "0004    bool ULT    0002  0003\n"
                     "0005 >  none GUARDT 0004  #1\n"
                     "0006 >  int  LLOAD  0001  0002  #1\n"
                     "0007    int  ADD    0006  0000\n"
                     "0008    int  LLEN   0001\n"
                     "0009    bool ULT    0002  0008\n"
                     "0010 >  none GUARDT 0009  #2\n"
                     "0011    none LREF   0001  0002\n"
                     "0012    none LSTORE 0011  0007\n"
                     "0013 >  none EXIT    #3\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=3 frames=[] []\n"
                     "SNAP #2 ir=0010 pc=6 frames=[] [4=0007]\n"
                     "SNAP #3 ir=0013 pc=8 frames=[] []\n"),
               "0000    int  KINT   1\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003    int  LLEN   0001\n"
               "0004    bool ULT    0002  0003\n"
               "0005 >  none GUARDT 0004  #1\n"
               "0006 >  int  LLOAD  0001  0002  #1\n"
               "0007    int  ADD    0006  0000\n"
               "0008    none LREF   0001  0002\n"
               "0009    none LSTORE 0008  0007\n"
               "0010 >  none EXIT    #3\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=3 frames=[] []\n"
               "SNAP #2 ir=0008 pc=6 frames=[] [4=0007]\n"
               "SNAP #3 ir=0010 pc=8 frames=[] []\n");
}

TEST(Cse, StoredElementIsForwardedToALaterLoad) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000 >  list SLOAD  1  0  #0\n"
                     "0001 >  int  SLOAD  2  0  #0\n"
                     "0002 >  flt  SLOAD  3  0  #0\n"
                     "0003    none LREF   0000  0001\n"
                     "0004    none LSTORE 0003  0002\n"
                     "0005 >  flt  LLOAD  0000  0001  #1\n"
                     "0006    flt  FMUL   0005  0005\n"
                     "0007 >  none EXIT    #2\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=3 frames=[] []\n"
                     "SNAP #2 ir=0007 pc=5 frames=[] [4=0006]\n"),
               "0000 >  list SLOAD  1  0  #0\n"
               "0001 >  int  SLOAD  2  0  #0\n"
               "0002 >  flt  SLOAD  3  0  #0\n"
               "0003    none LREF   0000  0001\n"
               "0004    none LSTORE 0003  0002\n"
               "0005    flt  FMUL   0002  0002\n"
               "0006 >  none EXIT    #2\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=3 frames=[] []\n"
               "SNAP #2 ir=0006 pc=5 frames=[] [4=0005]\n");
}

// a[i], then a store through another list reference (which may be the same
// list) or another index: the second load of a[i] must read memory again.
TEST(Cse, StoreBetweenTwoLoadsThatMayAliasKeepsBothLoads) {
  CsePass cse;
  const char* in =
      "0000 >  list SLOAD  1  0  #0\n"
      "0001 >  list SLOAD  2  0  #0\n"
      "0002 >  int  SLOAD  3  0  #0\n"
      "0003 >  int  SLOAD  4  0  #0\n"
      "0004 >  int  LLOAD  0000  0002  #1\n"
      "0005    none LREF   0001  0003\n"
      "0006    none LSTORE 0005  0004\n"
      "0007 >  int  LLOAD  0000  0002  #2\n"
      "0008    int  ADD    0004  0007\n"
      "0009 >  none EXIT    #3\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=2 frames=[] []\n"
      "SNAP #2 ir=0007 pc=4 frames=[] []\n"
      "SNAP #3 ir=0009 pc=6 frames=[] [5=0008]\n";
  EXPECT_IR_EQ(apply(cse, in), in);
}

// A helper call may resize lists, move their storage, and store globals: the
// loads, lengths and element addresses before it are not reused after it.
TEST(Cse, CallKillsLoadsLengthsAndAddresses) {
  CsePass cse;
  const char* in =
      "0000    int  KINT   0\n"
      "0001 >  list GLOAD  3  #0\n"
      "0002    int  LLEN   0001\n"
      "0003    none LREF   0001  0000\n"
      "0004    none LSTORE 0003  0002\n"
      "0005    none CARG   0001  0000\n"
      "0006    none CALL   0005  0  #1\n"
      "0007 >  list GLOAD  3  #2\n"
      "0008    int  LLEN   0007\n"
      "0009    none LREF   0007  0000\n"
      "0010    none LSTORE 0009  0008\n"
      "0011 >  none EXIT    #3\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0006 pc=2 frames=[] []\n"
      "SNAP #2 ir=0007 pc=4 frames=[] []\n"
      "SNAP #3 ir=0011 pc=6 frames=[] []\n"
      "CALL #0 builtin 0 push 0x0\n";
  EXPECT_IR_EQ(apply(cse, in), in);
}

TEST(Cse, GlobalStoreForwardsItsValueAndKillsOnlyThatGlobal) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000 >  int  GLOAD  1  #0\n"
                     "0001 >  int  GLOAD  2  #0\n"
                     "0002    int  ADD    0000  0001\n"
                     "0003    none GSTORE 1  0002\n"
                     "0004 >  int  GLOAD  1  #1\n"
                     "0005 >  int  GLOAD  2  #1\n"
                     "0006    int  MUL    0004  0005\n"
                     "0007 >  none EXIT    #2\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=3 frames=[] []\n"
                     "SNAP #2 ir=0007 pc=5 frames=[] [1=0006]\n"),
               "0000 >  int  GLOAD  1  #0\n"
               "0001 >  int  GLOAD  2  #0\n"
               "0002    int  ADD    0000  0001\n"
               "0003    none GSTORE 1  0002\n"
               "0004    int  MUL    0002  0001\n"
               "0005 >  none EXIT    #2\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=3 frames=[] []\n"
               "SNAP #2 ir=0005 pc=5 frames=[] [1=0004]\n");
}

// Inside the loop body a PHI's first operand names the loop-carried value,
// not the value before LOOP: an equal-looking instruction before LOOP is a
// different value and must not be reused.
TEST(Cse, NothingIsReusedAcrossLoop) {
  CsePass cse;
  const char* in =
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    int  ADD    0001  0000\n"
      "0003    none LOOP\n"
      "0004    int  ADD    0001  0000\n"
      "0005    bool LT     0004  0002\n"
      "0006 >  none GUARDT 0005  #1\n"
      "0007    int  PHI    0001  0004\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0006 pc=3 frames=[] [0=0004]\n";
  EXPECT_IR_EQ(apply(cse, in), in);
}

TEST(Cse, GuardOnAnEstablishedConditionIsRemoved) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000    bool KBOOL  true\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002 >  int  SLOAD  1  0  #0\n"
                     "0003    bool LT     0001  0002\n"
                     "0004 >  none GUARDT 0003  #1\n"
                     "0005    bool LT     0001  0002\n"
                     "0006 >  none GUARDT 0005  #2\n"
                     "0007 >  none GUARDF 0005  #2\n"
                     "0008 >  none GUARDT 0000  #2\n"
                     "0009 >  none EXIT    #3\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=2 frames=[] []\n"
                     "SNAP #2 ir=0006 pc=4 frames=[] []\n"
                     "SNAP #3 ir=0009 pc=6 frames=[] []\n"),
               // The GUARDF contradicts the GUARDT: it stays (it always exits).
               "0000 >  int  SLOAD  0  0  #0\n"
               "0001 >  int  SLOAD  1  0  #0\n"
               "0002    bool LT     0000  0001\n"
               "0003 >  none GUARDT 0002  #1\n"
               "0004 >  none GUARDF 0002  #2\n"
               "0005 >  none EXIT    #3\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0003 pc=2 frames=[] []\n"
               "SNAP #2 ir=0004 pc=4 frames=[] []\n"
               "SNAP #3 ir=0005 pc=6 frames=[] []\n");
}

// Across LOOP: a pure value and a guard of the part before LOOP serve the
// body when their operands are not loop-carried (a * b, and the guard on
// a * b > 0); x * b, whose x is carried, is the PHI's product in the body
// and stays.
TEST(Cse, InvariantValuesAndGuardsCarryIntoTheLoopBodyButNotCarriedOnes) {
  CsePass cse;
  EXPECT_IR_EQ(apply(cse,
                     "0000    int  KINT   0\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002 >  int  SLOAD  1  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004    int  MUL    0001  0002\n"
                     "0005    bool GT     0004  0000\n"
                     "0006 >  none GUARDT 0005  #0\n"
                     "0007    int  MUL    0003  0002\n"
                     "0008    none LOOP\n"
                     "0009    int  MUL    0001  0002\n"
                     "0010    bool GT     0009  0000\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012    int  MUL    0003  0002\n"
                     "0013    int  ADD    0012  0009\n"
                     "0014    int  PHI    0003  0013\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0011 pc=2 frames=[] [2=0003]\n"),
               "0000    int  KINT   0\n"
               "0001 >  int  SLOAD  0  0  #0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004    int  MUL    0001  0002\n"
               "0005    bool GT     0004  0000\n"
               "0006 >  none GUARDT 0005  #0\n"
               "0007    int  MUL    0003  0002\n"
               "0008    none LOOP\n"
               "0009    int  MUL    0003  0002\n"
               "0010    int  ADD    0009  0004\n"
               "0011    int  PHI    0003  0010\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0009 pc=2 frames=[] [2=0003]\n");
}

}  // namespace
}  // namespace tessera::jit
