// Trace IR -> x86-64 machine code with asmjit's Assembler: the T1 tier's
// instruction selection (internal to the asmjit backend; its parts are
// listed in asm_state.h).
//
// The generated code follows trace_abi.h exactly as the LLVM tier does, so
// traces of either tier link to each other and share deopt/:
//   native    the trace in LLVM's preserve_none convention: base, globals,
//             exit_vals and ctx in r12, r13, r14, r15; returns the exit code
//             in eax; all registers but rsp and rbp are the callee's.
//   entry     the C-convention wrapper (TraceFn) that C++ calls: saves the
//             C callee-saved registers once and calls `native`.
//   passed    a side trace that takes passed values: they arrive in rdx,
//             r11, rax, xmm0 and xmm1 (scratch here, never allocated);
//             `native` loads them from memory and falls into it.
//
// Shape (LuaJIT's loop model, as in the LLVM tier): the instructions before
// LOOP, the loop label, the body, the PHI moves, a jump back; guards are
// conditional jumps to exit stubs placed after the loop, one per snapshot;
// cold paths (freeing an object, reporting a watched global, releasing the
// objects an exit overwrites) are placed there too.
//
// Registers: r12 holds `base` throughout (FPUSH and FPOP move it);
// globals, exit_vals and ctx live in the frame and are reloaded into
// r13-r15 before a linked exit jumps on. rax, rdx, r10, r11, xmm0 and xmm1
// are scratch; everything else is handed out by the linear-scan allocator.
#pragma once

#include <asmjit/x86.h>

#include <string>

#include "codegen/host/lowering_env.h"
#include "tracer/trace_ir.h"

namespace tessera::jit::t1 {

struct AssemblyStats {
  uint32_t values = 0;   // instructions with a register value
  uint32_t spilled = 0;  // of which got no register
};

// Emits the trace and its entry wrapper into `a`. `native` and `entry` are
// bound to the two entry points, and `passed` to the entry that takes
// passed values in registers (trace_abi.h; where the trace has no SLOAD of
// mode 3 + i, the same place as `native`). Throws std::runtime_error naming the
// offending instruction on malformed IR.
AssemblyStats assemble_trace(const TraceIR& ir, const LoweringEnv& env, asmjit::x86::Assembler& a,
                             const asmjit::Label& native, const asmjit::Label& entry, const asmjit::Label& passed);

}  // namespace tessera::jit::t1
