// Linear-scan register allocation for T1 (Poletto & Sarkar, as LuaJIT's
// backward allocator is too intertwined with its assembler to share): walk
// the intervals by start; free the registers of intervals that ended; give
// the new interval a free register of its class, or spill the interval that
// ends last. Every value also owns a stack slot in the trace's frame: spilled
// values live there for their whole life, and values in call-clobbered
// registers are saved there around helper calls.
//
// Register ids are x86-64 encodings (0 = rax ... 15 = r15; xmm0 ... xmm15).
// Values that cross a helper call prefer the registers the C convention
// preserves, so that the call needs no save and restore.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/host/asmjit/live_intervals.h"

namespace tessera::jit::t1 {

constexpr uint8_t kNoReg = 0xFF;

struct RegisterSet {
  std::vector<uint8_t> gpr;            // allocatable GPRs, in order of preference
  std::vector<uint8_t> xmm;            // allocatable XMM registers
  uint32_t gpr_call_preserved = 0;     // bit mask of the GPRs a C call preserves
};

struct RegAssignment {
  std::vector<uint8_t> reg;     // per instruction: its register, or kNoReg (spilled / no value)
  std::vector<uint32_t> slot;   // per instruction with a value: its stack slot index
  uint32_t num_slots = 0;
  uint32_t spilled = 0;         // values that got no register
};

RegAssignment linear_scan(const TraceIR& ir, const TraceLiveness& lv, const RegisterSet& regs);

}  // namespace tessera::jit::t1
