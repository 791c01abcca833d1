// DeviceAllocator: the caching allocator of device memory. cuMemAlloc and
// cuMemFree synchronize the device and cost microseconds to milliseconds, so
// a tensor program that allocates an output per kernel call must not call
// them per call: freed blocks are kept in the cache of their size class and
// handed out again. Size classes are 512 bytes up to 4 KiB, then four per
// power of two (2^k, 1.25, 1.5, 1.75 x 2^k), so a block wastes at most a
// fifth of itself.
//
// Stream-ordered: the runtime issues every kernel and copy on one stream, so
// a block freed by the host after it enqueued the block's last use may be
// reused at once by work enqueued later (the stream runs them in order); a
// block leaves the cache for the driver only after a synchronize().
//
// Out of memory: the allocator synchronizes, returns its whole cache to the
// driver and tries once more; if that fails too, DeviceOutOfMemory says what
// was asked for and what was in use, cached and at the high-water mark.
//
// The memory itself comes from a DeviceMemoryBackend: the CUDA driver on a
// GPU (cuda_memory.h), a fake in the tests. Not thread-safe: one per device,
// used by the thread that runs the trace (the background compiler never
// allocates device memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/device/device_error.h"

namespace tessera::device {

using DevicePtr = uint64_t;  // CUdeviceptr

class DeviceMemoryBackend {
 public:
  virtual ~DeviceMemoryBackend() = default;
  // A block of `bytes`, or 0 when the device is out of memory; throws
  // DeviceError on other failures.
  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void release(DevicePtr p) = 0;
  // Waits for the work enqueued so far (before blocks go back to the driver).
  virtual void synchronize() = 0;
};

struct DeviceOutOfMemory : DeviceError {
  using DeviceError::DeviceError;
};

class DeviceAllocator {
 public:
  explicit DeviceAllocator(DeviceMemoryBackend& backend) : backend_(backend) {}
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;
  // Returns the cache to the backend (blocks still in use are the caller's leak).
  ~DeviceAllocator();

  // A block of at least `bytes` (0 is allowed and gives a 512-byte block);
  // throws DeviceOutOfMemory.
  DevicePtr allocate(size_t bytes);
  // Back into its size class's cache. Freeing a pointer this allocator did
  // not hand out, or twice, throws std::invalid_argument.
  void free(DevicePtr p);
  // Synchronizes and returns every cached block to the backend.
  void release_cache();

  static size_t size_class(size_t bytes);

  struct Stats {
    uint64_t allocations = 0;  // allocate() calls
    uint64_t reuses = 0;       // served from the cache
    uint64_t backend_allocations = 0, backend_releases = 0;
    uint64_t out_of_memory_retries = 0;  // a full cache released to retry
    uint64_t in_use_bytes = 0, cached_bytes = 0, high_water_bytes = 0;  // by size class
  };
  const Stats& stats() const { return stats_; }

 private:
  DevicePtr from_backend(size_t cls);

  DeviceMemoryBackend& backend_;
  std::map<size_t, std::vector<DevicePtr>> cache_;  // by size class
  std::unordered_map<DevicePtr, size_t> live_;      // handed out: its class
  Stats stats_;
};

// One block of a DeviceAllocator, freed when the handle goes unless
// release() handed it on (to a tensor's device copy): a failure at any step
// of a call leaves no block of the call allocated.
class DeviceBlock {
 public:
  DeviceBlock(DeviceAllocator& a, size_t bytes) : alloc_(&a), p_(a.allocate(bytes)) {}
  DeviceBlock(DeviceBlock&& o) noexcept : alloc_(o.alloc_), p_(o.p_) { o.p_ = 0; }
  DeviceBlock& operator=(DeviceBlock&&) = delete;
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;
  ~DeviceBlock() {
    if (p_) alloc_->free(p_);
  }
  DevicePtr get() const { return p_; }
  DevicePtr release() {
    const DevicePtr p = p_;
    p_ = 0;
    return p;
  }

 private:
  DeviceAllocator* alloc_;
  DevicePtr p_;
};

}  // namespace tessera::device
