// GuardElimPass, IR in / IR out: guards implied by earlier guards, bounds
// checks proven by ranges (an induction variable's among them) and
// comparisons the ranges decide go; the comparisons stay for DCE, and the
// snapshots stay as they were. Then the cases where it must not apply.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "optimizer/guard_elim.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

// i < n established: i <= n, !(i >= n), n > i and i != n follow; i < 10
// established: i < 20 and i <= 10 follow. i < 10 does not follow from i < n.
TEST(GuardElim, GuardsImpliedByEarlierGuardsAreRemoved) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   10\n"
                     "0001    int  KINT   20\n"
                     "0002 >  int  SLOAD  1  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004    bool LT     0002  0003\n"
                     "0005 >  none GUARDT 0004  #1\n"
                     "0006    bool LE     0002  0003\n"
                     "0007 >  none GUARDT 0006  #1\n"
                     "0008    bool GE     0002  0003\n"
                     "0009 >  none GUARDF 0008  #1\n"
                     "0010    bool GT     0003  0002\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012    bool EQ     0003  0002\n"
                     "0013 >  none GUARDF 0012  #1\n"
                     "0014    bool LT     0002  0000\n"
                     "0015 >  none GUARDT 0014  #1\n"
                     "0016    bool LT     0002  0001\n"
                     "0017 >  none GUARDT 0016  #1\n"
                     "0018    bool LE     0002  0000\n"
                     "0019 >  none GUARDT 0018  #1\n"
                     "0020 >  none EXIT    #2\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=1 frames=[] []\n"
                     "SNAP #2 ir=0020 pc=2 frames=[] [1=0002]\n"),
               "0000    int  KINT   10\n"
               "0001    int  KINT   20\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004    bool LT     0002  0003\n"
               "0005 >  none GUARDT 0004  #1\n"
               "0006    bool LE     0002  0003\n"
               "0007    bool GE     0002  0003\n"
               "0008    bool GT     0003  0002\n"
               "0009    bool EQ     0003  0002\n"
               "0010    bool LT     0002  0000\n"
               "0011 >  none GUARDT 0010  #1\n"
               "0012    bool LT     0002  0001\n"
               "0013    bool LE     0002  0000\n"
               "0014 >  none EXIT    #2\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=1 frames=[] []\n"
               "SNAP #2 ir=0014 pc=2 frames=[] [1=0002]\n");
}

// Facts about one pair combine: i <= n and i != n give i < n. A guard under
// NOT is the guard of the opposite sense.
TEST(GuardElim, FactsAboutOnePairCombineAndNotIsSeenThrough) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000 >  int  SLOAD  1  0  #0\n"
                     "0001 >  int  SLOAD  2  0  #0\n"
                     "0002    bool LE     0000  0001\n"
                     "0003 >  none GUARDT 0002  #1\n"
                     "0004    bool EQ     0000  0001\n"
                     "0005    bool NOT    0004\n"
                     "0006 >  none GUARDT 0005  #1\n"
                     "0007    bool LT     0000  0001\n"
                     "0008 >  none GUARDT 0007  #1\n"
                     "0009    bool NOT    0007\n"
                     "0010 >  none GUARDF 0009  #1\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0003 pc=1 frames=[] []\n"),
               "0000 >  int  SLOAD  1  0  #0\n"
               "0001 >  int  SLOAD  2  0  #0\n"
               "0002    bool LE     0000  0001\n"
               "0003 >  none GUARDT 0002  #1\n"
               "0004    bool EQ     0000  0001\n"
               "0005    bool NOT    0004\n"
               "0006 >  none GUARDT 0005  #1\n"
               "0007    bool LT     0000  0001\n"
               "0008    bool NOT    0007\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0003 pc=1 frames=[] []\n");
}

