// T2's machine code as text for --dump: the object LLVM made for a trace,
// disassembled (Intel syntax) with each run of instructions headed by the
// trace IR instruction it implements. The lowering gives every LLVM
// instruction a debug line, the IR instruction's number + 1
// (lower_trace's `lines`); the object's DWARF line table then maps each
// address back to it. An exit's code (its block is made at the guard) is
// headed by the guard and the snapshot it exits through.
#pragma once

#include <string>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// The disassembly of `object`'s code, or a line saying why there is none.
std::string disassemble_trace_object(const std::string& object, const TraceIR& ir);

}  // namespace tessera::jit
