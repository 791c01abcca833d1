// The kernel runtime's device target: installed, or chosen by a resolver at
// the first site that asks for one (--device=auto), once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/kernels/kernel_runtime.h"

namespace tessera::kernels {
namespace {

// A target that runs nothing (every call goes on to the CPU).
class NoTarget final : public KernelTarget {
 public:
  const char* name() const override { return "none"; }
  std::string arch() const override { return "none"; }
  std::string refuses(const Region&) const override { return "runs nothing"; }
  bool builds_k2_in_background() const override { return false; }
  bool tunes() const override { return false; }
  bool times_at_call() const override { return false; }
  TimingPlan timing_plan() const override { return {}; }
  std::vector<KernelVariant> variants(const Region&, const DimSpec&, const std::vector<int64_t>&) const override {
    return {};
  }
  std::shared_ptr<const TargetKernel> compile(const Region&, const DimSpec&, const KernelVariant&) override {
    throw std::logic_error("not called");
  }
  std::optional<Value> launch(const Region&, const TargetKernel&, std::span<const Value>, const std::vector<int64_t>&,
                              CallTuning*, std::string&) override {
    return std::nullopt;
  }
  std::function<double(const TargetKernel&)> timer(const Region&, const std::vector<int64_t>&) override { return {}; }
};

TEST(KernelRuntimeDevice, AResolverRunsAtTheFirstCallOnlyAndItsDeviceStays) {
  KernelRuntime rt;
  auto device = std::make_shared<NoTarget>();
  int runs = 0;
  rt.set_device_resolver([&] {
    ++runs;
    return device;
  });
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(rt.installed_device(), nullptr);  // looking does not resolve
  EXPECT_EQ(rt.device(), device);
  EXPECT_EQ(rt.device(), device);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(rt.installed_device(), device);
}

TEST(KernelRuntimeDevice, CallersFromManyThreadsShareOneResolution) {
  KernelRuntime rt;
  auto device = std::make_shared<NoTarget>();
  std::atomic<int> runs{0};
  rt.set_device_resolver([&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive meanwhile
    return device;
  });
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<KernelTarget>> seen(4);
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = rt.device(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  for (const auto& d : seen) EXPECT_EQ(d, device);
}

TEST(KernelRuntimeDevice, SettingADeviceReplacesAPendingResolver) {
  KernelRuntime rt;
  auto device = std::make_shared<NoTarget>();
  bool ran = false;
  rt.set_device_resolver([&] {
    ran = true;
    return std::shared_ptr<KernelTarget>();
  });
  rt.set_device(device);
  EXPECT_EQ(rt.device(), device);
  EXPECT_FALSE(ran);
}

// A device that refuses the region: the CPU runs the calls, the refusal counted with its reason.
TEST(KernelRuntimeDevice, ARegionTheDeviceRefusesRunsOnTheCpu) {
  KernelRuntime rt;
  KernelRuntimeConfig c;
  c.background = false;
  rt.configure(c);
  rt.set_device(std::make_shared<NoTarget>());
  auto r = std::make_shared<const Region>(
      parse_region("%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\noutputs %2\n"));
  Value x = make_tensor(DType::F32, {4});
  for (int i = 0; i < 4; ++i) x.as_tensor()->set_f(i, i);
  const std::vector<Value> in = {x, Value::number(2.0)};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rt.run(r, in).as_tensor()->get_f(3), 6.0);
  EXPECT_EQ(rt.stats().k2_runs, 3u);
  EXPECT_EQ(rt.counters("none").refused.load(), 3u);
  EXPECT_EQ(rt.first_failure("none"), "runs nothing");
}

}  // namespace
}  // namespace tessera::kernels
