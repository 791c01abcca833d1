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
//    memory they read comes between. A store kills only what it may alias
//    (optimizer/alias.h: same list or tensor with an index that differs by
//    a known non-zero constant, another dtype, another global, another kind
//    of memory: no alias); "same" below means MustAlias:
//      GLOAD g   earlier GLOAD g, or the value of GSTORE g (same type);
//                killed by GSTORE g, CALL, FPUSH, FPOP
//      LLEN l    earlier LLEN l; killed by CALL, FPUSH, FPOP (only helpers
//                resize lists)
//      LLOAD l i earlier LLOAD of the same element, or the value an LSTORE
//                to it stored (same type); killed by an LSTORE that may
//                alias it (through another list ref, which may name the
//                same list, or at an index not known to differ), CALL,
//                FPUSH, FPOP
//      TLOAD t i earlier TLOAD of the same element; killed by a TSTORE that
//                may alias it, CALL, FPUSH, FPOP (a TSTORE's value is not
//                forwarded: it is converted to the tensor's dtype)
//      LREF/TREF earlier equal address; killed by CALL, FPUSH, FPOP (a
//                helper may move a list's storage)
// Across LOOP only pure values and established guards carry, and only those
// without a loop-carried operand: inside the body a loop-carried value (the
// first operand of a PHI) names the PHI, not the value before the loop.
// With a peeled first iteration (loop_peel.h) this is LuaJIT's loop
// optimization: what the peeled iteration computed from invariants serves
// every iteration. Loads never carry (the body's stores).
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class CsePass : public TracePass {
 public:
  const char* name() const override { return "cse"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
