// TraceJit: the trace compiler's control loop, the façade the interpreter's
// hooks call (through HotspotObserver). It starts recording at hot loops,
// hot function entries and hot exits, feeds the recorder, optimizes
// finished traces and hands them to the tier policy; it runs traces and
// passes their exits to deopt/ (exit counters, side traces); and it drops
// what cannot be compiled, counting why.
//
// The jobs themselves live elsewhere: which traces exist and how they are
// wired in (TraceRegistry), which tier compiles them and when code changes
// (TierPolicy), what is reported (JitTelemetry), which roots are no longer
// recorded (tracer/blacklist.h), when an exit gets a side trace
// (deopt/exit_policy.h).
#pragma once


#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deopt/exit_policy.h"
#include "optimizer/pipeline.h"
#include "runtime/kernels/kernel_runtime.h"
#include "runtime/jit_params.h"
#include "runtime/jit_telemetry.h"
#include "runtime/tier_policy.h"
#include "runtime/trace.h"
#include "runtime/trace_registry.h"
#include "tracer/blacklist.h"
#include "tracer/recorder.h"
#include "runtime/trace_graph.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit {

class TraceJit {
 public:
  // `dump_dir` non-empty: write each trace's IR, snapshots and code there
  // as it is compiled (file names say which loop: SCRIPT-LINE-traceN.ir/.ll).
  // `events`: the event log (--jit-log, events.jsonl), or null. `kernels`:
  // the VM's kernel runtime, which the traces' fused calls run on
  // (configured here from the parameters; it outlives the TraceJit).
  TraceJit(VM& vm, const JitParams& params, kernels::KernelRuntime& kernels, std::string script_name,
           std::string dump_dir, std::shared_ptr<JitEventLog> events = nullptr);

