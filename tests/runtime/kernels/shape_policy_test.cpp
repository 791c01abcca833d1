// The one site policy (runtime/kernels/shape_policy.h), by itself: what each
// K2 call's symbols decide.
#include <gtest/gtest.h>

#include "runtime/kernels/shape_policy.h"

namespace tessera::kernels {
namespace {

TEST(ShapePolicy, AskOnceTheShapesSettledAndNotWhileBusy) {
  ShapePolicy p({.specialize = 3, .recompiles = 8});
  EXPECT_FALSE(p.observe({4, 8}, false).ask);
  EXPECT_FALSE(p.observe({4, 8}, false).ask);
  EXPECT_FALSE(p.observe({4, 8}, true).ask);  // a K3 kernel is being made: wait
  const ShapePolicy::Decision d = p.observe({4, 8}, false);
  ASSERT_TRUE(d.ask);
  EXPECT_EQ(*d.ask, (DimSpec{4, 8}));
  EXPECT_FALSE(d.recompile);
  EXPECT_EQ(p.asked(), 1);
  // The streak starts again: another `specialize` calls before the next ask.
  EXPECT_FALSE(p.observe({4, 8}, false).ask);
}

TEST(ShapePolicy, ADimThatChangedTwiceIsDynamicAndLeftOutOfTheSpec) {
  ShapePolicy p({.specialize = 2, .recompiles = 8});
  p.observe({1, 8}, false);
  EXPECT_TRUE(p.observe({2, 8}, false).now_dynamic.empty());
  const ShapePolicy::Decision d = p.observe({3, 8}, false);  // the second change
  EXPECT_EQ(d.now_dynamic, std::vector<size_t>{0});
  ASSERT_TRUE(d.ask);  // the other dim kept its value: settled
  EXPECT_EQ(*d.ask, (DimSpec{std::nullopt, 8}));
}

TEST(ShapePolicy, EveryDimDynamicOrSpecializeZeroNeverAsks) {
  ShapePolicy none({.specialize = 0, .recompiles = 8});
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(none.observe({4}, false).ask);
  ShapePolicy dyn({.specialize = 1, .recompiles = 8});
  bool asked = false;
  for (int64_t n = 1; n < 8; ++n) asked |= dyn.observe({n}, false).ask.has_value() && n > 3;
  EXPECT_FALSE(asked);
}

TEST(ShapePolicy, TheRecompileLimitIsCountedOnce) {
  ShapePolicy p({.specialize = 1, .recompiles = 1});
  EXPECT_TRUE(p.observe({4}, false).ask);
  const ShapePolicy::Decision capped = p.observe({4}, false);
  EXPECT_FALSE(capped.ask);
  EXPECT_TRUE(capped.capped_now);
  EXPECT_FALSE(p.observe({4}, false).capped_now);
}

// The device's time (the site's cumulative ms, as CUPTI's records give it)
// asks for K3 once a streak has hot_calls calls and spent hot_ms; too
// little time waits for `specialize` calls, as does a target that does not
// measure (nullopt) or hot_ms = 0.
TEST(ShapePolicy, DeviceTimeAsksBeforeTheCallCount) {
  for (double per_call : {0.3, 0.05}) {
    ShapePolicy p({.specialize = 16, .recompiles = 8, .hot_calls = 5, .hot_ms = 1.0});
    double ms = 7;  // the site's time before this streak: not counted
    int asked_at = 0;
    for (int call = 1; call <= 16 && !asked_at; ++call) {
      const ShapePolicy::Decision d = p.observe({64}, false, [&] { return std::optional<double>(ms); });
      if (d.ask) {
        asked_at = call;
        EXPECT_EQ(d.by_time, call < 16);
      }
      ms += per_call;
    }
    EXPECT_EQ(asked_at, per_call == 0.3 ? 5 : 16) << per_call;  // 4 calls' 1.2 ms are seen at the 5th
  }
  ShapePolicy unmeasured({.specialize = 16, .recompiles = 8, .hot_calls = 5, .hot_ms = 1.0});
  ShapePolicy off({.specialize = 16, .recompiles = 8, .hot_calls = 5, .hot_ms = 0});
  double ms = 0;
  for (int call = 1; call < 16; ++call) {
    EXPECT_FALSE(unmeasured.observe({64}, false, [] { return std::optional<double>(); }).ask);
    EXPECT_FALSE(off.observe({64}, false, [&] { return std::optional<double>(ms += 10); }).ask);
  }
}

}  // namespace
}  // namespace tessera::kernels
