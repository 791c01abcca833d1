// PhiMergePass: two loop-carried values that are equal in every iteration
// become one. A counted loop's trace carries its index twice, as the loop's
// hidden counter and as the visible variable (FORLOOP copies one into the
// other at the loop header, where the trace starts): PHI(i0, i + s) and
// PHI(v0, i + s) with the same next value. They differ only if they differ
// on entry, which one guard before LOOP rules out (EQ, exiting through
// snapshot 0 like LICM's guards). Every later use of the second then uses
// the first, the exits write the first to both registers, and nothing in the
// body reads the second's PHI: T2 drops it (one induction variable fewer in
// the loop, a register and a copy per iteration). The PHI itself stays, so
// that T1's tier-up exit, which writes each PHI's entry register, still
// leaves the visible variable right.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class PhiMergePass : public TracePass {
 public:
  const char* name() const override { return "phimerge"; }
  bool run(TraceIR& ir) override;

  struct Merge {
    IRRef keep, gone;  // entry values: the uses of `gone` after both become `keep`'s
    IRRef gone_phi;    // PHI(gone, next): kept, read by nothing in the body
  };

 private:
  static void merge(TraceIR& ir, const Merge& m);
};

}  // namespace tessera::jit
