// LicmPass: loop-invariant code motion for loop traces. Instructions of the
// loop body whose operands do not change from one iteration to the next are
// moved before LOOP, where they run once per entry into the trace:
//  - pure instructions (mode C), except integer division, modulo and power,
//    which may trap or loop when their guards stay in the body;
//  - guards on invariant conditions;
//  - GLOAD of a global the body never stores, LLEN, and LLOAD of an element
//    whose bounds guard moved too, when the body has no instruction that
//    could change them (CALL, FPUSH, FPOP; for LLOAD also LSTORE).
// A moved guard exits through snapshot 0, the state on entry: the part of
// the trace before LOOP only loads (no side effects), so the interpreter
// resumes at the loop header with nothing done, and redoes the iteration.
// Invariant means: a constant, or defined before LOOP and not the first
// operand of a PHI (inside the body that operand names the PHI), or moved.
// Traces whose snapshot 0 is not the plain entry state are left alone.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class LicmPass : public TracePass {
 public:
  const char* name() const override { return "licm"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
