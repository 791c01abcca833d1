// Trace IR -> LLVM IR (internal to the LLVM backend; lower_state.h lists
// the parts of the lowering).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "codegen/host/lowering_env.h"
#include "codegen/host/trace_abi.h"
#include "tracer/trace_ir.h"

namespace llvm {
class Module;
}

namespace tessera::jit {

// Emits into `m` the trace as a function named `fn_name` in the trace
// calling convention (NativeTrace, trace_abi.h), and `fn_name` + "_entry",
// its TraceFn wrapper for C++ callers. A trace that takes passed values
// (SLOAD mode 3 + i) is the function `fn_name` + kPassedEntrySuffix, and
// `fn_name` loads them from their registers in memory and goes on into it. Throws std::runtime_error naming the
// offending instruction on malformed IR.
inline constexpr const char* kPassedEntrySuffix = "_passed";

// `lines`: give each LLVM instruction a debug line, the IR instruction's
// number + 1, so that the object's line table maps the machine code back
// to the IR (--dump's disassembly: object_disassembly.h).
void lower_trace(const TraceIR& ir, const LoweringEnv& env, const std::string& fn_name,
                 llvm::Module& m, bool lines = false);

}  // namespace tessera::jit
