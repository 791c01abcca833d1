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
#include "deopt/exit_plan.h"
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
  // One exit plan per snapshot (deopt/exit_plan.h), in storage that
  // outlives the code: exits that build objects pass their plan's address
  // to tessera_jit_restore_exit.
  const std::vector<ExitPlan>* exit_plans = nullptr;
  const ExitPlan& exit_plan(uint16_t snap) const { return (*exit_plans)[snap]; }
};

// FPOP after `RETGUARD caller, ret_pc`: how many registers below the
// returning frame's base the caller's base lies. A user function's frame is
// always pushed by a CALL (the interpreter's, FPUSH's, or an exit rebuilding
// an inlined call), one register above the CALL's register `a`, so this is
// a + 1 for the CALL before ret_pc; 0 when that instruction is no CALL (the
// code then reads the caller frame's base index instead).
uint32_t caller_base_distance(const FunctionProto& caller, uint32_t ret_pc);

// What generated code points at, kept as long as the code (deques: stable
// addresses): copies of every compiled trace's call targets and its exit plans.
struct CodeData {
  std::deque<CallTarget> call_targets;
  std::deque<std::vector<ExitPlan>> exit_plans;
  // Forgets what the last compile added (it failed: nothing refers to it).
  struct Mark {
    size_t calls, plans;
  };
  Mark mark() const { return Mark{call_targets.size(), exit_plans.size()}; }
  void roll_back(Mark m) {
    call_targets.resize(m.calls);
    exit_plans.resize(m.plans);
  }
};

// The environment for compiling `ir`: the layouts, the linking, the trace's
// call table and its exit plans (plan_exits) kept in `data`. Throws
// std::runtime_error on a snapshot an exit cannot restore.
LoweringEnv make_lowering_env(const TraceIR& ir, const ObjectLayout& layout, CodeData& data,
                              const ExitLinking& linking, const FunctionProto* proto, const uint8_t* global_watch);

}  // namespace tessera::jit
