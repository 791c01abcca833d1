// PinnedStaging over a fake stream whose copies happen only when the host
// waits for them (as a DMA engine's may): every byte arrives, across chunk
// boundaries and for empty copies; an upload has read its source when it
// returns; a buffer is never refilled before the device is done with it
// (that would show as wrong bytes); and without pinned memory the calls say
// so and copy nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "runtime/device/pinned_staging.h"

namespace tessera::device {
namespace {

class LazyLink : public StagingLink {
 public:
  void* allocate_pinned(size_t bytes, std::string& why_not) override {
    if (!pinned_ok) {
      why_not = "no pinned memory in this test";
      return nullptr;
    }
    ++allocations;
    return new char[bytes];
  }
  void free_pinned(void* p) override {
    ++frees;
    delete[] static_cast<char*>(p);
  }
  // The copies read and write their buffers when they run, not now.
  void to_device(DevicePtr to, const void* pinned, size_t bytes) override {
    queue.push_back([=] { std::memcpy(reinterpret_cast<void*>(to), pinned, bytes); });
  }
  void to_host(void* pinned, DevicePtr from, size_t bytes) override {
    queue.push_back([=] { std::memcpy(pinned, reinterpret_cast<const void*>(from), bytes); });
  }
  void mark(int slot) override { marks[slot] = queue.size(); }
  void wait(int slot) override { run_until(marks[slot]); }
  void run_until(size_t n) {
    for (; done < n; ++done) queue[done]();
  }
  void synchronize() { run_until(queue.size()); }

  bool pinned_ok = true;
  int allocations = 0, frees = 0;
  std::vector<std::function<void()>> queue;
  size_t done = 0;
  size_t marks[PinnedStaging::kBuffers] = {};
};

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 31 + static_cast<size_t>(seed)) & 0x7f);
  return v;
}

TEST(PinnedStaging, EveryByteArrivesBothWaysWhateverTheSize) {
  LazyLink link;
  PinnedStaging staging(link, /*chunk_bytes=*/64);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{200}, size_t{64 * 7 + 5}}) {
    std::vector<char> device(n + 1, 0);
    const auto dptr = reinterpret_cast<DevicePtr>(device.data());
    std::vector<char> src = pattern(n, static_cast<int>(n));
    ASSERT_TRUE(staging.upload(dptr, src.data(), n));
    const std::vector<char> sent = src;
    std::fill(src.begin(), src.end(), 0);  // the upload has read its source: the tensor may change
    link.synchronize();
    EXPECT_TRUE(std::equal(sent.begin(), sent.end(), device.begin())) << n << " bytes up";
    // And back, with the device's bytes changed first.
    for (size_t i = 0; i < n; ++i) device[i] = static_cast<char>(device[i] ^ 0x55);
    std::vector<char> back(n, 1);
    ASSERT_TRUE(staging.download(back.data(), dptr, n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<char>(sent[i] ^ 0x55)) << n << " bytes down, at " << i;
  }
  const PinnedStaging::Stats s = staging.stats();
  EXPECT_EQ(s.uploads, 7u);
  EXPECT_EQ(s.downloads, 7u);
  EXPECT_EQ(s.pinned_bytes, 128u);
  EXPECT_EQ(link.allocations, 2);  // made once
}

// Uploads one after another without waiting: each buffer is refilled only
// once the device has copied out what it held before.
TEST(PinnedStaging, BackToBackUploadsDoNotOverwriteABufferInFlight) {
  LazyLink link;
  PinnedStaging staging(link, 16);
  std::vector<char> device(16 * 10, 0);
  std::vector<std::vector<char>> sources;
  for (int k = 0; k < 10; ++k) {
    sources.push_back(pattern(16, k + 1));
    ASSERT_TRUE(staging.upload(reinterpret_cast<DevicePtr>(device.data() + 16 * k), sources.back().data(), 16));
  }
  EXPECT_LT(link.done, link.queue.size());  // copies still queued: nothing waited for more than it needed
  link.synchronize();
  for (int k = 0; k < 10; ++k)
    EXPECT_EQ(std::memcmp(device.data() + 16 * k, sources[static_cast<size_t>(k)].data(), 16), 0) << "upload " << k;
}

TEST(PinnedStaging, WithoutPinnedMemoryTheCallerCopiesDirectly) {
  LazyLink link;
  link.pinned_ok = false;
  PinnedStaging staging(link);
  char host[8] = {}, device[8] = {};
  EXPECT_FALSE(staging.upload(reinterpret_cast<DevicePtr>(device), host, 8));
  EXPECT_FALSE(staging.download(host, reinterpret_cast<DevicePtr>(device), 8));
  EXPECT_TRUE(link.queue.empty());
  EXPECT_EQ(staging.stats().unavailable, "no pinned memory in this test");
  EXPECT_EQ(staging.stats().pinned_bytes, 0u);
}

TEST(PinnedStaging, TheBuffersAreFreedAfterTheirCopies) {
  LazyLink link;
  {
    PinnedStaging staging(link, 32);
    char device[100] = {};
    const std::vector<char> src = pattern(100, 3);
    ASSERT_TRUE(staging.upload(reinterpret_cast<DevicePtr>(device), src.data(), 100));
  }
  EXPECT_EQ(link.frees, 2);
  EXPECT_EQ(link.done, link.queue.size());  // the buffers' copies were waited for before they were freed
}

}  // namespace
}  // namespace tessera::device
