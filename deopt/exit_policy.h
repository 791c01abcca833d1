// ExitPolicy: counts a trace's exits and decides when an exit gets a side
// trace (LuaJIT's policy: an exit taken `hotexit` times starts one; a failed
// try doubles the exits the next try waits for, up to `maxsidetries` tries;
// at most `maxside` side traces per root trace; an exit inside frames the
// trace inlined gets one too, which starts in those frames).
#pragma once

#include <cstdint>
#include <vector>

#include "deopt/exit_plan.h"

namespace tessera::jit {

// Per trace: how often each snapshot's exit was taken, and how many side-
// trace recordings from it failed.
struct ExitCounters {
  std::vector<uint64_t> taken;
  std::vector<uint8_t> side_tries;
  std::vector<uint8_t> quick_retries;  // ExitPolicy::retry_at_next_exit
  void reset(size_t snapshots) {
    taken.assign(snapshots, 0);
    side_tries.assign(snapshots, 0);
    quick_retries.assign(snapshots, 0);
  }
  uint64_t total() const;
  // Read as the per-snapshot exit counts (what --stats and tests read).
  size_t size() const { return taken.size(); }
  uint64_t operator[](size_t snap) const { return taken[snap]; }
  auto begin() const { return taken.begin(); }
  auto end() const { return taken.end(); }
};

class ExitPolicy {
 public:
  struct Params {
    uint32_t hotexit = 0;
    uint32_t maxside = 0;
    uint32_t maxsidetries = 0;
  };
  explicit ExitPolicy(const Params& p) : p_(p) {}

  // An exit through `plan`'s snapshot was taken: counts it.
  void count(ExitCounters& c, const ExitPlan& plan) const { ++c.taken[plan.snap]; }
  // Whether that exit should start a side trace now, given how many side
  // traces its root trace has.
  bool wants_side_trace(const ExitCounters& c, const ExitPlan& plan, uint32_t root_sides) const;
  // A side-trace recording from `snap` failed: the next try waits longer.
  void failed(ExitCounters& c, uint32_t snap) const {
    if (c.side_tries[snap] < 255) ++c.side_tries[snap];
  }
  // A recording from `snap` failed on the state of the exit it started at,
  // which the next exit need not share (a peer loop trace whose loop ended
  // at its first check: the next exit may be one of its iterations): the
  // next exit tries again, up to kQuickRetries times per exit; after those,
  // as a failed try (the exit's other tries stay for what else it may want:
  // an entry exit is also taken by checks hoisted there, which get a side
  // trace).
  static constexpr uint8_t kQuickRetries = 8;
  void retry_at_next_exit(ExitCounters& c, uint32_t snap) const {
    if (c.quick_retries[snap] < kQuickRetries) ++c.quick_retries[snap];
    else failed(c, snap);
  }
  // A recording from `snap` stopped only because another trace it needs is
  // still compiling: no penalty, the count starts over.
  void too_early(ExitCounters& c, uint32_t snap) const { c.taken[snap] = 0; }

 private:
  Params p_;
};

}  // namespace tessera::jit