// A weaker guard implies nothing stronger: i <= n is not i < n, i < 10 is
// not i < 9. On floats, !(a >= b) is not a < b (NaN): only ints compare by
// the table.
TEST(GuardElim, WeakerGuardsAndFloatComparisonsImplyNothingStronger) {
  GuardElimPass guards;
  const char* in =
      "0000    int  KINT   10\n"
      "0001    int  KINT   9\n"
      "0002 >  int  SLOAD  1  0  #0\n"
      "0003 >  int  SLOAD  2  0  #0\n"
      "0004 >  flt  SLOAD  3  0  #0\n"
      "0005 >  flt  SLOAD  4  0  #0\n"
      "0006    bool LE     0002  0003\n"
      "0007 >  none GUARDT 0006  #1\n"
      "0008    bool LT     0002  0003\n"
      "0009 >  none GUARDT 0008  #1\n"
      "0010    bool LT     0002  0000\n"
      "0011 >  none GUARDT 0010  #1\n"
      "0012    bool LT     0002  0001\n"
      "0013 >  none GUARDT 0012  #1\n"
      "0014    bool GE     0004  0005\n"
      "0015 >  none GUARDF 0014  #1\n"
      "0016    bool LT     0004  0005\n"
      "0017 >  none GUARDT 0016  #1\n"
      "SNAP #0 ir=0002 pc=0 frames=[] []\n"
      "SNAP #1 ir=0007 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, in), in);
}

// while i < len(l) { s += l[i]; i += 1 } with i >= 0 on entry: i = PHI(i,
// i + 1) stays >= 0 in the body (the loop guard i < len(l) keeps i + 1 from
// wrapping), so with i < len(l) established, the bounds check of l[i] goes.
TEST(GuardElim, BoundsCheckOfACountingLoopIsRemoved) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   0\n"
                     "0001    int  KINT   1\n"
                     "0002 >  list SLOAD  1  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004 >  flt  SLOAD  3  0  #0\n"
                     "0005    int  LLEN   0002\n"
                     "0006    bool GE     0003  0000\n"
                     "0007 >  none GUARDT 0006  #0\n"
                     "0008    none LOOP\n"
                     "0009    bool LT     0003  0005\n"
                     "0010 >  none GUARDT 0009  #1\n"
                     "0011    bool ULT    0003  0005\n"
                     "0012 >  none GUARDT 0011  #2\n"
                     "0013 >  flt  LLOAD  0002  0003  #2\n"
                     "0014    flt  FADD   0004  0013\n"
                     "0015    int  ADD    0003  0001\n"
                     "0016    flt  PHI    0004  0014\n"
                     "0017    int  PHI    0003  0015\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0010 pc=1 frames=[] [2=0003 3=0004]\n"
                     "SNAP #2 ir=0012 pc=2 frames=[] [2=0003 3=0004]\n"),
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002 >  list SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004 >  flt  SLOAD  3  0  #0\n"
               "0005    int  LLEN   0002\n"
               "0006    bool GE     0003  0000\n"
               "0007 >  none GUARDT 0006  #0\n"
               "0008    none LOOP\n"
               "0009    bool LT     0003  0005\n"
               "0010 >  none GUARDT 0009  #1\n"
               "0011    bool ULT    0003  0005\n"
               // The element load keeps its snapshot; #2 now starts at it.
               "0012 >  flt  LLOAD  0002  0003  #2\n"
               "0013    flt  FADD   0004  0012\n"
               "0014    int  ADD    0003  0001\n"
               "0015    flt  PHI    0004  0013\n"
               "0016    int  PHI    0003  0014\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0010 pc=1 frames=[] [2=0003 3=0004]\n"
               "SNAP #2 ir=0012 pc=2 frames=[] [2=0003 3=0004]\n");
}

