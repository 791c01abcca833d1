// DcePass, IR in / IR out: unused values go; guards, side effects and
// values a snapshot needs stay.
#include <gtest/gtest.h>

#include "optimizer/dce.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

TEST(Dce, UnusedValuesAndConstantsAreRemoved) {
  DcePass dce;
  EXPECT_IR_EQ(apply(dce,
                     "0000    int  KINT   7\n"
                     "0001    flt  KFLOAT 2.5\n"
                     "0002 >  list SLOAD  1  0  #0\n"
                     "0003 >  int  SLOAD  2  0  #0\n"
                     "0004    int  LLEN   0002\n"
                     "0005    int  MUL    0003  0000\n"
                     "0006    int  ADD    0005  0004\n"
                     "0007    flt  CONV   0003\n"
                     "0008 >  none EXIT    #1\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0008 pc=3 frames=[] [4=0005]\n"),
               "0000    int  KINT   7\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  int  SLOAD  2  0  #0\n"
               "0003    int  MUL    0002  0000\n"
               "0004 >  none EXIT    #1\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=3 frames=[] [4=0003]\n");
}

// Nothing here is dead: a guard whose result nobody uses still checks, a
// store is a side effect, and a value only a snapshot refers to (even the
// snapshot of a guard an earlier pass removed) is written back at that exit.
TEST(Dce, GuardsStoresAndSnapshotValuesStay) {
  DcePass dce;
  const char* in =
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001 >  int  GLOAD  3  #0\n"
      "0002    int  NEG    0000\n"
      "0003    none GSTORE 2  0000\n"
      "0004    int  ADD    0000  0000\n"
      "0005 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] [5=0002]\n"
      "SNAP #2 ir=0005 pc=4 frames=[] [6=0004]\n";
  EXPECT_IR_EQ(apply(dce, in), in);
}

}  // namespace
}  // namespace tessera::jit
