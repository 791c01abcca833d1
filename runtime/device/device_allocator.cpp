#include "runtime/device/device_allocator.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

namespace tessera::device {

namespace {

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

DeviceAllocator::~DeviceAllocator() {
  try {
    release_cache();
  } catch (const std::exception&) {
    // A driver failing at shutdown: the process is ending its use of the device anyway.
  }
}

size_t DeviceAllocator::size_class(size_t bytes) {
  constexpr size_t kSmall = 512, kLinearUpTo = 4096;
  if (bytes <= kLinearUpTo) return std::max<size_t>(kSmall, (bytes + kSmall - 1) / kSmall * kSmall);
  // Four classes per power of two: 2^k (1 + q/4) for q = 0..3.
  const size_t pow2 = std::bit_floor(bytes);
  const size_t quarter = pow2 / 4;
  return (bytes + quarter - 1) / quarter * quarter;
}

DevicePtr DeviceAllocator::from_backend(size_t cls) {
  DevicePtr p = backend_.allocate(cls);
  if (!p) {
    ++stats_.out_of_memory_retries;
    release_cache();
    p = backend_.allocate(cls);
  }
  if (!p)
    throw DeviceOutOfMemory("device out of memory: " + std::to_string(cls) + " bytes asked for (" + mib(cls) + "), " +
                            mib(stats_.in_use_bytes) + " in use by tensors, the allocator's cache already released, " +
                            "high-water mark " + mib(stats_.high_water_bytes));
  ++stats_.backend_allocations;
  return p;
}

DevicePtr DeviceAllocator::allocate(size_t bytes) {
  const size_t cls = size_class(bytes);
  ++stats_.allocations;
  DevicePtr p = 0;
  auto it = cache_.find(cls);
  if (it != cache_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= cls;
    ++stats_.reuses;
  } else {
    p = from_backend(cls);
  }
  live_[p] = cls;
  stats_.in_use_bytes += cls;
  stats_.high_water_bytes = std::max(stats_.high_water_bytes, stats_.in_use_bytes);
  return p;
}

void DeviceAllocator::free(DevicePtr p) {
  auto it = live_.find(p);
  if (it == live_.end()) throw std::invalid_argument("DeviceAllocator::free: not a block this allocator handed out");
  const size_t cls = it->second;
  live_.erase(it);
  stats_.in_use_bytes -= cls;
  stats_.cached_bytes += cls;
  cache_[cls].push_back(p);
}

void DeviceAllocator::release_cache() {
  if (stats_.cached_bytes == 0) return;
  backend_.synchronize();
  for (auto& [cls, blocks] : cache_) {
    for (DevicePtr p : blocks) {
      backend_.release(p);
      ++stats_.backend_releases;
    }
    stats_.cached_bytes -= cls * blocks.size();
    blocks.clear();
  }
}

}  // namespace tessera::device
