// IrRewrite: rebuilds a trace from an old one under a substitution and a new
// instruction order. Every pass that removes, replaces or moves instructions
// uses it, so that operand, PHI and snapshot renumbering lives in one place.
//
//   subst[r] == r        keep r
//   subst[r] == s != r   every use of r becomes a use of s (s must stay)
//   subst[r] == kNoRef   drop r (nothing may still use it)
//
// `order` lists the kept non-constant instructions in their new order; the
// constants a kept instruction or a snapshot uses come first, as always (the
// others are dropped). A snapshot's ir= follows the instruction it named, or
// the next kept one after it in the old numbering when that one was dropped,
// and moves up to the first instruction that exits through it if that one
// comes earlier.
#pragma once

#include <vector>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// Follows substitution chains (a -> b -> c) to the final reference.
IRRef resolve_ref(const std::vector<IRRef>& subst, IRRef r);

// The trace with `subst` applied and the instructions in `order`.
// Instructions keep their snapshot numbers (passes change IRIns::snap in
// `in` before rebuilding when they must).
TraceIR rebuild_trace(const TraceIR& in, const std::vector<IRRef>& subst, const std::vector<IRRef>& order);

// The identity substitution for `ir` (every instruction kept).
std::vector<IRRef> identity_subst(const TraceIR& ir);

}  // namespace tessera::jit
