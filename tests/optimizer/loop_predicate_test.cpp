// LoopPredicatePass, IR in / IR out: the bounds check of a FORLOOP's index
// leaves the body for checks of the loop's entry values before LOOP (exiting
// through snapshot 0); then the cases where it must not apply.
#include <gtest/gtest.h>

#include <string>

#include "optimizer/loop_predicate.h"
#include "tests/optimizer/loop_shapes.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

using passtest::apply;

using passtest::kForLoop;

// The guard on k goes; before LOOP: 0 <= c0 < 2^31, 0 < s < 2^31,
// 0 <= i0 < 2^62, i0 + c0*s < n and k0 < n (unsigned), all at snapshot 0.
TEST(LoopPredicate, BoundsCheckOfTheLoopVariableMovesBeforeTheLoop) {
  LoopPredicatePass pass;
  EXPECT_IR_EQ(apply(pass, kForLoop),
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002    int  KINT   2147483648\n"
               "0003    int  KINT   2147483647\n"
               "0004    int  KINT   4611686018427387904\n"
               "0005 >  list SLOAD  1  0  #0\n"
               "0006 >  int  SLOAD  7  0  #0\n"
               "0007 >  int  SLOAD  5  0  #0\n"
               "0008 >  int  SLOAD  6  0  #0\n"
               "0009 >  int  SLOAD  4  0  #0\n"
               "0010 >  int  SLOAD  3  0  #0\n"
               "0011    int  LLEN   0005\n"
               "0012    bool ULT    0007  0002\n"
               "0013 >  none GUARDT 0012  #0\n"
               "0014    int  SUB    0008  0001\n"
               "0015    bool ULT    0014  0003\n"
               "0016 >  none GUARDT 0015  #0\n"
               "0017    bool ULT    0009  0004\n"
               "0018 >  none GUARDT 0017  #0\n"
               "0019    int  MUL    0007  0008\n"
               "0020    int  ADD    0009  0019\n"
               "0021    bool ULT    0020  0011\n"
               "0022 >  none GUARDT 0021  #0\n"
               "0023    bool ULT    0006  0011\n"
               "0024 >  none GUARDT 0023  #0\n"
               "0025    none LOOP\n"
               "0026    bool ULT    0006  0011\n"
               "0027 >  int  LLOAD  0005  0006  #1\n"
               "0028    int  ADD    0010  0027\n"
               "0029    bool GT     0007  0000\n"
               "0030 >  none GUARDT 0029  #2\n"
               "0031    int  ADD    0009  0008\n"
               "0032    int  SUB    0007  0001\n"
               "0033    int  PHI    0010  0028\n"
               "0034    int  PHI    0009  0031\n"
               "0035    int  PHI    0007  0032\n"
               "0036    int  PHI    0006  0031\n"
               "SNAP #0 ir=0005 pc=20 frames=[] []\n"
               "SNAP #1 ir=0027 pc=21 frames=[] [3=0010 4=0009 5=0007 7=0006]\n"
               "SNAP #2 ir=0030 pc=23 frames=[] [3=0028 4=0009 5=0007 7=0006]\n");
}