// for i in range(100) over a list known to hold at least 100 elements,
// entered with 0 <= i < 100: in the body 0 <= i <= 99 (the guard i + 1 < 100
// bounds the carried value), and 99 < 100 <= len(l), so the bounds check
// goes on ranges alone.
TEST(GuardElim, BoundsCheckDecidedByRangesAlone) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   1\n"
                     "0001    int  KINT   100\n"
                     "0002 >  list SLOAD  1  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004    int  LLEN   0002\n"
                     "0005    bool LE     0001  0004\n"
                     "0006 >  none GUARDT 0005  #0\n"
                     "0007    bool ULT    0003  0001\n"
                     "0008 >  none GUARDT 0007  #0\n"
                     "0009    none LOOP\n"
                     "0010    bool ULT    0003  0004\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012 >  int  LLOAD  0002  0003  #1\n"
                     "0013    int  ADD    0003  0000\n"
                     "0014    bool LT     0013  0001\n"
                     "0015 >  none GUARDT 0014  #2\n"
                     "0016    int  PHI    0003  0013\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0011 pc=1 frames=[] [2=0003]\n"
                     "SNAP #2 ir=0015 pc=2 frames=[] [2=0013]\n"),
               "0000    int  KINT   1\n"
               "0001    int  KINT   100\n"
               "0002 >  list SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004    int  LLEN   0002\n"
               "0005    bool LE     0001  0004\n"
               "0006 >  none GUARDT 0005  #0\n"
               "0007    bool ULT    0003  0001\n"
               "0008 >  none GUARDT 0007  #0\n"
               "0009    none LOOP\n"
               "0010    bool ULT    0003  0004\n"
               "0011 >  int  LLOAD  0002  0003  #1\n"
               "0012    int  ADD    0003  0000\n"
               "0013    bool LT     0012  0001\n"
               "0014 >  none GUARDT 0013  #2\n"
               "0015    int  PHI    0003  0012\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0011 pc=1 frames=[] [2=0003]\n"
               "SNAP #2 ir=0014 pc=2 frames=[] [2=0012]\n");
}

// for x in l, as ITERLOOP records it: the next index i + 1 is guarded
// against the length, then bounds-checked. Entry 0 <= i < len(l); in the
// body the guard on i + 1 bounds the carried value, so i >= 0, i + 1 >= 1
// and i + 1 < len(l): the bounds check goes.
TEST(GuardElim, BoundsCheckOfAnIncrementedIndexIsRemoved) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   1\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  int  SLOAD  2  0  #0\n"
                     "0003    int  LLEN   0001\n"
                     "0004    bool ULT    0002  0003\n"
                     "0005 >  none GUARDT 0004  #0\n"
                     "0006    none LOOP\n"
                     "0007    int  ADD    0002  0000\n"
                     "0008    bool LT     0007  0003\n"
                     "0009 >  none GUARDT 0008  #1\n"
                     "0010    bool ULT    0007  0003\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012 >  int  LLOAD  0001  0007  #1\n"
                     "0013    int  PHI    0002  0007\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0009 pc=1 frames=[] []\n"),
               "0000    int  KINT   1\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003    int  LLEN   0001\n"
               "0004    bool ULT    0002  0003\n"
               "0005 >  none GUARDT 0004  #0\n"
               "0006    none LOOP\n"
               "0007    int  ADD    0002  0000\n"
               "0008    bool LT     0007  0003\n"
               "0009 >  none GUARDT 0008  #1\n"
               "0010    bool ULT    0007  0003\n"
               "0011 >  int  LLOAD  0001  0007  #1\n"
               "0012    int  PHI    0002  0007\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0009 pc=1 frames=[] []\n");
}

