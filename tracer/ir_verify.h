// The trace IR verifier (LLVM's -verify-each): checks the invariants every
// trace must keep between the recorder, each optimizer pass and the
// backends. One linear pass over the instructions and snapshots.
//
// The rules (each follows from what the recorder produces and what the
// passes and the backends rely on; ir_verify.cpp says where each comes from):
//   constants   the constants come first (the constant area) and only there
//               (IRVerifyOptions::constants_first, off for the backends);
//               KINT/KFLOAT/KOBJ name an entry of the constant pool, KBOOL is
//               0 or 1, and each has its opcode's type; no constant exits.
//   operands    a reference operand (ir.def `ref`) names an existing
//               instruction defined before the use (SSA order in a linear
//               trace), except a PHI's second operand; kNoRef only as the
//               empty argument chain of CALL, VNEWLIST and VNEWTENSOR; a
//               value-less instruction (type none) only where an operand is
//               one by design (a CARG chain, LSTORE's LREF, TSTORE's TREF).
//   types       where ir.def fixes them: int and float arithmetic, CONV,
//               comparisons (both operands of one type; ordered ones of int
//               or float), NOT and guards on bools, list and tensor accesses
//               on lists and tensors with int indices, LSTORE through an
//               LREF, TLOAD/TREF at a TIDX, TSTORE through a TREF, FPUSH and
//               RETGUARD on a function constant, CALL's and VNEWTENSOR's
//               tables, a VNEWLIST's element count.
//   loop        at most one LOOP; PHIs only after it, after every other
//               instruction; a PHI's first operand is defined before LOOP,
//               its second is an instruction or constant that is not a PHI;
//               a PHI has the type of both operands.
//   sunk        a sunk allocation (VNEWLIST, VNEWTENSOR) is read only by
//               snapshots and by the CARG chains of other sunk allocations
//               (no code runs for it).
//   snapshots   every guard (but SLOAD op2 = 2, which checks nothing) names
//               a snapshot; only what may exit (ir_may_exit: guards, CALL)
//               names one, and it exists;
//               entries are sorted by slot, each slot once, and name existing
//               values (not PHIs, not value-less instructions); every
//               instruction that exits through a snapshot comes after every
//               value the snapshot names (the exit writes them back) and at or
//               after the snapshot's ir=; ir= is at most the trace's length
//               and names no constant (with constants_first). Not a rule:
//               "entries defined before ir=": ir= follows the instruction
//               it was taken at, and when LICM hoists that instruction before
//               LOOP a body snapshot's ir= moves with it (ir= is bookkeeping
//               for the passes; no backend or exit reads it).
#pragma once

#include <stdexcept>
#include <string>

#include "tracer/trace_ir.h"

namespace tessera::jit {

class IRVerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which rules to check. The backends materialize a constant wherever it
// stands, so before compiling they leave out the constant area (which the
// recorder and every rebuild keep, and passes rely on: "before LOOP" is the
// constants plus the preamble); IR built by hand for backend tests
// interleaves constants with instructions.
struct IRVerifyOptions {
  bool constants_first = true;
};

// The first rule `ir` breaks, naming the instruction or snapshot ("0012 ADD:
// operand 0013 is used before it is defined"); empty when it keeps them all.
std::string ir_verify_error(const TraceIR& ir, const IRVerifyOptions& options = {});

// Throws IRVerifyError with ir_verify_error's message (prefixed by `where`,
// e.g. "after cse", when given) if `ir` breaks a rule.
void verify_ir(const TraceIR& ir, const std::string& where = {}, const IRVerifyOptions& options = {});

// What the environment variable TESSERA_VERIFY_IR asks for: "0" nothing,
// "1" verification after every optimizer pass (TracePipeline::Options::
// verify_each, whatever `--jit-param verify` says), "abort" the same with
// failures fatal (a message on stderr and abort(): a test run cannot miss
// one when the runtime would drop the trace quietly). Unset: on in builds
// without NDEBUG.
enum class IRVerifyMode { off, each, abort };
IRVerifyMode ir_verify_mode();

// Sets TESSERA_VERIFY_IR for its lifetime and restores it after: tests that
// feed broken traces on purpose expect IRVerifyError, not abort().
class ScopedIRVerifyMode {
 public:
  explicit ScopedIRVerifyMode(const char* value);
  ~ScopedIRVerifyMode();
  ScopedIRVerifyMode(const ScopedIRVerifyMode&) = delete;
  ScopedIRVerifyMode& operator=(const ScopedIRVerifyMode&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

// verify_ir for the places that must not go on with a broken trace (the
// pipeline's verify_each, the backends): under TESSERA_VERIFY_IR=abort a
// failure prints and aborts, otherwise it throws IRVerifyError.
void check_ir(const TraceIR& ir, const std::string& where, const IRVerifyOptions& options = {});

}  // namespace tessera::jit