  // JitHooks protocol (forwarded by HotspotObserver).
  bool start_recording(FunctionProto& fn, uint32_t loop_pc);
  bool start_function_recording(FunctionProto& fn);
  // The interpreter's watch bytes, one per global (JitHooks::watch_globals).
  void watch_globals(uint8_t* watch, const Value* globals, size_t n);
  // Async compilation: stops the worker (after the trace it is compiling)
  // and drops what it has not installed; the interpreter is going away.
  // The event log gets the exits' counts; --dump gets the trace tree
  // (traces.dot, traces.svg: trace_graph.h).
  void stop_compiling();
  // A process that ends right after its run (the CLI, not an embedding
  // host): stop_compiling leaves a background compile in progress to
  // itself instead of waiting for it (up to tens of ms of LLVM work whose
  // result nothing would use); compile_abandoned() then says the process
  // must end with std::_Exit (CompileWorker::abandon).
  void set_abandon_compile_at_exit(bool on) { abandon_at_exit_ = on; }
  bool compile_abandoned() const { return telemetry_.stats().abandoned_compiles > 0; }
  // A store into global `index`: invalidates the traces that assumed it.
  void invalidate_global(uint32_t index);
  bool record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
              const Value* globals);
  // The interpreter stopped the recording: an error (ErrorRaised), or a
  // host's call returned (ReturnedToHost).
  void recording_failed(AbortReason why = AbortReason::ErrorRaised);
  // Where the interpreter reads the registers traces need
  // (JitHooks::trace_stack_need): kept at least the registry's figure.
  void report_stack_need_to(uint32_t& cell) { registry_.report_stack_need_to(cell); }
  // JitHooks::run_trace and call_function_trace.
  void run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit);
  uint32_t call_function_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit);

  // --stats: samples where the CPU time goes, per tier (TierProfile).
  void enable_tier_profile() { telemetry_.enable_tier_profile(); }
  const TraceStats& stats() const { return telemetry_.stats(); }
  const std::vector<std::unique_ptr<Trace>>& traces() const { return registry_.all(); }
  // Exits taken back to the interpreter, over every trace.
  uint64_t exits_taken() const;
  void print_stats(std::ostream& os) const { telemetry_.print_stats(os, registry_.all(), kernels_.stats()); }
  const JitTelemetry& telemetry() const { return telemetry_; }
  const std::vector<BlacklistedRoot>& blacklisted() const { return blacklisted_; }

 private:
  // The checks every root recording passes first; installs finished code.
  bool may_record(const RootKey& root);
  void finish_recording();
  // The finished recording as a Trace, not yet optimized or compiled.
  std::unique_ptr<Trace> take_recording(double now);
  // Runs the trace optimizer on a recorded trace (unless opt=0), keeping the
  // per-pass IR for --dump. False: a pass failed and the trace was dropped.
  bool optimize(Trace& t);
  // Drops a trace that will not run, counting why; a side trace's exit
  // waits longer before it tries again.
  void discard(Trace& t, AbortReason r, std::string why);
  // A recording from `root` aborted, or its trace was dropped: back-off,
  // and blacklisting after `blacklist` failures (counted, logged at `at`).
  void root_failed(const RootKey& root, int line, const std::string& at);
  // Installs what the worker finished (at safe points: no trace runs, no
  // recording is under way).
  void install_finished();
  RecorderLimits limits() const;
  // `base`: the registers as the exit left them.
  void maybe_start_side_trace(Trace& t, uint32_t snap, TraceExit& exit, const Value* base);
  // Whether exit `snap` of loop trace `t`, at the body's start, was taken
  // because a type changed: an entry type guard failed (the loop runs with
  // other types now), or, in a loop's first trace, the type guard of an
  // element loaded first in the body. The exit then gets a peer loop trace,
  // not a side trace.
  bool wants_peer(const Trace& t, uint32_t snap, const Value* base) const;
  // The loop (or function) trace whose tree trace `id` belongs to: itself,
  // or the nearest peer or root above a side trace.
  uint32_t home_loop_trace(uint32_t id);
  // Whether registers `R` have the types loop trace `t`'s entry guards want.
  static bool entry_types_hold(const Trace& t, const Value* R);
  // For recordings that run into a patched back-edge: the loop's trace
  // (`home` if given and it takes them, else the first, or a peer) whose
  // entry types the registers have.
  TraceRecorder::LoopTraceChoice loop_trace_choice(std::optional<uint32_t> home = std::nullopt);
  // The recording under way hangs off an exit (side trace or peer).
  bool recording_from_exit() const { return recorder_->is_side() || recorder_->is_peer(); }
  void abort_recording(AbortReason r, const std::string& detail);
  void timeline_trace_run(JitTimeline& tl, uint32_t id, uint32_t code, double entered);
  // run_trace's parts. enter: runs trace `id` to the exit it returns by (its
  // code, TraceRegistry::exit_of); enter_observed: the same, timed and named
  // for a listening tool. take_exit: an exit other than a function's own
  // return, for the interpreter to resume at (and a side trace to record).
  // enter_nested: enter's slow half, for a trace entered while another runs
  // (none does today: host functions cannot run code of their VM, and
  // traces call no script function through a helper; a helper that did
  // would get a context of its own here).
  // run: both entries' common part; enter and the exit that came back
  // decoded, `returned` when it is the function's own return in the frame
  // that entered (Trace::returns; counted).
  struct Ran {
    Trace& t;
    uint32_t snap;
    bool returned;
  };
  [[gnu::always_inline]] Ran run(uint32_t id, Value* base, Value* globals, FrameRegion& frames);
  [[gnu::always_inline]] uint32_t enter(uint32_t id, Value* base, Value* globals, FrameRegion& frames);
  [[gnu::noinline]] uint32_t enter_nested(uint32_t id, Value* base, Value* globals, FrameRegion& frames);
  uint32_t run_native(uint32_t id, Value* base, Value* globals, FrameRegion& frames, JitContext& ctx);
  [[gnu::noinline]] uint32_t enter_observed(uint32_t id, Value* base, Value* globals, FrameRegion& frames);
  [[gnu::noinline]] void take_exit(Trace& t, uint32_t snap_no, TraceExit& exit, const Value* base);
  // The event log's record.start (only when it is read).
  void log_record_start(const char* kind, int line, EventFields more = {});

  VM& vm_;
  JitParams params_;
  kernels::KernelRuntime& kernels_;
  TracePipeline optimizer_;
  ExitPolicy exit_policy_;
  Blacklist blacklist_;
  JitTelemetry telemetry_;
  TraceRegistry registry_;
  // one_byte_strings() of the thread that last ran a trace (run_trace).
  const Value* strings_ = nullptr;
  const void* strings_thread_ = nullptr;  // this_thread_id() of that thread
  // The outermost entry's context: the fields that never change (the VM,
  // this TraceJit, the kernels) are set once, so that entering a trace from
  // a host's call writes only the frame's pointers. A trace entered while
  // another runs (entry_ctx_busy_) gets one of its own (enter_nested).
  JitContext entry_ctx_{nullptr};
  bool entry_ctx_busy_ = false;
  bool nvtx_attached_ = false;  // nvtx::attached(), asked by the constructor: run_trace reads it on every entry
  TierPolicy tiers_;  // after what it uses; its worker stops first
  std::unique_ptr<TraceRecorder> recorder_;
  double record_start_ms_ = 0;
  std::string record_at_;  // the recording's FILE:LINE, for the event log
  std::vector<BlacklistedRoot> blacklisted_;  // for the trace tree
  std::vector<uint32_t> stored_globals_;      // AssumedGlobalStored's: never assumed again
  // The exit a side-trace recording starts from (valid while recording one).
  uint32_t side_parent_ = 0, side_snap_ = 0;
  bool abandon_at_exit_ = false;
};

}  // namespace tessera::jit
