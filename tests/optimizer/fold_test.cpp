// FoldPass, IR in / IR out: the rule table (optimizer/fold_rules.def) folds
// constants and simplifies algebra, and leaves alone what is not exact.
#include <gtest/gtest.h>

#include "optimizer/fold.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

TEST(Fold, ConstantsFoldWithTheInterpretersSemantics) {
  FoldPass fold;
  // 9223372036854775807 + 1 wraps; 7 != 0 is true (the divisor guard of x % 7).
  EXPECT_IR_EQ(apply(fold,
                     "0000    int  KINT   9223372036854775807\n"
                     "0001    int  KINT   1\n"
                     "0002    int  KINT   7\n"
                     "0003    int  KINT   0\n"
                     "0004    int  ADD    0000  0001\n"
                     "0005    bool NE     0002  0003\n"
                     "0006 >  none GUARDT 0005  #0\n"
                     "0007    flt  CONV   0002\n"
                     "0008    flt  FMUL   0007  0007\n"
                     "0009 >  none EXIT    #1\n"
                     "SNAP #0 ir=0006 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0009 pc=2 frames=[] [1=0004 2=0008]\n"),
               "0000    int  KINT   -9223372036854775808\n"
               "0001    bool KBOOL  true\n"
               "0002    flt  KFLOAT 49.0\n"
               "0003 >  none GUARDT 0001  #0\n"
               "0004 >  none EXIT    #1\n"
               "SNAP #0 ir=0003 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] [1=0000 2=0002]\n");
}

TEST(Fold, MinAndMaxOfIntConstants) {
  FoldPass fold;
  EXPECT_IR_EQ(apply(fold,
                     "0000    int  KINT   -3\n"
                     "0001    int  KINT   5\n"
                     "0002    int  IMIN   0000  0001\n"
                     "0003    int  IMAX   0000  0001\n"
                     "0004 >  none EXIT    #0\n"
                     "SNAP #0 ir=0004 pc=2 frames=[] [1=0002 2=0003]\n"),
               "0000    int  KINT   -3\n"
               "0001    int  KINT   5\n"
               "0002 >  none EXIT    #0\n"
               "SNAP #0 ir=0002 pc=2 frames=[] [1=0000 2=0001]\n");
}

TEST(Fold, AlgebraicIdentities) {
  FoldPass fold;
  EXPECT_IR_EQ(apply(fold,
                     "0000    int  KINT   0\n"
                     "0001    int  KINT   1\n"
                     "0002    flt  KFLOAT 1.0\n"
                     "0003 >  int  SLOAD  0  0  #0\n"
                     "0004 >  flt  SLOAD  1  0  #0\n"
                     "0005    int  ADD    0003  0000\n"
                     "0006    int  MUL    0001  0005\n"
                     "0007    int  SUB    0006  0006\n"
                     "0008    int  NEG    0003\n"
                     "0009    int  NEG    0008\n"
                     "0010    flt  FMUL   0004  0002\n"
                     "0011    bool LE     0009  0009\n"
                     "0012 >  none EXIT    #1\n"
                     "SNAP #0 ir=0003 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0012 pc=2 frames=[] [2=0006 3=0007 4=0009 5=0010 6=0011]\n"),
               "0000    int  KINT   0\n"
               "0001    bool KBOOL  true\n"
               "0002 >  int  SLOAD  0  0  #0\n"
               "0003 >  flt  SLOAD  1  0  #0\n"
               "0004    int  NEG    0002\n"  // now unused: DCE's job, not folding's
               "0005 >  none EXIT    #1\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=2 frames=[] [2=0002 3=0000 4=0002 5=0003 6=0001]\n");
}

// Where folding must not apply: x + 0.0 (x may be -0.0), x == x on floats
// (x may be NaN), integer floored division of constants, a float division
// by a zero constant.
TEST(Fold, InexactRulesAreNotApplied) {
  FoldPass fold;
  const char* in =
      "0000    flt  KFLOAT 0.0\n"
      "0001    int  KINT   7\n"
      "0002    int  KINT   -2\n"
      "0003 >  flt  SLOAD  0  0  #0\n"
      "0004    flt  FADD   0003  0000\n"
      "0005    bool EQ     0003  0003\n"
      "0006    int  IDIV   0001  0002\n"
      "0007    flt  FDIV   0003  0000\n"
      "0008 >  none EXIT    #1\n"
      "SNAP #0 ir=0003 pc=0 frames=[] []\n"
      "SNAP #1 ir=0008 pc=2 frames=[] [1=0004 2=0005 3=0006 4=0007]\n";
  EXPECT_IR_EQ(apply(fold, in), in);
}

// F32RND of a constant is the constant rounded to f32; of an F32RND, the
// inner one (rounding twice rounds once); of anything else, itself.
TEST(Fold, F32RoundingOfConstantsAndOfRoundedValues) {
  FoldPass fold;
  EXPECT_IR_EQ(apply(fold,
                     "0000    flt  KFLOAT 0.1\n"
                     "0001    flt  KFLOAT 1e+300\n"
                     "0002 >  flt  SLOAD  0  0  #0\n"
                     "0003    flt  F32RND 0000\n"
                     "0004    flt  F32RND 0001\n"
                     "0005    flt  F32RND 0002\n"
                     "0006    flt  F32RND 0005\n"
                     "0007 >  none EXIT    #1\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0007 pc=2 frames=[] [1=0003 2=0004 3=0006]\n"),
               "0000    flt  KFLOAT 0.10000000149011612\n"
               "0001    flt  KFLOAT inf\n"
               "0002 >  flt  SLOAD  0  0  #0\n"
               "0003    flt  F32RND 0002\n"
               "0004 >  none EXIT    #1\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] [1=0000 2=0001 3=0003]\n");
}

}  // namespace
}  // namespace tessera::jit
