// AllocSinkPass: allocation sinking (LuaJIT's lj_opt_sink idea, PyPy's
// virtuals) for list literals. A `[a, b, ...]` built in a trace is a CALL of
// the NewList helper, whose result register owns the list. When the trace
// only reads the list's length and its elements at constant indices, the
// allocation is not needed on the trace: the CALL becomes VNEWLIST (no
// code), LLEN becomes the element count, and each LLOAD becomes the element
// it would load. The list is built only where it becomes visible to the
// interpreter: at an exit whose snapshot names it (its register, where the
// interpreter may read it) — the exit plan builds it (deopt/exit_plan.h)
// there.
//
// Sunk only when nothing lets the list escape: its reload (SLOAD op2=1 of
// the CALL's register) is used by LLEN, by LLOAD at a constant index within
// the list whose element has the loaded type, and by snapshots; anything
// else (a store of it, a call argument, an element store into it, a PHI, an
// identity comparison) keeps the allocation, as does a register write that
// DeferredWrites (deferred_writes.h) cannot leave to the exits: before LOOP,
// in a trace that moves its base frame, or where an earlier exit of the loop
// body (or the loop header) may read the register as the previous iteration
// left it.
//
// Exits after the allocation get a snapshot entry for its register (naming
// the VNEWLIST) until the register is written again, where the register is
// live (DeferredWrites::defer).
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class AllocSinkPass final : public TracePass {
 public:
  const char* name() const override { return "sink"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
