// JitTimeline: a run as a timeline in the Chrome trace event format
// (--dump DIR/timeline.json), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. Tracks (threads of one process):
//   - VM: the run; recording (from record.start to the trace's stop or
//     abort); T1 compiles and, with async=0, T2 compiles; each entry into
//     compiled code (a span per run_trace, its exit as an instant: deopt);
//     the fused calls' kernels as they run and their K2 compiles;
//   - LLVM (T2): the background compiles of T2 code, from start to end;
//   - kernel compiler: K3 compiles and tuning on the background thread;
//   - GPU kernel builds: the GPU's kernel builds (the background thread);
//   - GPU device: each GPU kernel as it ran on the device (timed with CUDA
//     events, so these launches wait for the device).
// Every other JIT event is an instant on the VM track. Spans and instants
// are kept in memory and written once, sorted by time (so the times of
// each track never go back), at the end of the run.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/kernel/kernel_events.h"

namespace tessera::jit {

class JitTimeline {
 public:
  enum class Track : int { VM = 1, Compiler = 2, KernelCompiler = 3, Gpu = 4, Device = 5 };

  // `origin_ms`: the steady-clock time (now_ms()) the timeline starts at.
  explicit JitTimeline(double origin_ms) : origin_ms_(origin_ms) {}

  // A span [start_ms, end_ms] (steady-clock times, as now_ms()).
  void span(Track track, std::string name, const char* category, double start_ms, double end_ms,
            kir::EventFields args = {});
  void instant(Track track, std::string name, const char* category, double at_ms, kir::EventFields args = {});

  // The whole trace-event JSON ({"traceEvents": [...], "displayTimeUnit": "ms"}),
  // with the process's and tracks' names; `end_ms` closes the run's span.
  std::string json(const std::string& process_name, double end_ms) const;
  // Writes json() to `path`; throws std::runtime_error when it cannot.
  void write(const std::string& path, const std::string& process_name, double end_ms) const;
  size_t size() const;

 private:
  struct Event {
    char phase;  // 'X' complete, 'i' instant
    Track track;
    std::string name;
    const char* category;
    double ts_us, dur_us;
    kir::EventFields args;
  };
  double origin_ms_;
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

}  // namespace tessera::jit
