// DcePass: dead-code elimination. An instruction stays if it is a guard, has
// a side effect (ir.def modes G and S; LOOP and PHI count as side effects),
// or its value is used by a kept instruction or by any snapshot (every
// snapshot, used or not, so that exit numbers and their values stay valid).
// Constants nothing uses are dropped as well.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class DcePass : public TracePass {
 public:
  const char* name() const override { return "dce"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