// for k in range(...) { acc += xs[k - 1] + xs[k + 1] } (slots as kForLoop's,
// 3 the sum): the stencil's two checks go too (ABC elimination).
const char* kStencil =
    "0000    int  KINT   0\n"
    "0001    int  KINT   1\n"
    "0002 >  list SLOAD  1  0  #0\n"
    "0003 >  int  SLOAD  7  0  #0\n"
    "0004 >  int  SLOAD  5  0  #0\n"
    "0005 >  int  SLOAD  6  0  #0\n"
    "0006 >  int  SLOAD  4  0  #0\n"
    "0007 >  flt  SLOAD  3  0  #0\n"
    "0008    int  LLEN   0002\n"
    "0009    none LOOP\n"
    "0010    int  SUB    0003  0001\n"
    "0011    bool ULT    0010  0008\n"
    "0012 >  none GUARDT 0011  #1\n"
    "0013 >  flt  LLOAD  0002  0010  #1\n"
    "0014    int  ADD    0003  0001\n"
    "0015    bool ULT    0014  0008\n"
    "0016 >  none GUARDT 0015  #1\n"
    "0017 >  flt  LLOAD  0002  0014  #1\n"
    "0018    flt  FADD   0013  0017\n"
    "0019    flt  FADD   0007  0018\n"
    "0020    bool GT     0004  0000\n"
    "0021 >  none GUARDT 0020  #2\n"
    "0022    int  ADD    0006  0005\n"
    "0023    int  SUB    0004  0001\n"
    "0024    flt  PHI    0007  0019\n"
    "0025    int  PHI    0006  0022\n"
    "0026    int  PHI    0004  0023\n"
    "0027    int  PHI    0003  0022\n"
    "SNAP #0 ir=0002 pc=20 frames=[] []\n"
    "SNAP #1 ir=0012 pc=21 frames=[] [3=0007 4=0006 5=0004 7=0003]\n"
    "SNAP #2 ir=0021 pc=23 frames=[] [3=0019 4=0006 5=0004 7=0003]\n";

