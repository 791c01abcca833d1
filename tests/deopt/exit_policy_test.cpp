// ExitPolicy: when an exit starts a side trace, and how failed tries space
// out the next ones.
#include "deopt/exit_policy.h"

#include <gtest/gtest.h>

namespace tessera::jit {
namespace {

ExitPlan plan_of(uint16_t snap) {
  ExitPlan p;
  p.snap = snap;
  return p;
}

// Exits taken from snapshot 0 until it asks for a side trace (at most `limit`).
int exits_until_wanted(const ExitPolicy& policy, ExitCounters& c, int limit = 100000) {
  const ExitPlan plan = plan_of(0);
  for (int n = 1; n <= limit; ++n) {
    policy.count(c, plan);
    if (policy.wants_side_trace(c, plan, 0)) return n;
  }
  return -1;
}

TEST(ExitPolicy, AFailedTryDoublesTheExitsTheNextTryWaitsFor) {
  const ExitPolicy policy({.hotexit = 10, .maxside = 100, .maxsidetries = 4});
  ExitCounters c;
  c.reset(1);
  EXPECT_EQ(exits_until_wanted(policy, c), 10);
  policy.failed(c, 0);
  EXPECT_EQ(exits_until_wanted(policy, c), 10);  // 20 in all
  policy.failed(c, 0);
  EXPECT_EQ(exits_until_wanted(policy, c), 20);  // 40 in all
}

TEST(ExitPolicy, ARetriedTryGoesAgainAtTheNextExitAFewTimesThenWaitsAsAFailedOne) {
  const ExitPolicy policy({.hotexit = 10, .maxside = 100, .maxsidetries = 4});
  ExitCounters c;
  c.reset(1);
  EXPECT_EQ(exits_until_wanted(policy, c), 10);
  for (int i = 0; i < ExitPolicy::kQuickRetries; ++i) {
    policy.retry_at_next_exit(c, 0);
    EXPECT_EQ(exits_until_wanted(policy, c), 1) << "retry " << i;
  }
  // Retried enough: the next one counts as a failed try, whose wait doubles
  // (the exits so far, 18, are under the 20 it waits for).
  policy.retry_at_next_exit(c, 0);
  EXPECT_EQ(exits_until_wanted(policy, c), 2);
}

TEST(ExitPolicy, NoSideTraceOnceTheRootHasItsMaximum) {
  const ExitPolicy policy({.hotexit = 1, .maxside = 2, .maxsidetries = 4});
  ExitCounters c;
  c.reset(1);
  const ExitPlan plan = plan_of(0);
  policy.count(c, plan);
  EXPECT_TRUE(policy.wants_side_trace(c, plan, 1));
  EXPECT_FALSE(policy.wants_side_trace(c, plan, 2));
}

}  // namespace
}  // namespace tessera::jit
