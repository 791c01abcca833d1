// GpuStream: the stream the runtime issues kernels and copies on (one per
// device: the allocator's reuse of freed blocks relies on that order,
// device_allocator.h), with the copies (through pinned staging buffers:
// pinned_staging.h) and the event timing the tuner uses.
// GpuModule: a compiled kernel (cubin, or PTX the driver compiles at load)
// loaded into the device's context, launched on a stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/device_allocator.h"
#include "runtime/device/gpu_device.h"
#include "runtime/device/pinned_staging.h"

namespace tessera::device {

class GpuStream {
 public:
  explicit GpuStream(const GpuDevice& device);
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;
  ~GpuStream();

  CUstream get() const { return stream_; }
  const GpuDevice& device() const { return device_; }
  // Through the pinned staging buffers (directly where none can be had):
  // upload returns once `from` has been read; download waits for the bytes.
  void upload(DevicePtr to, const void* from, size_t bytes);
  void download(void* to, DevicePtr from, size_t bytes);
  PinnedStaging::Stats staging() const { return staging_->stats(); }
  void zero(DevicePtr p, size_t bytes);
  void synchronize();
  // Milliseconds that `work` (which enqueues on this stream) takes on the
  // device, measured with CUDA events around it.
  template <class Work>
  double time_ms(Work&& work) {
    CUevent start = event(), stop = event();
    record(start);
    work();
    record(stop);
    return elapsed_ms(start, stop);
  }

 private:
  CUevent event();
  void record(CUevent e);
  double elapsed_ms(CUevent start, CUevent stop);  // destroys both

  class Link;
  const GpuDevice& device_;
  CUstream stream_ = nullptr;
  std::unique_ptr<Link> link_;
  std::unique_ptr<PinnedStaging> staging_;
};

// The driver's memory, for DeviceAllocator.
class CudaMemory : public DeviceMemoryBackend {
 public:
  explicit CudaMemory(GpuStream& stream) : stream_(stream) {}
  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr p) override;
  void synchronize() override { stream_.synchronize(); }

 private:
  GpuStream& stream_;
};

class GpuModule {
 public:
  // Loads `image` (a cubin or PTX) and finds `entry`; a kernel that uses more
  // than 48 KiB of dynamic shared memory is allowed to (the opt-in limit).
  GpuModule(const GpuDevice& device, const std::string& image, const std::string& entry, int64_t shared_bytes);
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
  ~GpuModule();

  // Launches `blocks` blocks of `threads` threads; args as cuLaunchKernel's
  // kernelParams (kir::cuda_kernel_args). Asynchronous.
  void launch(GpuStream& stream, int64_t blocks, int threads, std::vector<void*>& args) const;

 private:
  const GpuDevice& device_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  int64_t shared_bytes_ = 0;
  std::string entry_;
};

}  // namespace tessera::device