// x in [0, 99] (bounds-checked against 100): 3x + 3 in [3, 300] is > 0 and
// != 0, -x <= 0, 100 - x > 0; a length is never negative and a tensor
// dimension is >= 0. Whether 3x + 3 < 100 is not decided. Any y % 3 (floored)
// is in [0, 2].
TEST(GuardElim, ComparisonsDecidedByConstantRangesAreRemoved) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   0\n"
                     "0001    int  KINT   3\n"
                     "0002    int  KINT   100\n"
                     "0003 >  int  SLOAD  1  0  #0\n"
                     "0004 >  list SLOAD  2  0  #0\n"
                     "0005 >  tens SLOAD  3  0  #0\n"
                     "0006    bool ULT    0003  0002\n"
                     "0007 >  none GUARDT 0006  #1\n"
                     "0008    int  MUL    0003  0001\n"
                     "0009    int  ADD    0008  0001\n"
                     "0010    bool GT     0009  0000\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012    bool EQ     0009  0000\n"
                     "0013 >  none GUARDF 0012  #1\n"
                     "0014    int  NEG    0003\n"
                     "0015    bool LE     0014  0000\n"
                     "0016 >  none GUARDT 0015  #1\n"
                     "0017    int  SUB    0002  0003\n"
                     "0018    bool LT     0000  0017\n"
                     "0019 >  none GUARDT 0018  #1\n"
                     "0020    int  LLEN   0004\n"
                     "0021    bool LT     0020  0000\n"
                     "0022 >  none GUARDF 0021  #1\n"
                     "0023    int  TDIM   0005  0\n"
                     "0024    bool GE     0023  0000\n"
                     "0025 >  none GUARDT 0024  #1\n"
                     "0026    bool LT     0009  0002\n"
                     "0027 >  none GUARDT 0026  #1\n"
                     "0028 >  int  SLOAD  4  0  #0\n"
                     "0029    int  IMOD   0028  0001\n"
                     "0030    bool LT     0029  0001\n"
                     "0031 >  none GUARDT 0030  #1\n"
                     "0032    bool LT     0029  0000\n"
                     "0033 >  none GUARDF 0032  #1\n"
                     "SNAP #0 ir=0003 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0007 pc=1 frames=[] []\n"),
               "0000    int  KINT   0\n"
               "0001    int  KINT   3\n"
               "0002    int  KINT   100\n"
               "0003 >  int  SLOAD  1  0  #0\n"
               "0004 >  list SLOAD  2  0  #0\n"
               "0005 >  tens SLOAD  3  0  #0\n"
               "0006    bool ULT    0003  0002\n"
               "0007 >  none GUARDT 0006  #1\n"
               "0008    int  MUL    0003  0001\n"
               "0009    int  ADD    0008  0001\n"
               "0010    bool GT     0009  0000\n"
               "0011    bool EQ     0009  0000\n"
               "0012    int  NEG    0003\n"
               "0013    bool LE     0012  0000\n"
               "0014    int  SUB    0002  0003\n"
               "0015    bool LT     0000  0014\n"
               "0016    int  LLEN   0004\n"
               "0017    bool LT     0016  0000\n"
               "0018    int  TDIM   0005  0\n"
               "0019    bool GE     0018  0000\n"
               "0020    bool LT     0009  0002\n"
               "0021 >  none GUARDT 0020  #1\n"
               "0022 >  int  SLOAD  4  0  #0\n"
               "0023    int  IMOD   0022  0001\n"
               "0024    bool LT     0023  0001\n"
               "0025    bool LT     0023  0000\n"
               "SNAP #0 ir=0003 pc=0 frames=[] []\n"
               "SNAP #1 ir=0007 pc=1 frames=[] []\n");
}

// A guard that always fails stays (the trace always exits there).
TEST(GuardElim, GuardThatAlwaysFailsStays) {
  GuardElimPass guards;
  const char* in =
      "0000    int  KINT   0\n"
      "0001 >  list SLOAD  1  0  #0\n"
      "0002    int  LLEN   0001\n"
      "0003    bool LT     0002  0000\n"
      "0004 >  none GUARDT 0003  #1\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, in), in);
}

// --- where it must not apply

// i < len(l) without 0 <= i: i may be negative, and ULT(i, len) fails for
// it. In a loop the same: the index's entry value has no lower bound.
TEST(GuardElim, IndexThatMayBeNegativeKeepsItsBoundsCheck) {
  GuardElimPass guards;
  const char* linear =
      "0000 >  list SLOAD  1  0  #0\n"
      "0001 >  int  SLOAD  2  0  #0\n"
      "0002    int  LLEN   0000\n"
      "0003    bool LT     0001  0002\n"
      "0004 >  none GUARDT 0003  #1\n"
      "0005    bool ULT    0001  0002\n"
      "0006 >  none GUARDT 0005  #2\n"
      "0007 >  int  LLOAD  0000  0001  #2\n"
      "0008 >  none EXIT    #3\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=1 frames=[] []\n"
      "SNAP #2 ir=0006 pc=2 frames=[] []\n"
      "SNAP #3 ir=0008 pc=3 frames=[] [3=0007]\n";
  EXPECT_IR_EQ(apply(guards, linear), linear);
  const char* loop =
      "0000    int  KINT   1\n"
      "0001 >  list SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003    int  LLEN   0001\n"
      "0004    none LOOP\n"
      "0005    bool LT     0002  0003\n"
      "0006 >  none GUARDT 0005  #1\n"
      "0007    bool ULT    0002  0003\n"
      "0008 >  none GUARDT 0007  #2\n"
      "0009 >  int  LLOAD  0001  0002  #2\n"
      "0010    int  ADD    0002  0000\n"
      "0011    int  PHI    0002  0010\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0006 pc=1 frames=[] []\n"
      "SNAP #2 ir=0008 pc=2 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, loop), loop);
}

