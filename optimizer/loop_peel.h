// LoopPeelPass: peels the first iteration of a loop trace (the idea of
// LuaJIT's lj_opt_loop.c; `--jit-param peel=1`, off by default).
//
//   [constants][preamble] LOOP [body][PHIs]
//     becomes
//   [constants][preamble][peeled body] LOOP [body][new PHIs]
//
// The peeled body is a copy of the body as the first iteration runs it: a
// PHI's first operand means the value on entry there (in the body it names
// the loop-carried value). Each PHI(a, b) becomes PHI(b', b), where b' is the
// peeled copy of b (the value carried into the second iteration), and every
// use of `a` in the body becomes a use of b'. Guards of the peeled body exit
// through snapshots appended to the trace: copies of the body's snapshots
// with their values mapped to the peeled body (existing snapshots keep their
// numbers; pass.h). Inlined frames and the base frame are copied as they are.
//
// What it buys in this pipeline. LuaJIT peels to get loop-invariant code
// motion from CSE; here LicmPass already moves invariant code, and it must
// run first: it relies on a preamble with no side effects (its moved guards
// exit through snapshot 0), which a peeled body with stores is not. Peeling
// runs after LICM and before guard elimination and the second CSE, and what
// it adds is facts: the peeled iteration's guards hold on entry to the loop,
// so the value a PHI carries into the body has the range those guards gave
// it. GuardElimPass starts the induction range of x = PHI(x1, x1 + c) from
// lo(x1): in a loop guarded by i < LLEN(l) whose i starts at an unknown k,
// the peeled bounds check of l[i] gives 0 <= k, so i >= 1 in the body, and
// the body's bounds check goes (loop_peel_test.cpp). Where the upper half of
// a bounds check is not a fact already, peeling does not remove it.
// The second CSE reuses in the body the pure values and guards the peeled
// iteration computed from invariants (cse.h); LICM leaves few candidates
// for that (integer //, %, ** of invariant operands).
//
// Costs: the trace's code roughly doubles, and a peeled loop's PHIs no longer
// start from entry SLOADs, so under tier=auto its T1 code does not poll for
// the tier-up (codegen/host/asmjit: the tier-up exit writes each PHI's value
// to its entry SLOAD's slot) and the loop stays in T1. tier=2 compiles it
// with LLVM directly.
//
// Traces left alone (run() returns false):
//  - linear traces (no LOOP) and loops without PHIs (nothing is carried, so
//    the body would learn nothing from a peeled iteration);
//  - bodies with CALL, FPUSH, FPOP, RETGUARD or EXIT: helper calls write
//    result slots that reloads read back, frame switches rebase the slots,
//    and an EXIT in a loop body is not a shape the recorder produces. The
//    pass lists the opcodes it copies (loop_peel.cpp, peelable); a body with
//    any other (CARG, an opcode added later) is not peeled;
//  - a PHI whose second operand is not an instruction of the body: a
//    constant or a value from before LOOP (the PHI would carry the same
//    value on both sides, and its new first operand would be a constant or a
//    shared entry value), or another PHI's first operand (a rotation such as
//    `a, b = b, a`: its new first operand would be an entry SLOAD of another
//    slot, which the tier-up exit would write to the wrong register);
//  - two PHIs with the same first operand;
//  - a snapshot used by guards both before LOOP and in the body that names
//    a loop-carried or body value (it would need two meanings);
//  - more snapshots than a guard can number.
// Two PHIs with the same second operand (a for loop's hidden index and its
// visible variable after CSE) carry the same value from the second
// iteration on; they become one PHI, and the body's uses of both first
// operands name it.
// Malformed traces (a PHI before LOOP, a PHI whose first operand is a
// constant or not before LOOP, a snapshot number out of range) throw
// std::invalid_argument.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class LoopPeelPass : public TracePass {
 public:
  // Per loop (the pipeline's choice; `where_it_pays`), a loop is peeled
  // only where that removes work from its body:
  //  - not where LoopPredicatePass would hoist its bounds checks
  //    (LoopPredicatePass::applies): a peeled preamble has stores, after
  //    which no predicate can exit through snapshot 0, and the checks would
  //    stay in the body;
  //  - not where the recording saw fewer than 8 iterations left (the peeled
  //    copy is then a good part of each entry's work);
  //  - only where guard elimination, CSE and DCE, tried on both versions,
  //    leave at least a tenth fewer instructions in the peeled body than in
  //    the unpeeled one (PHIs not counted). A peeled body that is no smaller
  //    measured up to 10% slower under LLVM (matmul_scalar's inner loop),
  //    and one a guard smaller out of 24 5% slower (fannkuch's short loop).
  // Without it every loop the pass can peel is peeled (IR in / IR out tests).
  explicit LoopPeelPass(bool where_it_pays = false) : where_it_pays_(where_it_pays) {}
  const char* name() const override { return "peel"; }
  bool run(TraceIR& ir) override;

 private:
  bool where_it_pays_;
};

}  // namespace tessera::jit
