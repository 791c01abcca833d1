// FoldPass: constant folding and algebraic simplification by the rule table
// optimizer/fold_rules.def (x + 0 -> x, 3 < 5 -> true, -(-x) -> x, ...).
// Each instruction is matched with its operands as already folded, so
// chains fold in one pass. A folded comparison that a guard tests becomes a
// constant, which the CSE pass then drops (or keeps, if it always fails).
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class FoldPass : public TracePass {
 public:
  const char* name() const override { return "fold"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
