// TraceJit: the trace compiler's control loop — start recording at hot
// loops, hot function entries and hot exits; compile finished traces with
// the tier the `tier` parameter picks (T1: asmjit, here; T2: LLVM, here or on
// the CompileWorker's thread with async=1; auto: T1 first, then T2 in the
// background once a trace has run `tier2` iterations, swapped in at its loop
// header through the tier-up exit);
// install them (patch the loop's back-edge, set the function's entry trace,
// link the parent's exit); run traces and hand their exits to deopt/;
// invalidate traces whose assumed globals change; and keep the counters
// that --stats reports. Roots whose recordings keep aborting wait and are
// blacklisted by tracer/blacklist.h.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "deopt/exit_plan.h"
#include "deopt/exit_policy.h"
#include "optimizer/pipeline.h"
#include "runtime/jit_params.h"
#include "runtime/tier_profile.h"
#include "tracer/blacklist.h"
#include "tracer/recorder.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit {

class LlvmBackend;
class AsmjitBackend;
class CompileWorker;
struct CompiledTrace;

// One compiled trace.
struct Trace {
  enum class Kind : uint8_t {
    Loop,      // root trace of a loop, entered at its patched back-edge
    Function,  // root trace of a function, entered when it is called
    Side,      // hangs off an exit of another trace
  };
  uint32_t id;
  Kind kind = Kind::Loop;
  FunctionProto* proto;  // valid while its module runs; reports use the copies below
  std::string function;  // the function the trace starts in
  int line = 0;          // source line of the loop's back-edge (function: of `fn`)
  std::optional<uint32_t> loop_pc;  // loop traces: the back-edge instruction that enters it
  uint32_t start_pc;  // first bytecode it runs
  TraceIR ir;                // as compiled (after the optimizer)
  uint32_t recorded_size = 0;  // IR instructions as recorded
  // --dump only: the IR as recorded and after each optimizer pass.
  std::vector<std::pair<std::string, std::string>> pass_ir;
  TraceFn fn = nullptr;        // C++ enters here
  // The exit plans of the code installed now (CompiledTrace::exit_plans).
  const std::vector<ExitPlan>* exit_plans = nullptr;
  NativeTrace native = nullptr;  // linked exits jump here
  // The tier of the code installed now (1: asmjit, 2: LLVM; 0: none yet),
  // and per tier (index tier-1): the code as text for --dump, its size and
  // its compile time.
  uint8_t tier = 0;
  std::array<std::string, 2> code_text;
  std::string code_object;  // --dump: T2's object file
  std::array<size_t, 2> code_size{};
  std::array<double, 2> tier_compile_ms{};
  // tier=auto: T1 code counts iterations down here (LoweringEnv); at zero
  // it leaves through the tier-up exit. The T2 recompilation's state:
  enum class Upgrade : uint8_t { None, Queued, Done, Failed };
  Upgrade upgrade = Upgrade::None;
  uint32_t tier_up_counter = 0;
  uint32_t tier_up_interval = 0;  // what the counter restarts from (doubles while LLVM works)
  double record_ms = 0, compile_ms = 0;
  uint64_t entries = 0;
  ExitCounters exits;  // per snapshot: exits taken, failed side-trace tries
  // The native code's exit links (trace_abi.h ExitLinking), one per snapshot:
  // an attached side trace, or for a side trace's final EXIT the trace it
  // links to. Exits whose slot is set never come back to the runtime.
  std::unique_ptr<NativeTrace[]> links;
  // Side traces: the root trace they belong to and the exit they hang off.
  // Any trace that ends in a linked EXIT: the trace it links to.
  bool is_side = false;
  uint32_t root = 0, parent = 0, parent_snap = 0;
  int32_t link = -1;
  uint16_t link_snap = 0;
  uint32_t sides = 0;  // root traces: side traces attached so far
  std::vector<int> exit_lines;  // source line each snapshot resumes at
  uint32_t max_slot = 0;
  // Invalidated (a global it assumed constant was stored into), or its
  // compilation failed: nothing enters it or links to it.
  bool dead = false;
  // Recorded, waiting for its native code (async compilation).
  bool pending = false;
};

