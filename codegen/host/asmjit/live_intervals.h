// Live intervals of a trace's values, for the T1 tier's linear-scan register
// allocator (Poletto & Sarkar). A trace is linear, so a value's interval is
// one range of instruction positions [start, end]: from its definition to its
// last use. Uses are operands, the values of the exit plan of every
// instruction that may exit (an exit reads them: its snapshot's entries and
// the elements of the sunk objects it builds, nested ones included), and PHIs. The loop (LOOP ... end) needs two
// extensions: a value defined before LOOP and used in the body stays live to
// the end (the next iteration reads it again), and a PHI's loop-carried
// values, both its entry value and its next-iteration value, live to the end,
// where the back-edge moves the second into the first's location. A passed
// value (SLOAD mode 3 + i) lives from position 0: the entry moves it from
// its argument register into its own.
//
// A PHI's entry value and its next value can share one register (the
// back-edge then moves nothing), where the next value is computed by an
// instruction that reads its operands before writing its result and the
// entry value is read by nothing after it: the entry value's interval then
// ends at the next value's instruction, which takes over its register
// (LiveInterval::takes_register_of). Each interval also lists where it is
// read, so that the allocator spills the value whose next read is furthest.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"

namespace tessera::jit::t1 {

enum class RegClass : uint8_t { Gpr, Xmm };

struct LiveInterval {
  IRRef ref = kNoRef;
  uint32_t start = 0, end = 0;  // positions (instruction indices); end = ir.size() at the back-edge
  RegClass cls = RegClass::Gpr;
  // A helper call on the instruction path (not a cold path) lies strictly
  // inside the interval, so the value should live in a register the C
  // calling convention preserves.
  bool crosses_call = false;
  // Positions that read the value, ascending; a PHI reads it at the end.
  // Empty: not known (the allocator then goes by `end` alone).
  std::vector<uint32_t> reads;
  // The PHI entry value whose register this next value takes over: that
  // interval ends at this one's start (kNoRef: none).
  IRRef takes_register_of = kNoRef;
};

struct TraceLiveness {
  std::vector<LiveInterval> intervals;  // by start position
  std::vector<uint32_t> uses;           // per instruction: how many times it is read
  std::vector<uint32_t> calls;          // positions of instructions that call a helper
  IRRef loop = kNoRef;                  // the LOOP instruction, if any
};

// Whether instruction `ins` defines a value that lives in a register (not a
// constant, not a PHI: a PHI names its first operand's location).
bool has_value(const IRIns& ins);
// The register class of `ins`'s value (raw addresses of LREF/TREF are GPRs).
RegClass value_class(const IRIns& ins);
// Whether `ins` calls a C helper on its main path (ir.def's call flag; FMATH
// of sqrt is an instruction); T1's lowering agrees. Cold paths save what
// they need themselves.
bool calls_helper(const IRIns& ins);
// Whether `ins` may leave the trace through its snapshot.
bool may_exit(const IRIns& ins);

// Whether the backend lowers `op` so that its result may share a register
// with an operand (it reads its operands before it writes its result).
using SharesOperandRegister = std::function<bool(IROp)>;

// `plans`: plan_exits(ir), one per snapshot. `shares`: null, no PHI shares
// a register with its next value.
TraceLiveness compute_liveness(const TraceIR& ir, const std::vector<ExitPlan>& plans,
                               const SharesOperandRegister& shares = nullptr);

}  // namespace tessera::jit::t1
