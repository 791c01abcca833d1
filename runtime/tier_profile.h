// TierProfile: where the process spends its CPU time, by host tier, for
// --stats. Linked traces hop from trace to trace (and from tier to tier)
// without returning to the runtime, so entries cannot be timed; instead a
// profiling timer (ITIMER_PROF, every 1 ms of CPU time, or every scheduler
// tick where that is longer) samples the interrupted program counter and
// counts it against the code ranges of T1 and T2 traces, or "elsewhere"
// (interpreter, recorder, compilers, runtime); the process's measured CPU
// time is split in those proportions.
// One profile may run per process (the signal handler is process-wide);
// Linux x86-64 only, elsewhere start() does nothing. After stop() a process
// that had no SIGPROF handler ignores SIGPROF (a late timer signal must not
// kill it); a handler the host had is restored.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>

namespace tessera::jit {

class TierProfile {
 public:
  static constexpr double kIntervalMs = 1.0;
  TierProfile() = default;
  ~TierProfile();
  TierProfile(const TierProfile&) = delete;
  TierProfile& operator=(const TierProfile&) = delete;

  // Starts sampling; false if another profile runs or the timer cannot be set.
  bool start();
  void stop();
  // Registers [begin, begin + size) as code of `tier` (1 or 2) of trace
  // `trace`. Called on the thread that installs code, never concurrently
  // with itself.
  void add_code(const void* begin, size_t size, int tier, uint32_t trace);
  // Samples: [0] elsewhere, [1] in T1 code, [2] in T2 code.
  std::array<uint64_t, 3> samples() const;
  // The process's CPU time from start() to stop() (or to now), in ms, split
  // as the samples are. A sample is not kIntervalMs of CPU time: the kernel
  // sends at most one timer signal per scheduler tick (4 ms at HZ=250).
  std::array<double, 3> cpu_ms() const;
  // The CPU time in each trace's code (both tiers), split as the samples
  // are: the trace viewer's time per trace and per line.
  std::map<uint32_t, double> trace_cpu_ms() const;

  // From the signal handler; `vm_thread`: it interrupted the thread that
  // started the profile (whose interpreter's samples are counted by line).
  void sample(uintptr_t pc, bool vm_thread = false);
  // The CPU time one sample stands for, in ms (0: no sample yet).
  double ms_per_sample() const;

 private:
  static constexpr size_t kMaxRanges = 8192;  // further code is counted as elsewhere
  std::array<std::atomic<uintptr_t>, kMaxRanges> begin_{};
  std::array<std::atomic<uintptr_t>, kMaxRanges> end_{};
  std::array<std::atomic<uint8_t>, kMaxRanges> tier_{};
  std::array<std::atomic<uint32_t>, kMaxRanges> trace_{};
  std::array<std::atomic<uint64_t>, kMaxRanges> range_samples_{};
  std::atomic<size_t> ranges_{0};
  std::array<std::atomic<uint64_t>, 3> samples_{};
  bool running_ = false;
  int64_t cpu_start_ns_ = 0, cpu_stop_ns_ = -1;  // CLOCK_PROCESS_CPUTIME_ID; -1: running
};

}  // namespace tessera::jit
