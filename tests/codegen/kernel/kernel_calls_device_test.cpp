// KernelCalls' device: installed, or chosen by a resolver at the first call
// that asks for one (--device=auto), once, and dropped by its owner.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "codegen/kernel/cpu/kernel_calls.h"

namespace tessera::kir {
namespace {

class NoDevice final : public KernelDevice {
 public:
  std::optional<Value> run(const Region&, std::shared_ptr<void>&, std::span<const Value>) override { return std::nullopt; }
};

// Leaves the process's KernelCalls without a device, whatever a test did.
struct KernelCallsDeviceTest : ::testing::Test {
  void TearDown() override { KernelCalls::process().set_device(nullptr); }
};

TEST_F(KernelCallsDeviceTest, AResolverRunsAtTheFirstCallOnlyAndItsDeviceStays) {
  KernelCalls& calls = KernelCalls::process();
  auto device = std::make_shared<NoDevice>();
  int runs = 0;
  int owner = 0;
  calls.set_device_resolver(&owner, [&] {
    ++runs;
    return device;
  });
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(calls.installed_device(), nullptr);  // looking does not resolve
  EXPECT_EQ(calls.device(), device);
  EXPECT_EQ(calls.device(), device);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(calls.installed_device(), device);
}

TEST_F(KernelCallsDeviceTest, CallersFromManyThreadsShareOneResolution) {
  KernelCalls& calls = KernelCalls::process();
  auto device = std::make_shared<NoDevice>();
  std::atomic<int> runs{0};
  int owner = 0;
  calls.set_device_resolver(&owner, [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive meanwhile
    return device;
  });
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<KernelDevice>> seen(4);
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = calls.device(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  for (const auto& d : seen) EXPECT_EQ(d, device);
}

TEST_F(KernelCallsDeviceTest, AnOwnerDropsOnlyItsOwnResolver) {
  KernelCalls& calls = KernelCalls::process();
  int mine = 0, other = 0;
  bool ran = false;
  calls.set_device_resolver(&mine, [&] {
    ran = true;
    return std::shared_ptr<KernelDevice>(std::make_shared<NoDevice>());
  });
  calls.drop_device_resolver(&other);  // not its resolver: stays
  calls.drop_device_resolver(&mine);
  EXPECT_EQ(calls.device(), nullptr);
  EXPECT_FALSE(ran);
}

TEST_F(KernelCallsDeviceTest, SettingADeviceReplacesAPendingResolver) {
  KernelCalls& calls = KernelCalls::process();
  auto device = std::make_shared<NoDevice>();
  int owner = 0;
  bool ran = false;
  calls.set_device_resolver(&owner, [&] {
    ran = true;
    return std::shared_ptr<KernelDevice>();
  });
  calls.set_device(device);
  EXPECT_EQ(calls.device(), device);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tessera::kir
