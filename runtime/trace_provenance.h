// Where a trace's IR comes from, for the trace viewer (--dump): each IR
// instruction's source line and bytecode (as PyPy's jitviewer interleaves
// them), and the names of the locals each snapshot restores. Made while the
// module lives (TraceJit::stop_compiling, with compiled_ir): it reads the
// FunctionProtos the IR's origins point at.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tracer/trace_ir.h"

namespace tessera::jit {

struct IrProvenance {
  int line = 0;           // 0: unknown (made by a pass)
  int64_t pc = -1;        // the bytecode's index in `function`
  std::string function;   // its function's name
  std::string bytecode;   // its listing line (disassemble_instruction)
};

// One per IR instruction of `ir`.
std::vector<IrProvenance> ir_provenance(const TraceIR& ir);

// Per snapshot of `ir`, the local variable each entry's slot holds at the
// snapshot (slot -> name), where the function's locals name it. `base`: the
// trace's function, for snapshots whose base frame is its own.
std::vector<std::map<uint32_t, std::string>> snapshot_local_names(const TraceIR& ir, const FunctionProto* base);

}  // namespace tessera::jit