// i = PHI(i, i + step) with i >= 0 on entry and a loop guard i < bound. With
// step 1 and bound len(l), i >= 0 holds in the body and the body's guard
// i >= 0 goes. It stays when the step is unknown (a register), negative (i
// counts down past 0), or 2 against a bound the pass knows nothing about
// (i < n, n a register, allows i = INT64_MAX - 1, and i + 2 wraps).
std::string counting_loop(const char* step, const char* step_ref, const char* bound_ref) {
  return std::string("0000    int  KINT   0\n") + "0001    int  KINT   " + step + "\n" +
         "0002 >  list SLOAD  1  0  #0\n"
         "0003 >  int  SLOAD  2  0  #0\n"
         "0004 >  int  SLOAD  3  0  #0\n"
         "0005 >  int  SLOAD  4  0  #0\n"
         "0006    int  LLEN   0002\n"
         "0007    bool GE     0003  0000\n"
         "0008 >  none GUARDT 0007  #0\n"
         "0009    none LOOP\n"
         "0010    bool LT     0003  " + bound_ref + "\n" +
         "0011 >  none GUARDT 0010  #1\n"
         "0012    bool GE     0003  0000\n"
         "0013 >  none GUARDT 0012  #1\n"
         "0014    int  ADD    0003  " + step_ref + "\n" +
         "0015    int  PHI    0003  0014\n"
         "SNAP #0 ir=0002 pc=0 frames=[] []\n"
         "SNAP #1 ir=0011 pc=1 frames=[] []\n";
}

TEST(GuardElim, LoopCarriedValueWithUnknownNegativeOrWrappingStepIsNotBounded) {
  GuardElimPass guards;
  EXPECT_IR_EQ(passtest::apply(guards, counting_loop("1", "0001", "0006")),
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002 >  list SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004 >  int  SLOAD  3  0  #0\n"
               "0005 >  int  SLOAD  4  0  #0\n"
               "0006    int  LLEN   0002\n"
               "0007    bool GE     0003  0000\n"
               "0008 >  none GUARDT 0007  #0\n"
               "0009    none LOOP\n"
               "0010    bool LT     0003  0006\n"
               "0011 >  none GUARDT 0010  #1\n"
               "0012    bool GE     0003  0000\n"
               "0013    int  ADD    0003  0001\n"
               "0014    int  PHI    0003  0013\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0011 pc=1 frames=[] []\n");
  const std::string unknown_step = counting_loop("1", "0004", "0006");
  const std::string negative_step = counting_loop("-1", "0001", "0006");
  const std::string step_two_unknown_bound = counting_loop("2", "0001", "0005");
  EXPECT_IR_EQ(passtest::apply(guards, unknown_step), unknown_step);
  EXPECT_IR_EQ(passtest::apply(guards, negative_step), negative_step);
  EXPECT_IR_EQ(passtest::apply(guards, step_two_unknown_bound), step_two_unknown_bound);
}

