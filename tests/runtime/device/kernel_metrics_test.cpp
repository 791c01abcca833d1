// KernelMetrics (runtime/device/kernel_metrics.h) over the CUPTI test
// double (tests/runtime/device/cupti_double_profiler.cpp), loaded in CUPTI's
// place with TESSERA_CUPTI_LIBRARY on the host emulation: the Range
// Profiler's whole sequence, the figures of the launch it measured, the
// reasons it gives when it cannot measure. The figures are the double's
// inventions from the launch shape (its header), checked here to be those of
// the measured launch and no other.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "runtime/device/cupti_library.h"
#include "runtime/device/device_error.h"
#include "runtime/device/emulated_backend.h"
#include "runtime/device/kernel_metrics.h"

namespace tessera::device {
namespace {

// The emulation's device with the double's metrics. A launch is what the
// emulation tells the double of a kernel it ran (its hook).
struct DoubleMetrics {
  DoubleMetrics() {
    setenv("TESSERA_CUPTI_LIBRARY", TESSERA_CUPTI_DOUBLE, 1);
    metrics = kernel_metrics(backend, why);
  }
  static void launch(const char* name, int32_t blocks, int32_t threads) {
    const int32_t grid[3] = {blocks, 1, 1}, block[3] = {threads, 1, 1};
    Cupti::get().emulation_hook()(name, grid, block, 0, 0, 1000, 2000);
  }
  EmulatedBackend backend;
  std::string why;
  std::unique_ptr<KernelMetrics> metrics;
};

// An environment variable of the double's, set for one test.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

TEST(KernelMetrics, OneLaunchIsMeasuredInTheReplayPassesItsMetricsNeed) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  std::string why;
  int launches = 0;
  std::optional<KernelMetricFigures> f = d.metrics->measure(
      [&] {
        ++launches;
        d.launch("tsr_region", 4, 256);  // 4 blocks of 8 warps: one on each of 4 SMs
      },
      why);
  ASSERT_TRUE(f) << why;
  EXPECT_EQ(launches, 1);           // kernel replay repeats it inside CUPTI, not the caller
  EXPECT_EQ(f->passes, 2);          // three metrics, two a pass (the double)
  EXPECT_DOUBLE_EQ(f->occupancy_pct, 100.0 * 8 / 64);
  EXPECT_DOUBLE_EQ(f->dram_pct, 80.0 * 4 / 132);
  EXPECT_DOUBLE_EQ(f->tensor_pct, 0);  // no tensor instruction in an elementwise kernel
  EXPECT_NE(d.metrics->metric_names().find("dram__throughput.avg.pct_of_peak_sustained_elapsed"), std::string::npos);
  EXPECT_NE(d.metrics->metric_names().find("sm__pipe_tensor_cycles_active"), std::string::npos);

  // Another launch's own figures: a full device, and an attention kernel's tensor pipes.
  f = d.metrics->measure([] { DoubleMetrics::launch("tsr_region", 1320, 256); }, why);
  ASSERT_TRUE(f) << why;
  EXPECT_DOUBLE_EQ(f->occupancy_pct, 100);
  EXPECT_DOUBLE_EQ(f->dram_pct, 80);
  f = d.metrics->measure([] { DoubleMetrics::launch("tsr_attention", 132, 128); }, why);
  ASSERT_TRUE(f) << why;
  EXPECT_DOUBLE_EQ(f->occupancy_pct, 100.0 * 4 / 64);
  EXPECT_DOUBLE_EQ(f->tensor_pct, f->occupancy_pct / 2);
}

TEST(KernelMetrics, ALaunchOfNoKernelIsNotMeasured) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  std::string why;
  EXPECT_FALSE(d.metrics->measure([] {}, why));
  EXPECT_NE(why.find("no kernel ran"), std::string::npos) << why;
}

// A launch the device refuses reaches the caller (a fault must surface),
// and the profiler is left free for the next measurement.
TEST(KernelMetrics, ALaunchThatThrowsReachesTheCallerAndFreesTheProfiler) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  std::string why;
  EXPECT_THROW(d.metrics->measure([] { throw DeviceFault("the kernel faulted"); }, why), DeviceFault);
  EXPECT_TRUE(d.metrics->measure([] { DoubleMetrics::launch("tsr_region", 1, 128); }, why)) << why;
}

TEST(KernelMetrics, WithoutTheRightToReadCountersItSaysHowToGetIt) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  ScopedEnv denied("TESSERA_CUPTI_DOUBLE_PRIVILEGES", "0");
  std::string why;
  EXPECT_FALSE(d.metrics->measure([] { DoubleMetrics::launch("tsr_region", 1, 128); }, why));
  EXPECT_NE(why.find("cuptiRangeProfilerStart: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos) << why;
  EXPECT_NE(why.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << why;
}

TEST(KernelMetrics, AChipLackingAMetricIsMeasuredWithWhatItHas) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  std::string why;
  auto attention = [] { DoubleMetrics::launch("tsr_attention", 132, 128); };
  {
    ScopedEnv chip("TESSERA_CUPTI_DOUBLE_CHIP", "TESTCHIP_HMMA");  // no pipe-wide tensor metric
    std::optional<KernelMetricFigures> f = d.metrics->measure(attention, why);
    ASSERT_TRUE(f) << why;
    EXPECT_NE(d.metrics->metric_names().find("sm__pipe_tensor_op_hmma_cycles_active"), std::string::npos);
    EXPECT_GT(f->tensor_pct, 0);
  }
  {
    ScopedEnv chip("TESSERA_CUPTI_DOUBLE_CHIP", "TESTCHIP_NOTENSOR");
    std::optional<KernelMetricFigures> f = d.metrics->measure(attention, why);
    ASSERT_TRUE(f) << why;
    EXPECT_LT(f->tensor_pct, 0);  // not measured
    EXPECT_GT(f->occupancy_pct, 0);
    EXPECT_EQ(f->passes, 1);
  }
  {
    ScopedEnv chip("TESSERA_CUPTI_DOUBLE_CHIP", "XY999");
    EXPECT_FALSE(d.metrics->measure(attention, why));
    EXPECT_NE(why.find("chip XY999 is not supported"), std::string::npos) << why;
  }
}

TEST(KernelMetrics, OnlyTheThreadThatLaunchesMeasures) {
  DoubleMetrics d;
  ASSERT_TRUE(d.metrics) << d.why;
  std::string why;
  ASSERT_TRUE(d.metrics->measure([] { DoubleMetrics::launch("tsr_region", 1, 128); }, why)) << why;
  bool measured = true;
  int launches = 0;
  std::string other_why;
  std::thread other([&] {
    measured = d.metrics->measure([&] { ++launches; }, other_why).has_value();
  });
  other.join();
  EXPECT_FALSE(measured);
  EXPECT_EQ(launches, 0);
  EXPECT_NE(other_why.find("another thread"), std::string::npos) << other_why;
}

// Two VMs' metrics on one device, one after the other: each measurement
// holds the context's one range profiler only while it measures.
TEST(KernelMetrics, TwoOnOneDeviceMeasureInTurn) {
  DoubleMetrics a, b;
  ASSERT_TRUE(a.metrics && b.metrics);
  std::string why;
  EXPECT_TRUE(a.metrics->measure([] { DoubleMetrics::launch("tsr_region", 2, 128); }, why)) << why;
  EXPECT_TRUE(b.metrics->measure([] { DoubleMetrics::launch("tsr_region", 2, 128); }, why)) << why;
}

}  // namespace
}  // namespace tessera::device
