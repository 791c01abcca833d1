// What a host backend needs to know besides the trace IR: where the
// interpreter's objects keep their fields (measured, not assumed), the call
// table, exit linking, and the watch bytes of assumed globals. Shared by the
// asmjit tier (T1) and the LLVM tier (T2), which generate the same protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "tracer/trace_ir.h"

namespace tessera {
struct FunctionProto;
}

namespace tessera::jit {

// Where a ListObj keeps its elements (libstdc++'s vector is {begin, end,
// capacity}, but we do not hard-code that).
struct ListLayout {
  size_t items_offset = 0;  // offset of ListObj::items in ListObj
  size_t begin_offset = 0;  // offset of the data pointer inside the vector
  size_t end_offset = 0;    // offset of the end pointer inside the vector
};

// Where a TensorObj keeps its dtype, shape and data.
struct TensorLayout {
  size_t dtype_offset = 0;        // DType (one byte)
  size_t shape_begin_offset = 0;  // the data pointer of the shape's vector<int64_t>
  size_t shape_end_offset = 0;    // its end pointer (rank = (end - begin) / 8)
  size_t data_offset = 0;         // void* data
};

struct ObjectLayout {
  ListLayout list;
  TensorLayout tensor;
  // Offset of Obj::refcount (a uint32_t) in every heap object (Obj has a
  // vtable, so offsetof is not usable).
  size_t refcount_offset = 0;
};

// Measured once on real objects (the first call), then cached. Throws
// std::runtime_error if a layout cannot be found.
const ObjectLayout& object_layout();

struct LoweringEnv {
  ListLayout list;
  TensorLayout tensor;
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
  // Tier-up polling (T1 under tier=auto; null: none; needs linked exits).
  // The code decrements the counter once per iteration (at the back-edge;
  // linear traces once per entry) and, when it reaches zero, leaves
  // through the tier-up exit: the loop-carried values go to their registers
  // and the trace returns `code_base | kTierUpExit`, so that the runtime
  // resumes the interpreter where snapshot 0 does (the loop header, or the
  // trace's start) and can swap in the LLVM code there.
  uint32_t* tier_up_counter = nullptr;
};

// Throws std::runtime_error with `msg`, prefixed by the instruction it is
// about ("instruction 0012 (SLOAD): ..."), when `at` names one. Both tiers
// report malformed IR this way.
[[noreturn]] inline void throw_at_instruction(const TraceIR& ir, IRRef at, const std::string& msg) {
  char where[64];
  if (at < ir.size())
    std::snprintf(where, sizeof where, "instruction %04u (%s): ", at, ir_op_info(ir[at].op).name);
  else
    where[0] = '\0';
  throw std::runtime_error(std::string(where) + msg);
}

// Registers that hold a scalar at every exit of `ir`: loaded with a scalar
// type on entry (before any exit but snapshot 0's, which writes nothing) and
// never given an object (a store, a helper's result, an object reload).
// Exits write them without reference counting. Empty for traces that move
// their base frame (FPUSH, FPOP: the same slot number names other registers).
std::unordered_set<uint32_t> scalar_slots(const TraceIR& ir, const LoweringEnv& env);

// Exits build the sunk allocations (VNEWLIST, VNEWTENSOR) their snapshots
// name. A SunkObject is one of them with the registers that name it: a
// tensor assigned to two variables is built once and stored into both (the
// program may mutate it through either name).
struct SunkObject {
  uint32_t ref = 0;
  std::vector<uint32_t> slots;
};
// Splits a snapshot's entries: the sunk allocations, in the order they are
// first named, go to the result; the other entries to `values`.
std::vector<SunkObject> split_sunk_entries(const TraceIR& ir, const std::vector<SnapshotEntry>& entries,
                                           std::vector<SnapshotEntry>& values);
// tessera_jit_materialize_tensor's `layout` for VNEWTENSOR `ref`: {dtype,
// rank, dim0, ..., dim(rank-1)}. Throws std::runtime_error (naming the
// instruction) unless the helper can build it from its elements: the
// virtual tensor exists, the element count is its shape's, and the
// elements are floats for a float dtype, ints or bools otherwise.
std::vector<int64_t> sunk_tensor_layout(const TraceIR& ir, uint32_t ref);

// FPOP after `RETGUARD caller, ret_pc`: how many registers below the
// returning frame's base the caller's base lies. A user function's frame is
// always pushed by a CALL (the interpreter's, FPUSH's, or an exit rebuilding
// an inlined call), one register above the CALL's register `a`, so this is
// a + 1 for the CALL before ret_pc; 0 when that instruction is no CALL (the
// code then reads the caller frame's base index instead).
uint32_t caller_base_distance(const FunctionProto& caller, uint32_t ret_pc);

// The environment for compiling `ir`: the layouts, the linking, and the
// trace's call table copied into `call_store` (which must live as long as
// the code: generated code embeds the copies' addresses; deque: stable).
LoweringEnv make_lowering_env(const TraceIR& ir, const ObjectLayout& layout, std::deque<CallTarget>& call_store,
                              const ExitLinking& linking, const FunctionProto* proto, const uint8_t* global_watch);

}  // namespace tessera::jit
