// CUPTI on a GPU (skips without one): the real library records every kernel
// of a chain of fused calls, tied to its call by the external correlation
// ids, with its launch shape and registers; the tuner ranks variants by
// CUPTI's kernel time; and the cost of the records, on and off in one run,
// is printed for the results (never asserted: tests check behaviour).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "runtime/device/cuda_backend.h"
#include "runtime/device/device_selection.h"
#include "runtime/kernels/gpu_target.h"
#include "runtime/kernels/kernel_runtime.h"

namespace tessera::kernels {
namespace {

constexpr const char* kChain =
    "%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\n%3 = tanh(%2) : f32[s0]\noutputs %3\n";

Value ramp(int64_t n) {
  Value v = make_tensor(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) v.as_tensor()->set_f(i, static_cast<double>(i % 100) / 100.0);
  return v;
}

struct Gpu {
  Gpu(const device::DeviceSelection& sel, bool cupti, int specialize) {
    KernelRuntimeConfig c;
    c.specialize = specialize;
    c.background = false;
    rt.configure(c);
    GpuTarget::Options o;
    o.cupti = cupti;
    gpu = std::make_shared<GpuTarget>(std::make_shared<device::CudaBackend>(sel), rt.store(), o);
    rt.set_device(gpu);
  }
  // `calls` fused calls, each reading the last one's output (it stays on the device).
  Value chain(int calls, int64_t n) {
    Value x = ramp(n);
    for (int i = 0; i < calls; ++i) x = rt.run(region, std::vector<Value>{x, Value::number(0.999)});
    return x;
  }
  KernelRuntime rt;
  std::shared_ptr<GpuTarget> gpu;
  std::shared_ptr<const Region> region = std::make_shared<const Region>(parse_region(kChain));
};

TEST(CuptiDevice, EveryKernelOfTheCallsIsRecordedWithItsLaunch) {
  const device::DeviceSelection sel = device::select_device(device::DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  Gpu g(sel, true, 0);
  ASSERT_TRUE(g.gpu->profile().active()) << g.gpu->profile().why_not();
  g.chain(50, 1 << 20);
  g.gpu->finish_profile();
  const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].calls, 50u);
  EXPECT_EQ(ks[0].name, "tsr_region");
  EXPECT_GT(ks[0].registers, 0u);
  EXPECT_GT(ks[0].threads, 0);
  EXPECT_GT(ks[0].device_ms, 0);
  std::printf("%s", g.gpu->report(g.rt).c_str());
}

TEST(CuptiDevice, TheTunerRanksVariantsByCuptisTime) {
  const device::DeviceSelection sel = device::select_device(device::DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  Gpu g(sel, true, 2);
  g.chain(6, 3 << 20);
  g.gpu->finish_profile();
  const std::string report = g.gpu->report(g.rt);
  EXPECT_EQ(g.rt.counters("gpu").k3_tuned.load(), 1u);
  EXPECT_NE(report.find("by CUDA events 0"), std::string::npos) << report;
  std::printf("%s", report.c_str());
}

// The records' cost: the same chain with CUPTI's activity on and off,
// alternating (the process's activity turned off for the runs without it),
// after both have loaded their kernels. Printed as a result
// line for experiments/results/ (gpu-profile-*.md), not asserted.
TEST(CuptiDevice, TheRecordsCostIsMeasuredOnAndOff) {
  const device::DeviceSelection sel = device::select_device(device::DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  Gpu on(sel, true, 0), off(sel, false, 0);
  constexpr int kCalls = 2000;
  constexpr int64_t kElements = 1 << 16;  // small kernels: the per-launch cost shows
  on.chain(10, kElements), off.chain(10, kElements);
  std::string why;
  device::KernelActivity* activity = device::kernel_activity(on.gpu->backend(), why);
  ASSERT_NE(activity, nullptr) << why;
  double best_on = 1e300, best_off = 1e300;
  for (int round = 0; round < 5; ++round)
    for (Gpu* g : {&off, &on}) {
      activity->set_enabled(g == &on);
      const auto start = std::chrono::steady_clock::now();
      Value out = g->chain(kCalls, kElements);
      (void)out.as_tensor()->get_f(0);  // waits for the device
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      (g == &on ? best_on : best_off) = std::min(g == &on ? best_on : best_off, ms);
    }
  activity->set_enabled(true);
  on.gpu->finish_profile();
  std::printf("RESULT cupti_overhead calls=%d elements=%lld off_ms=%.3f on_ms=%.3f overhead_pct=%.2f per_launch_us=%.3f "
              "instrumentation_ms=%.3f\n",
              kCalls, static_cast<long long>(kElements), best_off, best_on, (best_on / best_off - 1) * 100,
              (best_on - best_off) * 1000 / kCalls, on.gpu->profile().instrumentation_ms());
  EXPECT_GT(on.gpu->profile().records(), static_cast<uint64_t>(kCalls));
}

}  // namespace
}  // namespace tessera::kernels
