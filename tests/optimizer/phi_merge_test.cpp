// PhiMergePass, IR in / IR out: a counted loop's two copies of its index
// (the hidden counter and the visible variable, one next value) become one
// behind an entry guard; loop-carried values that may differ stay apart.
#include <gtest/gtest.h>

#include <string>

#include "optimizer/phi_merge.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

// for i in range(...) { s += u[i] }: slot 4 the counter, slot 7 the
// variable, both next i + step. After the merge the body indexes with the
// counter and the exit writes it to both slots; the variable's PHI stays
// (T1's tier-up exit writes its slot from it) with nothing reading it.
TEST(PhiMerge, ACountedLoopsTwoIndexesBecomeOne) {
  PhiMergePass pass;
  EXPECT_IR_EQ(passtest::apply(pass,
                     "0000 >  list SLOAD  0  0  #0\n"
                     "0001 >  int  SLOAD  4  0  #0\n"
                     "0002 >  int  SLOAD  6  0  #0\n"
                     "0003 >  int  SLOAD  7  0  #0\n"
                     "0004 >  flt  SLOAD  8  0  #0\n"
                     "0005    none LOOP\n"
                     "0006 >  flt  LLOAD  0000  0003  #1\n"
                     "0007    flt  FADD   0004  0006\n"
                     "0008    int  ADD    0001  0002\n"
                     "0009    int  PHI    0001  0008\n"
                     "0010    int  PHI    0003  0008\n"
                     "0011    flt  PHI    0004  0007\n"
                     "SNAP #0 ir=0000 pc=4 frames=[] []\n"
                     "SNAP #1 ir=0006 pc=5 frames=[] [4=0001 7=0003 8=0004]\n"),
               "0000 >  list SLOAD  0  0  #0\n"
               "0001 >  int  SLOAD  4  0  #0\n"
               "0002 >  int  SLOAD  6  0  #0\n"
               "0003 >  int  SLOAD  7  0  #0\n"
               "0004    bool EQ     0001  0003\n"
               "0005 >  none GUARDT 0004  #0\n"
               "0006 >  flt  SLOAD  8  0  #0\n"
               "0007    none LOOP\n"
               "0008 >  flt  LLOAD  0000  0001  #1\n"
               "0009    flt  FADD   0006  0008\n"
               "0010    int  ADD    0001  0002\n"
               "0011    int  PHI    0001  0010\n"
               "0012    int  PHI    0003  0010\n"
               "0013    flt  PHI    0006  0009\n"
               "SNAP #0 ir=0000 pc=4 frames=[] []\n"
               "SNAP #1 ir=0008 pc=5 frames=[] [4=0001 7=0001 8=0006]\n");
}

// Different next values, or a next value that differs only by type: nothing
// to merge. And a trace with a side effect before LOOP keeps its PHIs (a
// guard there could not exit through snapshot 0, the entry state).
TEST(PhiMerge, ValuesThatMayDifferStayApart) {
  PhiMergePass pass;
  const std::string two_counters =
      "0000    int  KINT   1\n"
      "0001    int  KINT   2\n"
      "0002 >  int  SLOAD  4  0  #0\n"
      "0003 >  int  SLOAD  7  0  #0\n"
      "0004    none LOOP\n"
      "0005    int  ADD    0002  0000\n"
      "0006    int  ADD    0003  0001\n"
      "0007    int  PHI    0002  0005\n"
      "0008    int  PHI    0003  0006\n"
      "SNAP #0 ir=0002 pc=4 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(pass, two_counters), print_ir(parse_ir(two_counters)));
  const std::string stores_first =
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  4  0  #0\n"
      "0002 >  int  SLOAD  7  0  #0\n"
      "0003    none SSTORE 9  0001\n"
      "0004    none LOOP\n"
      "0005    int  ADD    0001  0000\n"
      "0006    int  PHI    0001  0005\n"
      "0007    int  PHI    0002  0005\n"
      "SNAP #0 ir=0001 pc=4 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(pass, stores_first), print_ir(parse_ir(stores_first)));
}

}  // namespace
}  // namespace tessera::jit
