// Where FPOP finds the caller's base, shared by both host tiers.
#pragma once

#include <cstdint>

namespace tessera {
struct FunctionProto;
}

namespace tessera::jit {

// FPOP after `RETGUARD caller, ret_pc`: how many registers below the
// returning frame's base the caller's base lies. A user function's frame is
// always pushed by a CALL (the interpreter's, FPUSH's, or an exit rebuilding
// an inlined call), one register above the CALL's register `a`, so this is
// a + 1 for the CALL before ret_pc; 0 when that instruction is no CALL (the
// code then reads the caller frame's base index instead).
uint32_t caller_base_distance(const FunctionProto& caller, uint32_t ret_pc);

}  // namespace tessera::jit
