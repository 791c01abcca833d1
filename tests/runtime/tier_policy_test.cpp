// TierPolicy: a trace that a backend rejects is dropped and counted under
// its tier's reason, in each way it can be compiled (T1, T2 now, T2 on the
// worker), and a failed tier-up keeps the trace in T1 and polls no more.
// The rejected trace is real: one with neither a LOOP nor a final EXIT,
// which both backends refuse after the IR verifier has passed it.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "runtime/kernels/kernel_runtime.h"
#include "runtime/tier_policy.h"

namespace tessera::jit {
namespace {

JitParams params(std::initializer_list<const char*> settings) {
  JitParams p;
  for (const char* s : settings) p.set(s);
  return p;
}

// A registry and telemetry around one TierPolicy, with one trace that no
// backend compiles.
struct Fixture {
  explicit Fixture(const JitParams& p) : telemetry("t.tsb", "", false), policy(p, registry, telemetry) {
    proto.name = "f";
    auto t = std::make_unique<Trace>();
    t->id = registry.next_id();
    t->proto = &proto;
    t->function = proto.name;
    t->line = 3;
    t->start_pc = 0;
    trace = &registry.add(std::move(t));
    registry.size_exit_tables(*trace);
  }
  uint64_t aborts(AbortReason r) const { return telemetry.stats().aborts[static_cast<size_t>(r)]; }

  FunctionProto proto;
  TraceRegistry registry;
  JitTelemetry telemetry;
  TierPolicy policy;
  Trace* trace = nullptr;
};

void expect_failure(const std::optional<CompileFailure>& f, const Trace& t, AbortReason reason) {
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->trace, &t);
  EXPECT_EQ(f->reason, reason);
  EXPECT_NE(f->error.find("trace0_f_3"), std::string::npos) << f->error;
  EXPECT_NE(f->error.find("neither a LOOP nor a final EXIT"), std::string::npos) << f->error;
  EXPECT_TRUE(t.dead);
  EXPECT_FALSE(t.pending);
}

TEST(TierPolicy, AT1CompileFailureIsItsOwnReason) {
  for (const char* tier : {"tier=1", "tier=auto"}) {
    SCOPED_TRACE(tier);
    Fixture fx(params({tier}));
    expect_failure(fx.policy.compile(*fx.trace), *fx.trace, AbortReason::CompileFailedT1);
    EXPECT_EQ(fx.telemetry.stats().compiled, 0u);
  }
}

TEST(TierPolicy, AT2CompileFailureIsItsOwnReason) {
  Fixture fx(params({"tier=2", "async=0"}));
  expect_failure(fx.policy.compile(*fx.trace), *fx.trace, AbortReason::CompileFailedT2);
}

TEST(TierPolicy, ABackgroundT2CompileFailureComesBackAtASafePoint) {
  Fixture fx(params({"tier=2", "async=1"}));
  EXPECT_FALSE(fx.policy.compile(*fx.trace).has_value());
  EXPECT_TRUE(fx.trace->pending);
  std::vector<CompileFailure> failed;
  for (int i = 0; i < 3000 && failed.empty(); ++i) {
    failed = fx.policy.install_finished();
    if (failed.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(failed.size(), 1u);
  expect_failure(failed[0], *fx.trace, AbortReason::CompileFailedT2);
}

TEST(TierPolicy, AFailedTierUpKeepsTheTraceInT1AndIsCounted) {
  Fixture fx(params({"tier=auto", "tier2=5", "async=0"}));
  fx.policy.tier_up(*fx.trace);
  EXPECT_EQ(fx.trace->upgrade, Trace::Upgrade::Failed);
  EXPECT_EQ(fx.trace->tier_up_counter, UINT32_MAX);  // polls no more
  EXPECT_FALSE(fx.trace->dead);
  EXPECT_EQ(fx.aborts(AbortReason::TierUpFailed), 1u);
  EXPECT_EQ(fx.telemetry.stats().tier_up_exits, 1u);
  EXPECT_EQ(fx.telemetry.stats().upgrades, 0u);
  // Another tier-up exit (T1 code that was already counting down) does
  // not try again.
  fx.policy.tier_up(*fx.trace);
  EXPECT_EQ(fx.aborts(AbortReason::TierUpFailed), 1u);

  std::ostringstream os;
  fx.telemetry.print_stats(os, fx.registry.all(), kernels::KernelCallStats{});
  EXPECT_NE(os.str().find("aborted (tier-up: T2 (LLVM) could not recompile the trace; it stays in T1): 1 (last "),
            std::string::npos)
      << os.str();
}

}  // namespace
}  // namespace tessera::jit
