// TierPolicy: which host tier compiles a trace, and when its code changes.
//
// The `tier` parameter picks: 1 compiles every trace with asmjit (T1), now;
// 2 with LLVM (T2), on the CompileWorker's thread with async=1 or now with
// async=0; auto starts every trace in T1, whose code counts down from
// `tier2` and then leaves through the tier-up exit, and recompiles it with
// LLVM (on the worker or now, as async says), swapping the T2 code in at the
// next safe point. So the policy owns the backends (each created once, with
// its first trace: scripts that never get hot do not pay for LLVM) and the
// worker, installs new code through the TraceRegistry, and reports to the
// JitTelemetry.
//
// Failures are values: a new trace that a backend rejects comes back as a
// CompileFailure for the trace compiler to drop and count; a failed tier-up
// is handled here (the trace stays in T1, counted as TierUpFailed).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/compile_worker.h"
#include "runtime/jit_params.h"
#include "runtime/jit_telemetry.h"
#include "runtime/trace_registry.h"

namespace tessera::jit {

class AsmjitBackend;

// A new trace no backend could compile: `reason` names the tier
// (CompileFailedT1 or CompileFailedT2), `error` is the backend's message.
struct CompileFailure {
  Trace* trace;
  AbortReason reason;
  std::string error;
};

// tier=auto: how many entries and iterations a T1 trace of `ir_size` IR
// instructions runs before its tier-up exit: `tier2` for each 100
// instructions (at least one `tier2`), as LLVM takes longer on larger traces.
uint32_t tier_up_count(uint32_t tier2, size_t ir_size);

class TierPolicy {
 public:
  TierPolicy(const JitParams& params, TraceRegistry& registry, JitTelemetry& telemetry);
  // Stops the worker first: it may be compiling a trace's IR.
  ~TierPolicy();
  TierPolicy(const TierPolicy&) = delete;
  TierPolicy& operator=(const TierPolicy&) = delete;

  // A trace just recorded and optimized: compiles and installs it now, or
  // hands it to the worker (the trace is pending until install_finished).
  // A failure leaves the trace dropped (TraceRegistry::drop).
  std::optional<CompileFailure> compile(Trace& t);
  // At a safe point (no trace runs, no recording is under way): installs
  // what the worker has finished, new traces and T2 code for T1 traces.
  // Returns the new traces it could not compile.
  std::vector<CompileFailure> install_finished();
  // Whether install_finished has anything to install (no lock: polled at
  // every trace entry).
  bool has_finished() const { return worker_ && worker_->has_finished(); }
  // The tier-up exit of T1 trace `t` was taken: recompile it with LLVM
  // (once), and poll again after twice as many iterations meanwhile.
  void tier_up(Trace& t);
  // Stops the worker and drops what it has not installed (the interpreter
  // is going away). `abandon`: a compile in progress is not waited for
  // (CompileWorker::abandon); returns whether one was.
  bool stop(bool abandon = false) {
    if (abandon && worker_ && worker_->busy()) {
      CompileWorker::abandon(std::move(worker_));
      return true;
    }
    worker_.reset();
    return false;
  }

 private:
  AsmjitBackend& t1_backend();
  LlvmBackend& t2_backend();
  CompileWorker& worker();
  CompileWorker::Job t2_job(Trace& t) const;
  CompileResult compile_t1(Trace& t);
  CompileResult compile_t2_now(Trace& t);
  // Installs a new trace's code of `tier`, or turns the error into a failure.
  std::optional<CompileFailure> install(Trace& t, CompileResult& r, int tier);
  // The end of a tier-up, whatever became of it: swaps the T2 code in, or
  // keeps the trace in T1 and counts the failure. Either way it polls no more.
  void finish_upgrade(Trace& t, CompileResult& r);

  const int tier_;  // 0: auto
  const uint32_t tier2_;
  const bool async_;
  const int64_t t2_delay_;  // ms, JitParams t2delay
  TraceRegistry& registry_;
  JitTelemetry& telemetry_;
  std::unique_ptr<AsmjitBackend> t1_backend_;  // tier=1, auto
  std::unique_ptr<LlvmBackend> t2_backend_;    // compiles in this thread (async=0)
  std::unique_ptr<CompileWorker> worker_;      // compiles in the background (async=1); last: goes first
};

}  // namespace tessera::jit
