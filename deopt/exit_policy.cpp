#include "deopt/exit_policy.h"

namespace tessera::jit {

uint64_t ExitCounters::total() const {
  uint64_t n = 0;
  for (uint64_t t : taken) n += t;
  return n;
}

bool ExitPolicy::wants_side_trace(const ExitCounters& c, const ExitPlan& plan, uint32_t root_sides) const {
  // Each failed try doubles the exits needed for the next one (a recording
  // often fails only until some other loop has its trace).
  const uint32_t tries = c.side_tries[plan.snap];
  if (tries >= p_.maxsidetries) return false;
  if (c.taken[plan.snap] < uint64_t{p_.hotexit} << tries) return false;
  return root_sides < p_.maxside;
}

}  // namespace tessera::jit
