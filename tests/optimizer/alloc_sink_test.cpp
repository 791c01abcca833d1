// AllocSinkPass, IR in / IR out: a list literal the trace only reads becomes
// VNEWLIST (no code), its length a constant and its element loads the
// elements; exits after it name it so that they build it. And where it must
// stay allocated.
#include <gtest/gtest.h>

#include <string>

#include "optimizer/alloc_sink.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

// p = [a, b]; x = len(p) + p[1]; leave if x < a. Linear (a side trace).
const char* kLinear =
    "0000    int  KINT   1\n"
    "0001 >  int  SLOAD  0  0  #0\n"
    "0002 >  int  SLOAD  1  0  #0\n"
    "0003    none CARG   0001  0002\n"
    "0004    none CALL   0003  0  #1\n"
    "0005 >  list SLOAD  3  1  #2\n"
    "0006    int  LLEN   0005\n"
    "0007 >  int  LLOAD  0005  0000  #3\n"
    "0008    int  ADD    0006  0007\n"
    "0009    bool LT     0008  0001\n"
    "0010 >  none GUARDF 0009  #4\n"
    "0011 >  none EXIT    #5\n"
    "SNAP #0 ir=0001 pc=0 frames=[] []\n"
    "SNAP #1 ir=0003 pc=2 frames=[] []\n"
    "SNAP #2 ir=0005 pc=3 frames=[] []\n"
    "SNAP #3 ir=0007 pc=4 frames=[] []\n"
    "SNAP #4 ir=0010 pc=6 frames=[] [4=0008]\n"
    "SNAP #5 ir=0011 pc=7 frames=[] [4=0008]\n"
    "CALL #0 newlist 0 newlist 0x0 dest=3\n";

TEST(AllocSink, ReadOnlyListBecomesItsElementsAndExitsNameIt) {
  AllocSinkPass sink;
  // LLEN is 2, p[1] is b; the reload goes; exits after the allocation write
  // register 3 from the VNEWLIST (so does the reload's snapshot #2, unused
  // now: DeferredWrites names every snapshot after the write).
  EXPECT_IR_EQ(apply(sink, kLinear),
               "0000    int  KINT   2\n"
               "0001 >  int  SLOAD  0  0  #0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003    none CARG   0001  0002\n"
               "0004    list VNEWLIST 0003  2\n"
               "0005    int  ADD    0000  0002\n"
               "0006    bool LT     0005  0001\n"
               "0007 >  none GUARDF 0006  #4\n"
               "0008 >  none EXIT    #5\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0003 pc=2 frames=[] []\n"
               "SNAP #2 ir=0005 pc=3 frames=[] [3=0004]\n"
               "SNAP #3 ir=0005 pc=4 frames=[] [3=0004]\n"
               "SNAP #4 ir=0007 pc=6 frames=[] [3=0004 4=0005]\n"
               "SNAP #5 ir=0008 pc=7 frames=[] [3=0004 4=0005]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n");
}

TEST(AllocSink, ListPassedToACallStaysAllocated) {
  AllocSinkPass sink;
  const char* in =
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none CARG   0000  0000\n"
      "0002    none CALL   0001  0  #1\n"
      "0003 >  list SLOAD  3  1  #2\n"
      "0004    none CALL   0003  1  #3\n"
      "0005 >  none EXIT    #4\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=2 frames=[] []\n"
      "SNAP #2 ir=0003 pc=3 frames=[] []\n"
      "SNAP #3 ir=0004 pc=4 frames=[] []\n"
      "SNAP #4 ir=0005 pc=5 frames=[] []\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 print 0x0\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

TEST(AllocSink, LoadAtAVariableIndexKeepsTheAllocation) {
  AllocSinkPass sink;
  const char* in =
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none CARG   0000  0000\n"
      "0002    none CALL   0001  0  #1\n"
      "0003 >  list SLOAD  3  1  #2\n"
      "0004 >  int  LLOAD  0003  0000  #3\n"
      "0005 >  none EXIT    #4\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=2 frames=[] []\n"
      "SNAP #2 ir=0003 pc=3 frames=[] []\n"
      "SNAP #3 ir=0004 pc=4 frames=[] []\n"
      "SNAP #4 ir=0005 pc=5 frames=[] [4=0004]\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

// In a loop body, a guard before the allocation whose exit may need the
// register (the previous iteration's list: liveness unknown here) keeps it.
TEST(AllocSink, GuardBeforeTheAllocationThatMayReadTheRegisterKeepsIt) {
  AllocSinkPass sink;
  const char* in =
      "0000    int  KINT   0\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none LOOP\n"
      "0003    bool LT     0001  0000\n"
      "0004 >  none GUARDF 0003  #1\n"
      "0005    none CARG   0001  0001\n"
      "0006    none CALL   0005  0  #2\n"
      "0007 >  list SLOAD  3  1  #3\n"
      "0008 >  int  LLOAD  0007  0000  #4\n"
      "0009    int  ADD    0001  0008\n"
      "0010    int  PHI    0001  0009\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=1 frames=[] [0=0001]\n"
      "SNAP #2 ir=0005 pc=2 frames=[] [0=0001]\n"
      "SNAP #3 ir=0007 pc=3 frames=[] [0=0001]\n"
      "SNAP #4 ir=0008 pc=4 frames=[] [0=0001]\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
  // The same loop where that exit writes the register itself is still kept:
  // the loop header, where T1's tier-up exit resumes the interpreter after
  // an iteration, may read the register too (liveness unknown here). With
  // the bytecode's liveness the list's temporary is dead there, and sinks
  // (AllocSinkInJit.ReadOnlyListIsNotAllocatedOnTheTrace).
  std::string written = in;
  written.replace(written.find("SNAP #1 ir=0004 pc=1 frames=[] [0=0001]"), 39,
                  "SNAP #1 ir=0004 pc=1 frames=[] [0=0001 3=0001]");
  EXPECT_IR_EQ(passtest::apply(sink, written), print_ir(parse_ir(written)));
}

// return [n] + f(n - 1): the list waits in its register while the recursive
// call runs in a pushed frame, which the interpreter or another trace
// returns to without an exit of this trace. It must exist.
TEST(AllocSink, FramePushAfterTheAllocationKeepsIt) {
  AllocSinkPass sink;
  const char* in =
      "0000    func KOBJ   0x1000\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none CALL   0001  0  #1\n"
      "0003 >  list SLOAD  2  1  #2\n"
      "0004    none SSTORE 4  0001\n"
      "0005 >  none FPUSH  0000  3  #3\n"
      "0006 >  none EXIT    #4\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] []\n"
      "SNAP #2 ir=0003 pc=3 frames=[] []\n"
      "SNAP #3 ir=0005 pc=5 frames=[] [3=0000]\n"
      "SNAP #4 ir=0006 pc=0 base=f frames=[] []\n"
      "CALL #0 newlist 0 newlist 0x0 dest=2\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

TEST(AllocSink, AllocationBeforeTheLoopStays) {
  AllocSinkPass sink;
  const char* in =
      "0000    int  KINT   0\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none CARG   0001  0001\n"
      "0003    none CALL   0002  0  #1\n"
      "0004 >  list SLOAD  3  1  #2\n"
      "0005    none LOOP\n"
      "0006 >  int  LLOAD  0004  0000  #3\n"
      "0007    int  ADD    0001  0006\n"
      "0008    int  PHI    0001  0007\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "SNAP #2 ir=0004 pc=2 frames=[] []\n"
      "SNAP #3 ir=0006 pc=3 frames=[] [0=0001]\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

}  // namespace
}  // namespace tessera::jit