// Near INT64_MAX an ADD wraps: x >= INT64_MAX - 9 makes x + 1 any value,
// so x + 1 > 0 is not decided (it fails for x = INT64_MAX). In a loop: i
// entering as INT64_MAX passes i + 1 < 100 (i + 1 wraps to INT64_MIN), and
// the next iteration has i < 0, so the body's i >= 0 stays.
TEST(GuardElim, WrappingAddNearInt64MaxDecidesNothing) {
  GuardElimPass guards;
  const char* in =
      "0000    int  KINT   0\n"
      "0001    int  KINT   1\n"
      "0002    int  KINT   9223372036854775798\n"
      "0003 >  int  SLOAD  1  0  #0\n"
      "0004    bool GE     0003  0002\n"
      "0005 >  none GUARDT 0004  #1\n"
      "0006    int  ADD    0003  0001\n"
      "0007    bool GT     0006  0000\n"
      "0008 >  none GUARDT 0007  #1\n"
      "SNAP #0 ir=0003 pc=0 frames=[] []\n"
      "SNAP #1 ir=0005 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, in), in);
  const char* loop =
      "0000    int  KINT   0\n"
      "0001    int  KINT   1\n"
      "0002    int  KINT   100\n"
      "0003 >  int  SLOAD  1  0  #0\n"
      "0004    bool GE     0003  0000\n"
      "0005 >  none GUARDT 0004  #0\n"
      "0006    none LOOP\n"
      "0007    int  ADD    0003  0001\n"
      "0008    bool LT     0007  0002\n"
      "0009 >  none GUARDT 0008  #1\n"
      "0010    bool GE     0003  0000\n"
      "0011 >  none GUARDT 0010  #1\n"
      "0012    int  PHI    0003  0007\n"
      "SNAP #0 ir=0003 pc=0 frames=[] []\n"
      "SNAP #1 ir=0009 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, loop), loop);
}

// A guard in the loop body says nothing about the preamble before it: the
// preamble's bounds check on n stays although the body's guards 0 <= n and
// n < len(l) imply it. The other way round, what the preamble established
// about invariant values holds in the body: both body guards go.
TEST(GuardElim, GuardsInTheBodyAreNotUsedInThePreamble) {
  GuardElimPass guards;
  EXPECT_IR_EQ(apply(guards,
                     "0000    int  KINT   0\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  int  SLOAD  2  0  #0\n"
                     "0003 >  int  SLOAD  3  0  #0\n"
                     "0004    int  LLEN   0001\n"
                     "0005    bool ULT    0002  0004\n"
                     "0006 >  none GUARDT 0005  #0\n"
                     "0007    none LOOP\n"
                     "0008    bool LE     0000  0002\n"
                     "0009 >  none GUARDT 0008  #1\n"
                     "0010    bool LT     0002  0004\n"
                     "0011 >  none GUARDT 0010  #1\n"
                     "0012 >  int  LLOAD  0001  0002  #1\n"
                     "0013    int  ADD    0003  0012\n"
                     "0014    int  PHI    0003  0013\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0009 pc=1 frames=[] []\n"),
               "0000    int  KINT   0\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003 >  int  SLOAD  3  0  #0\n"
               "0004    int  LLEN   0001\n"
               "0005    bool ULT    0002  0004\n"
               "0006 >  none GUARDT 0005  #0\n"
               "0007    none LOOP\n"
               "0008    bool LE     0000  0002\n"
               "0009    bool LT     0002  0004\n"
               "0010 >  int  LLOAD  0001  0002  #1\n"
               "0011    int  ADD    0003  0010\n"
               "0012    int  PHI    0003  0011\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0009 pc=1 frames=[] []\n");
}

// What the preamble established about a loop-carried value held for its
// entry value only: in the body the same ref names the PHI. The bounds check
// of i before LOOP does not remove the body's bounds check of i.
TEST(GuardElim, PreambleFactsAboutLoopCarriedValuesDoNotHoldInTheBody) {
  GuardElimPass guards;
  const char* in =
      "0000    int  KINT   1\n"
      "0001 >  list SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003    int  LLEN   0001\n"
      "0004    bool ULT    0002  0003\n"
      "0005 >  none GUARDT 0004  #0\n"
      "0006    none LOOP\n"
      "0007    bool ULT    0002  0003\n"
      "0008 >  none GUARDT 0007  #1\n"
      "0009 >  int  LLOAD  0001  0002  #1\n"
      "0010    int  ADD    0002  0000\n"
      "0011    int  PHI    0002  0010\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0008 pc=1 frames=[] []\n";
  EXPECT_IR_EQ(apply(guards, in), in);
}

TEST(GuardElim, PhiOutsideALoopBodyIsAnError) {
  GuardElimPass guards;
  TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    int  PHI    0000  0000\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  EXPECT_THROW(guards.run(ir), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::jit
