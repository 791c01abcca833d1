// GuardElimPass: removes guards that cannot fail, proven from the guards that
// come before them and from integer ranges (LuaJIT's fold-time comparison
// elimination and ABC, on a straight-line trace).
//
// Facts. A guard on an int comparison (LT LE GT GE EQ NE ULT) establishes a
// relation between its operands a and b. Two int64 values are ordered in one
// of five ways (a == b; a < b with equal signs; a < 0 <= b; a > b with equal
// signs; b < 0 <= a), so a relation is the set of orderings it allows: one
// table row per comparison, GUARDF takes the complement, facts about one pair
// intersect, and "implied" is "the set allowed is inside the condition's"
// (LT implies LE and NE and excludes GE; LT and 0 <= a imply ULT). A guard on
// any other condition is known only as itself (GUARDT c after GUARDT c, or
// after GUARDF (NOT c)).
//
// Ranges. Every int value gets an interval [lo, hi]: constants; ADD, SUB,
// MUL, NEG of the operands' intervals (unknown when a bound overflows: the
// arithmetic wraps); IMOD by a divisor of known sign (x % 7 in [0, 6]); LLEN
// in [0, 2^59]; TDIM >= 0; anything else unknown. A guard narrows the
// intervals of its operands after it (a < 10 gives a <= 9). The ranges rule
// orderings out too, so a guard is removed when facts and ranges together
// decide its condition: a bounds check ULT(i, n) goes when 0 <= i is proven
// and i < n is a fact or hi(i) < lo(n).
//
// Loops. Facts and ranges hold from their guard to the end of its region.
// What holds before LOOP holds in the body for loop-invariant values only:
// constants and values defined before LOOP that no PHI carries (inside the
// body a PHI's first operand names the PHI). A carried value x = PHI(x0,
// x0 + c), c > 0 constant, gets lo(x0) as its lower bound in the body when a
// body guard bounds x0 or x0 + c by an invariant value and so rules wrapping
// out (guard_elim.cpp says why); other carried values are unknown.
//
// Not done: int arithmetic wraps (two's complement, ir.def) and there are no
// overflow-check instructions, so there are no overflow guards to remove.
// A guard that always fails stays. A removed guard leaves its snapshot in
// place (pass.h); the comparison it tested is left for DCE.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class GuardElimPass : public TracePass {
 public:
  const char* name() const override { return "guards"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
