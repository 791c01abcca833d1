// JitTelemetry: what the trace JIT reports about itself. The counters and
// times behind --stats (TraceStats, and the report), the sampled time per
// host tier (TierProfile), the --dump directory (each trace's IR per pass,
// snapshots and code), the perf map (perfmap=1) that names compiled code
// for Linux perf, and the event log (--jit-log, events.jsonl:
// jit_event_log.h). Nothing here changes what the JIT does.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/host/compiled_trace.h"
#include "runtime/jit_clock.h"
#include "runtime/jit_event_log.h"
#include "runtime/tier_profile.h"
#include "runtime/trace.h"
#include "tracer/recorder.h"
#include "vm/core/text_file.h"

namespace tessera::kernels {
struct KernelCallStats;
}

namespace tessera::jit {


struct TraceStats {
  uint64_t hot_loops = 0, hot_functions = 0;
  uint64_t recorded = 0, compiled = 0, side_traces = 0, invalidated = 0;
  uint64_t shared_exits = 0;  // hot exits linked to another exit's side trace
  uint64_t abandoned_compiles = 0;  // in progress at the end, not waited for (CompileWorker::abandon)
  uint64_t blacklisted_loops = 0, blacklisted_functions = 0;  // roots no longer recorded
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

  // A recording aborted, or a trace was dropped, for reason `r`; `detail`
  // says where (shown with the reason's count).
  void count_abort(AbortReason r, std::string detail) {
    ++aborts[static_cast<size_t>(r)];
    last_abort[static_cast<size_t>(r)] = std::move(detail);
  }
};

class JitTelemetry {
 public:
  // `script_name` names the traces in reports, dumps and the perf map;
  // `dump_dir` non-empty: write each trace there as it is compiled
  // (SCRIPT-LINE-traceN.ir/.s/.ll/.o); `perf_map`: append compiled code to
  // /tmp/perf-PID.map.
  JitTelemetry(std::string script_name, std::string dump_dir, bool perf_map);

  TraceStats& stats() { return stats_; }
  const TraceStats& stats() const { return stats_; }
  // --dump: whether traces are written, so that their code and per-pass IR
  // are kept as text (which costs compile time otherwise).
  bool dumping() const { return !dump_dir_.empty(); }
  const std::string& dump_dir() const { return dump_dir_; }
  const std::string& script_name() const { return script_name_; }
  // --stats: samples where the CPU time goes, per tier.
  void enable_tier_profile();

  // The event log (null: none). The JIT builds an event's fields only when
  // logging() says someone reads them.
  void set_events(std::shared_ptr<JitEventLog> log) { events_ = std::move(log); }
  bool logging() const { return events_ && events_->on(); }
  // Whether trace runs and fused calls are timed (--dump, --metrics).
  bool timing() const { return events_ && events_->timing(); }
  // The tier profile's CPU time in ms ([0] elsewhere, [1] T1, [2] T2;
  // TierProfile::cpu_ms), or none when it is off.
  std::optional<std::array<double, 3>> tier_cpu_ms() const;
  // Each trace's CPU time in ms (TierProfile::trace_cpu_ms); empty when the
  // profile is off.
  std::map<uint32_t, double> trace_cpu_ms() const { return profile_ ? profile_->trace_cpu_ms() : std::map<uint32_t, double>{}; }
  double ms_per_sample() const { return profile_ ? profile_->ms_per_sample() : 0.0; }
  // The timeline (--dump), or null.
  JitTimeline* timeline() const { return events_ ? events_->timeline() : nullptr; }
  void event(JitEventKind k, EventFields fields) const { events_->emit(k, std::move(fields)); }
  // "SCRIPT:LINE", the events' `at`.
  std::string where(int line) const { return script_name_ + ":" + std::to_string(line); }
  // At the end of the run: each trace's taken exits (exit.count events).
  void log_exit_counts(const std::vector<std::unique_ptr<Trace>>& traces) const;

  // `t` got code for `tier` (1 or 2): its size and compile time, per trace
  // and per tier, its --dump text, and its code range for the tier profile
  // and the perf map; on the timeline, the compile from `started_ms` to
  // `finished_ms` (now_ms()), on the compiler's track when `background`.
  void note_compiled(Trace& t, const CompiledTrace& code, int tier, double started_ms, double finished_ms,
                     bool background);
  // A trace was installed: it counts as compiled, and for the warm-up times.
  void note_installed();
  // --dump: writes `t` as it is now (nothing without a dump directory).
  void dump(const Trace& t) const;
  // The first trace file dump() could not write ("PATH: REASON"), or "";
  // note_dump_error keeps another file's failure if it is the first.
  std::string dump_error() const;
  void note_dump_error(const std::string& error);
  // The trace part of the --stats report.
  // `kernels`: the VM's fused calls (runtime/kernels/kernel_runtime.h).
  void print_stats(std::ostream& os, const std::vector<std::unique_ptr<Trace>>& traces,
                   const kernels::KernelCallStats& kernels) const;

 private:
  std::string script_name_;
  std::string dump_dir_;
  bool perf_map_enabled_;
  std::ofstream perf_map_;                 // opened with the first code
  std::unique_ptr<TierProfile> profile_;  // --stats only
  std::shared_ptr<JitEventLog> events_;
  double created_ms_;
  TraceStats stats_;
  mutable std::mutex dump_mu_;
  mutable FirstWriteError dump_error_;  // under dump_mu_
};

}  // namespace tessera::jit
