// LicmPass, IR in / IR out: what moves before LOOP (and exits through
// snapshot 0 there), and what must stay in the loop body.
#include <gtest/gtest.h>

#include "optimizer/licm.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

// s += G[k] with k fixed: the global, its length, the bounds check and the
// element load are the same every iteration. Only the sum is loop-carried.
TEST(Licm, InvariantGlobalLengthBoundsCheckAndLoadMoveBeforeLoop) {
  LicmPass licm;
  EXPECT_IR_EQ(apply(licm,
                     "0000 >  flt  SLOAD  1  0  #0\n"
                     "0001 >  int  SLOAD  2  0  #0\n"
                     "0002    none LOOP\n"
                     "0003 >  list GLOAD  4  #1\n"
                     "0004    int  LLEN   0003\n"
                     "0005    bool ULT    0001  0004\n"
                     "0006 >  none GUARDT 0005  #2\n"
                     "0007 >  flt  LLOAD  0003  0001  #2\n"
                     "0008    flt  FADD   0000  0007\n"
                     "0009    flt  PHI    0000  0008\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0003 pc=1 frames=[] [1=0000]\n"
                     "SNAP #2 ir=0006 pc=2 frames=[] [1=0000]\n"),
               "0000 >  flt  SLOAD  1  0  #0\n"
               "0001 >  int  SLOAD  2  0  #0\n"
               "0002 >  list GLOAD  4  #0\n"
               "0003    int  LLEN   0002\n"
               "0004    bool ULT    0001  0003\n"
               "0005 >  none GUARDT 0004  #0\n"
               "0006 >  flt  LLOAD  0002  0001  #0\n"
               "0007    none LOOP\n"
               "0008    flt  FADD   0000  0006\n"
               "0009    flt  PHI    0000  0008\n"
               // Snapshots keep naming the instruction they were taken at.
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0002 pc=1 frames=[] [1=0000]\n"
               "SNAP #2 ir=0005 pc=2 frames=[] [1=0000]\n");
}

// The index is loop-carried (a PHI's first operand): everything that
// depends on it stays; the list's length does not depend on it and moves.
TEST(Licm, ValuesThatDependOnALoopCarriedValueStay) {
  LicmPass licm;
  EXPECT_IR_EQ(apply(licm,
                     "0000    int  KINT   1\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  int  SLOAD  2  0  #0\n"
                     "0003    none LOOP\n"
                     "0004    int  LLEN   0001\n"
                     "0005    bool ULT    0002  0004\n"
                     "0006 >  none GUARDT 0005  #1\n"
                     "0007 >  int  LLOAD  0001  0002  #1\n"
                     "0008    int  ADD    0002  0000\n"
                     "0009    int  PHI    0002  0008\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0006 pc=2 frames=[] []\n"),
               "0000    int  KINT   1\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003    int  LLEN   0001\n"
               "0004    none LOOP\n"
               "0005    bool ULT    0002  0003\n"
               "0006 >  none GUARDT 0005  #1\n"
               "0007 >  int  LLOAD  0001  0002  #1\n"
               "0008    int  ADD    0002  0000\n"
               "0009    int  PHI    0002  0008\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0006 pc=2 frames=[] []\n");
}

// A store into any list in the body may change the invariant element: its
// load stays (its length and bounds check may still move).
TEST(Licm, ListStoreInTheBodyKeepsElementLoadsInside) {
  LicmPass licm;
  EXPECT_IR_EQ(apply(licm,
                     "0000 >  list SLOAD  1  0  #0\n"
                     "0001 >  int  SLOAD  2  0  #0\n"
                     "0002 >  list SLOAD  3  0  #0\n"
                     "0003 >  int  SLOAD  4  0  #0\n"
                     "0004    none LOOP\n"
                     "0005    int  LLEN   0000\n"
                     "0006    bool ULT    0001  0005\n"
                     "0007 >  none GUARDT 0006  #1\n"
                     "0008 >  int  LLOAD  0000  0001  #1\n"
                     "0009    none LREF   0002  0003\n"
                     "0010    none LSTORE 0009  0008\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0007 pc=2 frames=[] []\n"),
               "0000 >  list SLOAD  1  0  #0\n"
               "0001 >  int  SLOAD  2  0  #0\n"
               "0002 >  list SLOAD  3  0  #0\n"
               "0003 >  int  SLOAD  4  0  #0\n"
               "0004    int  LLEN   0000\n"
               "0005    bool ULT    0001  0004\n"
               "0006 >  none GUARDT 0005  #0\n"
               "0007    none LOOP\n"
               "0008 >  int  LLOAD  0000  0001  #1\n"
               "0009    none LREF   0002  0003\n"
               "0010    none LSTORE 0009  0008\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0006 pc=2 frames=[] []\n");
}

// A helper call in the body may store globals and resize lists; a global
// the body stores itself changes too. Neither load moves.
TEST(Licm, CallsAndGlobalStoresInTheBodyKeepLoadsInside) {
  LicmPass licm;
  const char* with_call =
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    none LOOP\n"
      "0002 >  int  GLOAD  4  #1\n"
      "0003    int  ADD    0000  0002\n"
      "0004    none CARG   0003  0003\n"
      "0005    none CALL   0004  0  #1\n"
      "0006    int  PHI    0000  0003\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "CALL #0 builtin 0 print 0x0\n";
  EXPECT_IR_EQ(apply(licm, with_call), with_call);
  const char* with_store =
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    none LOOP\n"
      "0002 >  int  GLOAD  4  #1\n"
      "0003    int  ADD    0000  0002\n"
      "0004    none GSTORE 4  0003\n"
      "0005    int  PHI    0000  0003\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(licm, with_store), with_store);
}

// Integer division stays in the body even with invariant operands: its
// divisor guard is what makes it safe, and it may not have moved with it.
TEST(Licm, IntegerDivisionStaysInTheBody) {
  LicmPass licm;
  const char* in =
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001 >  int  SLOAD  2  0  #0\n"
      "0002 >  int  SLOAD  3  0  #0\n"
      "0003    none LOOP\n"
      "0004    int  IDIV   0001  0002\n"
      "0005    int  ADD    0000  0004\n"
      "0006    int  PHI    0000  0005\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n";
  EXPECT_IR_EQ(apply(licm, in), in);
}

// Snapshot 0 must be the plain entry state for a moved guard to exit
// through it; a trace whose snapshot 0 writes slots is left alone.
TEST(Licm, TraceWhoseFirstSnapshotIsNotTheEntryStateIsLeftAlone) {
  LicmPass licm;
  const char* in =
      "0000    int  KINT   7\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002    none LOOP\n"
      "0003 >  int  GLOAD  4  #1\n"
      "0004    int  ADD    0001  0003\n"
      "0005    int  PHI    0001  0004\n"
      "SNAP #0 ir=0001 pc=0 frames=[] [1=0000]\n"
      "SNAP #1 ir=0003 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(licm, in), in);
}

TEST(Licm, LinearTraceIsLeftAlone) {
  LicmPass licm;
  const char* in =
      "0000 >  int  GLOAD  4  #0\n"
      "0001    int  ADD    0000  0000\n"
      "0002 >  none EXIT    #1\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] [1=0001]\n";
  EXPECT_IR_EQ(apply(licm, in), in);
}

}  // namespace
}  // namespace tessera::jit
