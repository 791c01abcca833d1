// LoopPredicatePass: loop predication for the bounds checks of induction
// variables (HotSpot's loop predication; range-check hoisting). A loop
// trace's bounds guard GUARDT(ULT(i, n)) on an induction variable i and a
// loop-invariant n is removed from the body; before LOOP, guards on the
// entry values prove it for every iteration the loop can run:
//
//   the loop counts down:  c = PHI(c0, c - 1) and the body guards c > 0, so
//                          iteration t runs only if t <= c0 (FORLOOP's count);
//   i steps up:            i = PHI(i0, i + s), s invariant, so i_t = i0 + t*s;
//                          or k = PHI(k0, i + s) for such an i (the visible
//                          loop variable: k_0 = k0, k_t = i0 + t*s for t >= 1);
//   predicates:            0 < s < 2^31, 0 <= c0 < 2^31, 0 <= i0 < 2^62
//                          (i0 + c0*s cannot wrap), i0 + c0*s < n (the last
//                          value; unsigned), and for k also k0 <u n.
//
// Together they give 0 <= i_t < n for 0 <= t <= c0. An index i + d or
// i - d (d a constant: a stencil's xs[i - 1], xs[i + 1]; ABC elimination)
// is proved the same way from its largest value, i0 + c0*s + d < n, and,
// where d < 0, its smallest, 0 <= i0 + d (for k, i0 + s + d, and k0 + d). The predicates exit
// through snapshot 0 like LICM's hoisted guards: nothing before LOOP has a
// side effect, so the interpreter resumes at the loop header and redoes the
// iteration. Only traces whose snapshot 0 is the plain entry state qualify.
//
// Loops whose recording saw fewer than 8 iterations left
// (TraceIR::loop_trip_hint) are left alone: the predicates cost a few
// instructions per entry, a bounds check one compare per iteration.
//
// Not done (the guard stays): indices that are not such induction variables
// (or one plus or minus a constant), steps down, bounds that change in the
// body (LLEN after a helper call), and loops with no count-down guard
// (while loops). A loop whose predicate fails
// on entry (one that breaks out before its index leaves the list) exits at
// once each time; its side trace then runs the iterations (slower than the
// unpredicated loop, still compiled): `--jit-param predicate=0` turns the
// pass off.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

// Loops recorded with fewer iterations left than this (TraceIR::loop_trip_hint,
// nbody's inner loops) are left as they are by the passes whose work pays
// per iteration (this one, LoopPeelPass): they cost a few instructions per
// entry into the loop, and such a loop is entered about as often as it iterates.
constexpr int64_t kMinLoopTripHint = 8;

class LoopPredicatePass : public TracePass {
 public:
  const char* name() const override { return "predicate"; }
  bool run(TraceIR& ir) override;
  // Whether run() would hoist a bounds check of `ir` (LoopPeelPass leaves
  // such loops to this pass: a peeled preamble has stores, after which no
  // predicate can exit through snapshot 0).
  static bool applies(const TraceIR& ir);
};

}  // namespace tessera::jit
