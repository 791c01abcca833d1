// What a host backend needs to know about one trace besides its IR: where
// the interpreter's objects keep their fields, the call table, exit linking
// and the exit plans, the function of the base frame, the watch bytes of
// assumed globals, tier-up polling. Shared by the asmjit tier (T1) and the
// LLVM tier (T2), which generate the same protocol (trace_abi.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/host/code_data.h"
#include "codegen/host/object_layout.h"
#include "codegen/host/trace_abi.h"
#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"

namespace tessera {
struct FunctionProto;
}

namespace tessera::jit {

struct LoweringEnv {
  ListLayout list;
  TensorLayout tensor;
  StrLayout str;
  size_t obj_refcount_offset = 0;
  // The trace's call table, copied into storage that outlives the compiled
  // code (CodeData): the generated code embeds these addresses.
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
  // outlives the code (CodeData): exits that build objects pass their
  // plan's address to tessera_jit_restore_exit.
  const std::vector<ExitPlan>* exit_plans = nullptr;
  const ExitPlan& exit_plan(uint16_t snap) const { return (*exit_plans)[snap]; }
};

// The environment for compiling `ir`: the layouts, the linking, the trace's
// call table and its exit plans (plan_exits) kept in `data`. Throws
// std::runtime_error on a snapshot an exit cannot restore.
LoweringEnv make_lowering_env(const TraceIR& ir, const ObjectLayout& layout, CodeData& data,
                              const ExitLinking& linking, const FunctionProto* proto, const uint8_t* global_watch);

}  // namespace tessera::jit
