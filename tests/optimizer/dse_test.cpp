// DsePass, IR in / IR out: the stores it removes, and the ones it must keep
// (a guard, a helper call, a load that may read the memory, LOOP, an object
// whose owner may go in between, a store that only may alias).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "optimizer/dse.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {


// x[i] = x[i] + 1; x[i] = x[i] + 2 after CSE: the second load became the
// first sum and its bounds check went, so nothing reads the first store.
TEST(Dse, ListStoreOverwrittenAtTheSameElementIsRemoved) {
  DsePass dse;
  EXPECT_IR_EQ(passtest::apply(dse,
                     "0000    int  KINT   1\n"
                     "0001    int  KINT   2\n"
                     "0002 >  list SLOAD  0  0  #0\n"
                     "0003 >  int  SLOAD  1  0  #0\n"
                     "0004 >  int  LLOAD  0002  0003  #1\n"
                     "0005    int  ADD    0004  0000\n"
                     "0006    none LREF   0002  0003\n"
                     "0007    none LSTORE 0006  0005\n"
                     "0008    int  ADD    0005  0001\n"
                     "0009    none LSTORE 0006  0008\n"
                     "0010 >  none EXIT    #2\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=2 frames=[] []\n"
                     "SNAP #2 ir=0010 pc=9 frames=[] []\n"),
               "0000    int  KINT   1\n"
               "0001    int  KINT   2\n"
               "0002 >  list SLOAD  0  0  #0\n"
               "0003 >  int  SLOAD  1  0  #0\n"
               "0004 >  int  LLOAD  0002  0003  #1\n"
               "0005    int  ADD    0004  0000\n"
               "0006    none LREF   0002  0003\n"
               "0007    int  ADD    0005  0001\n"
               "0008    none LSTORE 0006  0007\n"
               "0009 >  none EXIT    #2\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] []\n"
               "SNAP #2 ir=0009 pc=9 frames=[] []\n");
}

// Another global's store, a store through another list ref (which only may
// alias) and a length in between read nothing of the first store.
TEST(Dse, GlobalStoreOverwrittenPastUnrelatedInstructionsIsRemoved) {
  DsePass dse;
  EXPECT_IR_EQ(passtest::apply(dse,
                     "0000 >  int  SLOAD  0  0  #0\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002    none GSTORE 3  0000\n"
                     "0003    none GSTORE 4  0000\n"
                     "0004    none LREF   0001  0000\n"
                     "0005    none LSTORE 0004  0000\n"
                     "0006    int  LLEN   0001\n"
                     "0007    none GSTORE 3  0006\n"
                     "0008 >  none EXIT    #1\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0008 pc=7 frames=[] []\n"),
               "0000 >  int  SLOAD  0  0  #0\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002    none GSTORE 4  0000\n"
               "0003    none LREF   0001  0000\n"
               "0004    none LSTORE 0003  0000\n"
               "0005    int  LLEN   0001\n"
               "0006    none GSTORE 3  0005\n"
               "0007 >  none EXIT    #1\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0007 pc=7 frames=[] []\n");
}

// t[k] = a; x = t[k + 1]; t[k] = b: the load reads another element, so the
// first store is dead. With u[k] (u may be t) in between it is not.
const char* kTensorStores =
    "0000    int  KINT   1\n"
    "0001 >  tens SLOAD  0  0  #0\n"
    "0002 >  tens SLOAD  1  0  #0\n"
    "0003 >  int  SLOAD  2  0  #0\n"
    "0004    int  TIDX   0003  4\n"
    "0005    int  ADD    0003  0000\n"
    "0006    int  TIDX   0005  4\n"
    "0007    none TREF   0001  0004\n"
    "0008    none TSTORE 0007  0003\n"
    "0009    int  TLOAD  %s  %s\n"
    "0010    int  ADD    0009  0000\n"
    "0011    none TSTORE 0007  0010\n"
    "0012 >  none EXIT    #1\n"
    "SNAP #0 ir=0001 pc=0 frames=[] []\n"
    "SNAP #1 ir=0012 pc=5 frames=[] []\n";

std::string tensor_stores(const char* tensor, const char* index) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, kTensorStores, tensor, index);
  return buf;
}

TEST(Dse, TensorStoreOverwrittenPastALoadOfAnotherElementIsRemoved) {
  DsePass dse;
  EXPECT_IR_EQ(passtest::apply(dse, tensor_stores("0001", "0006")),
               "0000    int  KINT   1\n"
               "0001 >  tens SLOAD  0  0  #0\n"
               "0002 >  tens SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004    int  TIDX   0003  4\n"
               "0005    int  ADD    0003  0000\n"
               "0006    int  TIDX   0005  4\n"
               "0007    none TREF   0001  0004\n"
               "0008    int  TLOAD  0001  0006\n"
               "0009    int  ADD    0008  0000\n"
               "0010    none TSTORE 0007  0009\n"
               "0011 >  none EXIT    #1\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0011 pc=5 frames=[] []\n");
}

TEST(Dse, LoadThatMayAliasKeepsTheStore) {
  DsePass dse;
  const std::string same_element = tensor_stores("0001", "0004");
  EXPECT_IR_EQ(passtest::apply(dse, same_element), same_element);
  const std::string maybe_same_tensor = tensor_stores("0002", "0004");
  EXPECT_IR_EQ(passtest::apply(dse, maybe_same_tensor), maybe_same_tensor);
}

