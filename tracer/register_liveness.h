// Register liveness on bytecode: whether the interpreter, resuming a
// function at some instruction, may read a register before writing it
// (LuaJIT's snap_usedef). Exits need not write back dead registers, so the
// recorder drops them from snapshots: smaller exits, and no reference
// counting for temporaries that hold an object from an earlier statement.
//
// Which registers each instruction reads and writes, and where control goes
// next, come from the opcode table: the operand roles and flows of
// vm/bytecode/opcodes.def, through reads_register, writes_register and
// op_info (vm/bytecode/bytecode.h). The analysis follows every path from the
// instruction (branches, loop back-edges) until each path reads the register
// (live), writes it (dead) or returns (dead); past a budget of instructions
// it answers live.
#pragma once

#include <cstdint>

#include "vm/bytecode/bytecode.h"

namespace tessera::jit {

// Whether register `reg` of `proto` may be read before it is written when
// execution resumes at instruction `pc`. Registers outside the frame and
// out-of-range pcs count as live.
bool register_live_at(const FunctionProto& proto, uint32_t pc, uint32_t reg);

}  // namespace tessera::jit
