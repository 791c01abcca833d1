// Trace IR -> LLVM IR (internal to the LLVM backend; includes LLVM headers).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "tracer/trace_ir.h"

namespace llvm {
class Module;
}

namespace tessera::jit {

// Where a ListObj keeps its elements, measured on a real ListObj at backend
// start-up (libstdc++'s vector is {begin, end, capacity}, but we do not
// hard-code that).
struct ListLayout {
  size_t items_offset = 0;  // offset of ListObj::items in ListObj
  size_t begin_offset = 0;  // offset of the data pointer inside the vector
  size_t end_offset = 0;    // offset of the end pointer inside the vector
};

// Where a TensorObj keeps its dtype, shape and data, measured the same way.
struct TensorLayout {
  size_t dtype_offset = 0;        // DType (one byte)
  size_t shape_begin_offset = 0;  // the data pointer of the shape's vector<int64_t>
  size_t data_offset = 0;         // void* data
};

struct LoweringEnv {
  ListLayout list;
  TensorLayout tensor;
  // Offset of Obj::refcount (a uint32_t) in every heap object, measured the
  // same way (Obj has a vtable, so offsetof is not usable).
  size_t obj_refcount_offset = 0;
  // The trace's call table, copied into storage that outlives the compiled
  // code: the generated code embeds these addresses.
  std::vector<const CallTarget*> calls;
  // Linked exits (trace_abi.h); links == nullptr: exits fill exit_vals.
  ExitLinking linking;
  // The function of the trace's base frame (FPUSH writes the caller's
  // resume pc, a pointer into its code); may be null for traces without FPUSH.
  const FunctionProto* proto = nullptr;
  // One byte per global, set where some trace assumed the global constant:
  // GSTORE checks it and reports the store (null: no checks).
  const uint8_t* global_watch = nullptr;
};

// Emits into `m` the trace as a function named `fn_name` in the trace
// calling convention (NativeTrace, trace_abi.h), and `fn_name` + "_entry",
// its TraceFn wrapper for C++ callers. Throws std::runtime_error naming the
// offending instruction on malformed IR.
void lower_trace(const TraceIR& ir, const LoweringEnv& env, const std::string& fn_name,
                 llvm::Module& m);

}  // namespace tessera::jit
