// The caching device allocator over a fake backend that counts what it is
// asked and can run out of memory: size classes, reuse without going back
// to the driver, the cache released and the allocation retried once on out
// of memory, then an error with the sizes.
#include <gtest/gtest.h>

#include <set>

#include "runtime/device/device_allocator.h"

namespace tessera::device {
namespace {

class FakeMemory : public DeviceMemoryBackend {
 public:
  explicit FakeMemory(size_t capacity) : capacity_(capacity) {}
  DevicePtr allocate(size_t bytes) override {
    ++allocations;
    if (used_ + bytes > capacity_) return 0;
    used_ += bytes;
    const DevicePtr p = next_;
    next_ += bytes + 256;
    sizes_[p] = bytes;
    return p;
  }
  void release(DevicePtr p) override {
    ++releases;
    EXPECT_TRUE(synchronized_since_alloc) << "a block went back to the driver without a synchronize";
    used_ -= sizes_.at(p);
    sizes_.erase(p);
  }
  void synchronize() override {
    ++synchronizes;
    synchronized_since_alloc = true;
  }
  size_t used() const { return used_; }
  int allocations = 0, releases = 0, synchronizes = 0;
  bool synchronized_since_alloc = false;

 private:
  size_t capacity_, used_ = 0;
  DevicePtr next_ = 0x1000;
  std::map<DevicePtr, size_t> sizes_;
};

TEST(DeviceAllocator, SizeClasses) {
  EXPECT_EQ(DeviceAllocator::size_class(0), 512u);
  EXPECT_EQ(DeviceAllocator::size_class(1), 512u);
  EXPECT_EQ(DeviceAllocator::size_class(513), 1024u);
  EXPECT_EQ(DeviceAllocator::size_class(4096), 4096u);
  EXPECT_EQ(DeviceAllocator::size_class(4097), 5120u);        // 4 KiB * 1.25
  EXPECT_EQ(DeviceAllocator::size_class(1 << 20), 1u << 20);  // a power of two is its own class
  EXPECT_EQ(DeviceAllocator::size_class((1 << 20) + 1), (1u << 20) + (1u << 18));
  for (size_t b : {4097ul, 10000ul, 123457ul, 1ul << 30, (3ul << 29) + 7}) {
    const size_t c = DeviceAllocator::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_LE(c, b + b / 4) << b;  // at most a quarter more
  }
}

TEST(DeviceAllocator, FreedBlocksAreReusedWithoutTheDriver) {
  FakeMemory mem(1 << 30);
  DeviceAllocator a(mem);
  std::set<DevicePtr> first;
  for (int i = 0; i < 4; ++i) first.insert(a.allocate(1000 + i));  // one class: 1024
  EXPECT_EQ(first.size(), 4u);
  for (DevicePtr p : first) a.free(p);
  for (int round = 0; round < 10; ++round) {
    std::vector<DevicePtr> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(a.allocate(900));
    for (DevicePtr p : ps) {
      EXPECT_TRUE(first.count(p));
      a.free(p);
    }
  }
  EXPECT_EQ(mem.allocations, 4);
  EXPECT_EQ(mem.releases, 0);
  EXPECT_EQ(a.stats().reuses, 40u);
  EXPECT_EQ(a.stats().in_use_bytes, 0u);
  EXPECT_EQ(a.stats().cached_bytes, 4 * 1024u);
  EXPECT_EQ(a.stats().high_water_bytes, 4 * 1024u);
  a.release_cache();
  EXPECT_EQ(mem.releases, 4);
  EXPECT_EQ(mem.used(), 0u);
  EXPECT_EQ(a.stats().cached_bytes, 0u);
}

TEST(DeviceAllocator, OutOfMemoryReleasesTheCacheAndRetriesOnce) {
  FakeMemory mem(10000);
  DeviceAllocator a(mem);
  const DevicePtr small = a.allocate(4000);  // class 4096
  a.free(small);                             // cached: 4096 of 10000 still held
  const DevicePtr big = a.allocate(7000);    // class 7168: fits only once the cache is released
  EXPECT_NE(big, 0u);
  EXPECT_EQ(a.stats().out_of_memory_retries, 1u);
  EXPECT_EQ(mem.releases, 1);
  EXPECT_GE(mem.synchronizes, 1);
  try {
    a.allocate(5000);
    FAIL() << "no error";
  } catch (const DeviceOutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("device out of memory: 5120 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("in use"), std::string::npos) << m;
    EXPECT_NE(m.find("high-water"), std::string::npos) << m;
  }
  a.free(big);
  EXPECT_EQ(a.stats().in_use_bytes, 0u);
}

TEST(DeviceAllocator, FreeingWhatItDidNotHandOutIsAnError) {
  FakeMemory mem(1 << 20);
  DeviceAllocator a(mem);
  const DevicePtr p = a.allocate(10);
  a.free(p);
  EXPECT_THROW(a.free(p), std::invalid_argument);
  EXPECT_THROW(a.free(12345), std::invalid_argument);
}

TEST(DeviceAllocator, TheCacheGoesBackToTheDriverAtTheEnd) {
  FakeMemory mem(1 << 20);
  {
    DeviceAllocator a(mem);
    a.free(a.allocate(100));
    a.free(a.allocate(100000));
  }
  EXPECT_EQ(mem.used(), 0u);
  EXPECT_EQ(mem.releases, 2);
}

}  // namespace
}  // namespace tessera::device