struct TraceStats {
  uint64_t hot_loops = 0, hot_functions = 0;
  uint64_t recorded = 0, compiled = 0, blacklisted = 0, side_traces = 0, invalidated = 0;
  std::array<uint64_t, kNumAbortReasons> aborts{};
  std::array<std::string, kNumAbortReasons> last_abort{};  // where the last one happened
  uint64_t ir_instructions = 0, ir_recorded = 0;  // after the optimizer / as recorded
  double record_ms = 0, compile_ms = 0, optimize_ms = 0;  // compile_ms includes optimize_ms
  // Per tier (index tier-1): traces compiled, compile time, code bytes.
  std::array<uint64_t, 2> tier_compiled{};
  std::array<double, 2> tier_compile_ms{};
  std::array<uint64_t, 2> tier_code_bytes{};
  uint64_t tier_up_exits = 0;  // T1 traces that reached `tier2` and left to be upgraded
  uint64_t upgrades = 0;       // T2 code swapped in for T1 code
  std::vector<double> tier_compile_samples[2];  // ms per trace, for medians
  // Warm-up: when the first and the last trace were compiled, in ms since
  // the TraceJit was created (-1: none yet).
  double first_trace_ms = -1, last_trace_ms = -1;
};

class TraceJit {
 public:
  // `dump_dir` non-empty: write each trace's IR, snapshots and LLVM IR there
  // as it is compiled (file names say which loop: SCRIPT-LINE-traceN.ir/.ll).
  TraceJit(VM& vm, const JitParams& params, std::string script_name, std::string dump_dir);
  ~TraceJit();

  // JitHooks protocol (forwarded by HotspotObserver).
  bool start_recording(FunctionProto& fn, uint32_t loop_pc);
  bool start_function_recording(FunctionProto& fn);
  // The interpreter's watch bytes, one per global (JitHooks::watch_globals).
  void watch_globals(uint8_t* watch, const Value* globals, size_t n);
  // Async compilation: stops the worker (after the trace it is compiling)
  // and drops what it has not installed; the interpreter is going away.
  void stop_compiling();
  // A store into global `index`: invalidates the traces that assumed it.
  void invalidate_global(uint32_t index);
  bool record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
              const Value* globals);
  void recording_failed();
  uint32_t trace_stack_need(uint32_t id) const;
  void run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit);

  // --stats: samples where the CPU time goes, per tier (TierProfile).
  void enable_tier_profile();
  const TraceStats& stats() const { return stats_; }
  const std::vector<std::unique_ptr<Trace>>& traces() const { return traces_; }
  void print_stats(std::ostream& os) const;

 private:
  void finish_recording();
  // Async compilation: installs the traces the worker has finished (called
  // at safe points: no trace runs, no recording is under way).
  void install_finished();
  void install(Trace& t, CompiledTrace& code, int tier);
  // tier=auto: swaps the T2 code of an installed T1 trace in.
  void upgrade(Trace& t, CompiledTrace& code);
  void request_upgrade(Trace& t);
  void note_compiled(Trace& t, const CompiledTrace& code, int tier);
  void use_exit_plans(Trace& t, const CompiledTrace& code);
  // Runs the trace optimizer on a recorded trace (unless opt=0), keeping the
  // per-pass IR for --dump. False: a pass failed and the trace was discarded.
  bool optimize(Trace& t);
  void discard(Trace& t, const std::string& why);
  bool pending_trace(const RootKey& root) const;
  bool pending_side_trace(uint32_t parent, uint32_t snap) const;
  void invalidate(Trace& t);
  RecorderLimits limits() const;
  void maybe_start_side_trace(Trace& t, uint32_t snap, TraceExit& exit);
  void abort_recording(AbortReason r, const std::string& detail);
  std::string code_name(const Trace& t) const;
  void dump(const Trace& t) const;

  VM& vm_;
  JitParams params_;
  std::string script_name_;
  std::string dump_dir_;
  TracePipeline optimizer_;
  ExitPolicy exit_policy_;
  Blacklist blacklist_;
  std::unique_ptr<TierProfile> profile_;     // --stats only
  std::ofstream perf_map_;                    // perfmap=1 only
  std::unique_ptr<AsmjitBackend> baseline_;  // T1 (tier=1, auto)
  std::unique_ptr<LlvmBackend> backend_;    // T2, synchronous compilation (async=0)
  std::unique_ptr<CompileWorker> worker_;   // T2 in the background (async=1, tier-up)
  std::unique_ptr<TraceRecorder> recorder_;
  double record_start_ms_ = 0;
  double created_ms_ = 0;
  std::vector<std::unique_ptr<Trace>> traces_;
  // The exit a side-trace recording starts from (valid while recording one).
  uint32_t side_parent_ = 0, side_snap_ = 0;
  std::vector<uint64_t> exit_buffer_;
  // Registers above a trace's base that any trace may touch. Traces run
  // into one another through links, and recursion moves the base frame, so
  // one need for all (the interpreter guarantees it at every entry).
  uint32_t stack_need_ = 0;
  uint8_t* global_watch_ = nullptr;
  const Value* globals_ = nullptr;
  size_t num_globals_ = 0;
  TraceStats stats_;
};

}  // namespace tessera::jit