// Before LOOP, besides kForLoop's checks of c0, s and i0: for k - 1, the
// largest i0 + c0*s - 1 below n, the smallest from the second iteration on,
// i0 + s - 1, at least 0 (unsigned: below n), and the first, k0 - 1; for
// k + 1, i0 + c0*s + 1 and k0 + 1 below n. The body keeps only the count's guard.
TEST(LoopPredicate, OffsetIndicesOfTheLoopVariableAreProvedBeforeTheLoop) {
  LoopPredicatePass pass;
  EXPECT_IR_EQ(apply(pass, kStencil),
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002    int  KINT   2147483648\n"
               "0003    int  KINT   2147483647\n"
               "0004    int  KINT   4611686018427387904\n"
               "0005    int  KINT   -1\n"
               "0006 >  list SLOAD  1  0  #0\n"
               "0007 >  int  SLOAD  7  0  #0\n"
               "0008 >  int  SLOAD  5  0  #0\n"
               "0009 >  int  SLOAD  6  0  #0\n"
               "0010 >  int  SLOAD  4  0  #0\n"
               "0011 >  flt  SLOAD  3  0  #0\n"
               "0012    int  LLEN   0006\n"
               "0013    bool ULT    0008  0002\n"
               "0014 >  none GUARDT 0013  #0\n"
               "0015    int  SUB    0009  0001\n"
               "0016    bool ULT    0015  0003\n"
               "0017 >  none GUARDT 0016  #0\n"
               "0018    bool ULT    0010  0004\n"
               "0019 >  none GUARDT 0018  #0\n"
               "0020    int  MUL    0008  0009\n"
               "0021    int  ADD    0010  0020\n"
               "0022    int  ADD    0021  0005\n"
               "0023    bool ULT    0022  0012\n"
               "0024 >  none GUARDT 0023  #0\n"
               "0025    int  ADD    0010  0009\n"
               "0026    int  ADD    0025  0005\n"
               "0027    bool ULT    0026  0012\n"
               "0028 >  none GUARDT 0027  #0\n"
               "0029    int  ADD    0007  0005\n"
               "0030    bool ULT    0029  0012\n"
               "0031 >  none GUARDT 0030  #0\n"
               "0032    int  ADD    0021  0001\n"
               "0033    bool ULT    0032  0012\n"
               "0034 >  none GUARDT 0033  #0\n"
               "0035    int  ADD    0007  0001\n"
               "0036    bool ULT    0035  0012\n"
               "0037 >  none GUARDT 0036  #0\n"
               "0038    none LOOP\n"
               "0039    int  SUB    0007  0001\n"
               "0040    bool ULT    0039  0012\n"
               "0041 >  flt  LLOAD  0006  0039  #1\n"
               "0042    int  ADD    0007  0001\n"
               "0043    bool ULT    0042  0012\n"
               "0044 >  flt  LLOAD  0006  0042  #1\n"
               "0045    flt  FADD   0041  0044\n"
               "0046    flt  FADD   0011  0045\n"
               "0047    bool GT     0008  0000\n"
               "0048 >  none GUARDT 0047  #2\n"
               "0049    int  ADD    0010  0009\n"
               "0050    int  SUB    0008  0001\n"
               "0051    flt  PHI    0011  0046\n"
               "0052    int  PHI    0010  0049\n"
               "0053    int  PHI    0008  0050\n"
               "0054    int  PHI    0007  0049\n"
               "SNAP #0 ir=0006 pc=20 frames=[] []\n"
               "SNAP #1 ir=0041 pc=21 frames=[] [3=0011 4=0010 5=0008 7=0007]\n"
               "SNAP #2 ir=0048 pc=23 frames=[] [3=0046 4=0010 5=0008 7=0007]\n");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Where it must not apply: the trace comes back unchanged.
TEST(LoopPredicate, LeavesChecksItCannotProveForEveryIteration) {
  LoopPredicatePass pass;
  const std::string cases[] = {
      // The length is read in the body (a helper call there could change it).
      replaced(replaced(kForLoop, "0008    int  LLEN   0002\n0009    none LOOP\n",
                        "0008    none LOOP\n0009    int  LLEN   0002\n"),
               "0010    bool ULT    0003  0008\n", "0010    bool ULT    0003  0009\n"),
      // The index is not an induction variable: k carries the sum.
      replaced(kForLoop, "0021    int  PHI    0003  0016\n", "0021    int  PHI    0003  0013\n"),
      // The step changes in the body (the index is carried, its step too).
      replaced(kForLoop, "0016    int  ADD    0006  0005\n", "0016    int  ADD    0006  0013\n"),
      // A constant step below 1 (counting down, or not moving).
      replaced(kForLoop, "0016    int  ADD    0006  0005\n", "0016    int  ADD    0006  0000\n"),
      // No count-down guard: the loop's last iteration is unknown.
      replaced(kForLoop, "0015 >  none GUARDT 0014  #2\n", "0015 >  none GUARDF 0014  #2\n"),
      // Constant offsets from a carried value that is no induction variable
      // (the count, at the place of k).
      replaced(replaced(kStencil, "0010    int  SUB    0003  0001\n", "0010    int  SUB    0004  0001\n"),
               "0014    int  ADD    0003  0001\n", "0014    int  ADD    0004  0001\n"),
      // The count does not count down by one.
      replaced(kForLoop, "0017    int  SUB    0004  0001\n", "0017    int  SUB    0004  0000\n"),
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    EXPECT_IR_EQ(passtest::apply(pass, text), print_ir(parse_ir(text)));
  }
}

// Snapshot 0 that writes a register is not the entry state: nothing may
// exit through it before the loop (LICM's rule too).
TEST(LoopPredicate, NeedsThePlainEntryState) {
  LoopPredicatePass pass;
  const std::string text = replaced(kForLoop, "SNAP #0 ir=0002 pc=20 frames=[] []\n",
                                    "SNAP #0 ir=0002 pc=20 frames=[] [9=0001]\n");
  EXPECT_IR_EQ(passtest::apply(pass, text), print_ir(parse_ir(text)));
}

// The recorder's hint: a loop seen with few iterations left keeps its
// checks (the predicates would cost more per entry than they save).
TEST(LoopPredicate, LoopsRecordedNearlyDoneKeepTheirChecks) {
  LoopPredicatePass pass;
  for (int64_t hint : {0, 7, 8, 1000}) {
    SCOPED_TRACE(hint);
    TraceIR ir = parse_ir(kForLoop);
    ir.set_loop_trip_hint(hint);
    EXPECT_EQ(pass.run(ir), hint >= 8);
  }
  TraceIR unknown = parse_ir(kForLoop);  // -1: no hint, as in IR built by hand
  EXPECT_TRUE(pass.run(unknown));
}

}  // namespace
}  // namespace tessera::jit
