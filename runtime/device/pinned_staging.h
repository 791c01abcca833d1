// PinnedStaging: copies between the host's pageable memory (tensor buffers)
// and the device through a few page-locked ("pinned") host buffers.
//
// Why: the DMA engines read and write only pinned memory. Given a pageable
// buffer the driver stages it itself, through its own small buffers, and an
// upload returns only once the whole source has been staged. With buffers
// of our own, an upload copies the tensor into one chunk by chunk and
// enqueues the device's copy of each; it returns once the host's bytes are
// in the buffers (the tensor may then change or go), while the device's
// copies run on in stream order. Two buffers alternate, so the host fills
// one while the device drains the other; a download likewise enqueues two
// chunks ahead and copies each out as it lands.
//
// The device's side is a StagingLink (the CUDA stream's in gpu_stream.h; a
// fake in the tests, whose copies happen only when waited for, so that a
// buffer reused too early shows as wrong bytes). Where no pinned memory can
// be had (a locked-memory limit) the calls return false and the caller
// copies directly; the reason is kept for --stats.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "runtime/device/device_allocator.h"

namespace tessera::device {

// What PinnedStaging needs of a device's stream.
class StagingLink {
 public:
  virtual ~StagingLink() = default;
  // Page-locked host memory; nullptr when there is none to be had (why_not
  // says why).
  virtual void* allocate_pinned(size_t bytes, std::string& why_not) = 0;
  virtual void free_pinned(void* p) = 0;
  // Enqueue a copy on the stream (asynchronous).
  virtual void to_device(DevicePtr to, const void* pinned, size_t bytes) = 0;
  virtual void to_host(void* pinned, DevicePtr from, size_t bytes) = 0;
  // Marks the point of the stream that buffer `slot`'s copies end at; wait()
  // blocks the host until the stream has passed the slot's last mark.
  virtual void mark(int slot) = 0;
  virtual void wait(int slot) = 0;
};

class PinnedStaging {
 public:
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  static constexpr int kBuffers = 2;

  explicit PinnedStaging(StagingLink& link, size_t chunk_bytes = kChunkBytes);
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging();  // waits for the buffers' copies, then frees them

  // Host to device; returns once `from` has been read (the device's copies
  // go on in stream order). False (nothing done) without pinned memory.
  bool upload(DevicePtr to, const void* from, size_t bytes);
  // Device to host, after the work enqueued before it; returns once `to`
  // holds the bytes. False (nothing done) without pinned memory.
  bool download(void* to, DevicePtr from, size_t bytes);

  struct Stats {
    uint64_t uploads = 0, downloads = 0, bytes = 0;  // staged
    size_t pinned_bytes = 0;                          // the buffers' size, once made
    std::string unavailable;                          // why copies are direct, if they are
  };
  Stats stats() const;

 private:
  bool ready();  // the buffers, made on the first copy
  int take();    // the next buffer, once the device is done with it

  StagingLink& link_;
  size_t chunk_;
  std::array<void*, kBuffers> buffers_{};
  std::array<bool, kBuffers> marked_{};
  int next_ = 0;
  bool tried_ = false;
  mutable std::mutex mu_;  // a tensor may be read back from any thread
  Stats stats_;
};

}  // namespace tessera::device