// The interpreter may resume at the guard and read x[i]: the first store
// must have happened.
TEST(Dse, GuardBetweenTheStoresKeepsTheFirst) {
  DsePass dse;
  const char* in =
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003    none LREF   0000  0001\n"
      "0004    none LSTORE 0003  0001\n"
      "0005    bool LT     0001  0002\n"
      "0006 >  none GUARDT 0005  #1\n"
      "0007    none LSTORE 0003  0002\n"
      "0008 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0006 pc=3 frames=[] []\n"
      "SNAP #2 ir=0008 pc=5 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(dse, in), in);
}

// A helper may read any list element or global.
TEST(Dse, CallBetweenTheStoresKeepsTheFirst) {
  DsePass dse;
  const char* in =
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none GSTORE 3  0000\n"
      "0002    none CARG   0000  0000\n"
      "0003    none CALL   0002  0  #1\n"
      "0004    none GSTORE 3  0000\n"
      "0005 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0005 pc=4 frames=[] []\n"
      "CALL #0 builtin 0 print 0x0\n";
  EXPECT_IR_EQ(passtest::apply(dse, in), in);
}

// Each iteration's store is a different execution: the one before LOOP is
// not overwritten by the body's.
TEST(Dse, StoresOnBothSidesOfLoopAreKept) {
  DsePass dse;
  const char* in =
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none GSTORE 3  0001\n"
      "0003    none LOOP\n"
      "0004    int  ADD    0001  0000\n"
      "0005    none GSTORE 3  0004\n"
      "0006    int  PHI    0001  0004\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(dse, in), in);
}

// a[i] and a[i + 1] are different elements: neither store overwrites the
// other; and SSTOREs are never removed (exits read the slots).
TEST(Dse, StoresToNeighbouringElementsAndSlotStoresAreKept) {
  DsePass dse;
  const char* in =
      "0000    int  KINT   1\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002 >  int  SLOAD  1  0  #0\n"
      "0003    int  ADD    0002  0000\n"
      "0004    none LREF   0001  0002\n"
      "0005    none LSTORE 0004  0000\n"
      "0006    none LREF   0001  0003\n"
      "0007    none LSTORE 0006  0000\n"
      "0008    none SSTORE 2  0001\n"
      "0009    none SSTORE 2  0001\n"
      "0010 >  none EXIT    #1\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0010 pc=4 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(dse, in), in);
}

// x[i] = s; <slot 2 := y>; x[i] = t: slot 2 may have been the only other
// owner of s, which the first store keeps alive until the second store
// releases it. Without the slot store in between, the first store goes.
TEST(Dse, ObjectStoreIsKeptWhenItsOwnerMayBeReleasedInBetween) {
  DsePass dse;
  const char* in =
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  str  SLOAD  2  0  #0\n"
      "0003 >  str  SLOAD  3  0  #0\n"
      "0004    none LREF   0000  0001\n"
      "0005    none LSTORE 0004  0002\n"
      "0006    none SSTORE 2  0003\n"
      "0007    none LSTORE 0004  0003\n"
      "0008 >  none EXIT    #1\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0008 pc=4 frames=[] []\n";
  EXPECT_IR_EQ(passtest::apply(dse, in), in);

  EXPECT_IR_EQ(passtest::apply(dse,
                     "0000 >  list SLOAD  0  0  #0\n"
                     "0001 >  int  SLOAD  1  0  #0\n"
                     "0002 >  str  SLOAD  2  0  #0\n"
                     "0003 >  str  SLOAD  3  0  #0\n"
                     "0004    none LREF   0000  0001\n"
                     "0005    none LSTORE 0004  0002\n"
                     "0006    none LSTORE 0004  0003\n"
                     "0007 >  none EXIT    #1\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0007 pc=4 frames=[] []\n"),
               "0000 >  list SLOAD  0  0  #0\n"
               "0001 >  int  SLOAD  1  0  #0\n"
               "0002 >  str  SLOAD  2  0  #0\n"
               "0003 >  str  SLOAD  3  0  #0\n"
               "0004    none LREF   0000  0001\n"
               "0005    none LSTORE 0004  0003\n"
               "0006 >  none EXIT    #1\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0006 pc=4 frames=[] []\n");
}

// A scalar store has no owner to lose: the slot store does not keep it.
TEST(Dse, ScalarStoreIsRemovedPastASlotStore) {
  DsePass dse;
  EXPECT_IR_EQ(passtest::apply(dse,
                     "0000 >  int  SLOAD  0  0  #0\n"
                     "0001 >  str  SLOAD  1  0  #0\n"
                     "0002    none GSTORE 3  0000\n"
                     "0003    none SSTORE 2  0001\n"
                     "0004    none GSTORE 3  0000\n"
                     "0005 >  none EXIT    #1\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0005 pc=4 frames=[] []\n"),
               "0000 >  int  SLOAD  0  0  #0\n"
               "0001 >  str  SLOAD  1  0  #0\n"
               "0002    none SSTORE 2  0001\n"
               "0003    none GSTORE 3  0000\n"
               "0004 >  none EXIT    #1\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=4 frames=[] []\n");
}

}  // namespace
}  // namespace tessera::jit
