// --metrics FILE.jsonl: what a run did, as JSON lines appended to FILE, so
// that experiment harnesses collect runs without parsing --stats:
//   - one "run" line: the script, its exit status, wall time, the device,
//     the JIT's parameters, traces (recorded, compiled, side, aborted,
//     blacklisted, invalidated), compile times per tier, CPU time per tier
//     (sampled), time in compiled code, and each fused kernel with its
//     calls, time, and achieved GB/s (and GFLOP/s for a matrix product);
//     the GPU's kernels as CUPTI recorded them, each against the device's
//     roofline, and whether CUPTI recorded (gpu_profile_json.h);
//     and this rank's collectives (calls per operation, bytes, time);
//   - one "loop" line per hot loop: where, how often it got hot, its traces
//     (root and side) with their tiers, entries, exits, compile time and
//     time in compiled code.
// Every line has the rank and world_size (0 and 1 without mpirun); under
// mpirun every rank appends its lines to the same file, all in one write.
// docs/observability.md lists the fields.
#pragma once

#include <string>

#include "runtime/hotspot_observer.h"
#include "runtime/kernel_call_tally.h"

namespace tessera {

struct RunOutcome {
  std::string script;
  int status = 0;
  double wall_ms = 0;
};

// The lines (each ending in a newline).
std::string run_metrics_lines(const HotspotObserver& rt, const RunOutcome& run, const jit::KernelCallTally* tally);

// Appends them to `path`; throws std::runtime_error when it cannot.
void append_run_metrics(const std::string& path, const HotspotObserver& rt, const RunOutcome& run,
                        const jit::KernelCallTally* tally);

// The run line of a run stopped by `signal` ("SIGINT"), written from
// another thread while the VM's still runs: only what that thread may read
// (the parameters, the kernels' tally), with "interrupted": the signal; no
// traces, compile times or loop lines.
std::string interrupted_run_metrics_line(const HotspotObserver& rt, const RunOutcome& run, const char* signal,
                                         const jit::KernelCallTally* tally);
// Appends `lines` to `path`; throws std::runtime_error when it cannot.
void append_metrics_lines(const std::string& path, const std::string& lines);

}  // namespace tessera
