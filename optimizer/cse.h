// CsePass: common-subexpression elimination by value numbering, with the
// load forwarding and guard deduplication that fall out of it (LuaJIT's
// lj_opt_fold CSE and lj_opt_mem forwarding, on a straight-line trace).
//
// Walking each region of the trace in order (the part before LOOP, then the
// loop body; a linear trace is one region):
//  - a pure instruction (mode C in ir.def) equal to an earlier one with the
//    same operands is replaced by it;
//  - a guard on a condition an earlier guard already established
//    (GUARDT x after GUARDT x) is removed;
//  - loads are reused or forwarded while no instruction that may write the
//    memory they read comes between:
//      GLOAD g   earlier GLOAD g, or the value of GSTORE g (same type);
//                killed by GSTORE g, CALL, FPUSH, FPOP
//      LLEN l    earlier LLEN l; killed by CALL, FPUSH, FPOP (only helpers
//                resize lists)
//      LLOAD l i earlier LLOAD l i, or the value an LSTORE through LREF l i
//                stored (same type); killed by any LSTORE (two list refs
//                may name one list), CALL, FPUSH, FPOP
//      TLOAD t i earlier TLOAD t i; killed by TSTORE, CALL, FPUSH, FPOP
// Nothing is reused across LOOP: inside the body, a loop-carried value (the
// first operand of a PHI) names the PHI, not the value before the loop.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class CsePass : public TracePass {
 public:
  const char* name() const override { return "cse"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
