// DeviceBackend: what the GPU kernel device (gpu_kernel_device.h) needs of a
// device: its memory (through the caching allocator), copies to and from
// it, kernels built from generated CUDA C++, and matrix products. Two
// implementations: the CUDA driver with NVRTC and cuBLASLt (cuda_backend.h),
// and the host emulation of the generated code (emulated_backend.h), which
// stands in for a GPU in the tests of machines without one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "runtime/device/device_allocator.h"
#include "runtime/device/pinned_staging.h"

namespace tessera::device {

// A kernel built for the device, ready to launch.
class LaunchableKernel {
 public:
  explicit LaunchableKernel(kir::CudaKernelSource source) : source_(std::move(source)) {}
  virtual ~LaunchableKernel() = default;
  const kir::CudaKernelSource& source() const { return source_; }
  // `blocks` blocks; args as cuLaunchKernel's (kir::cuda_kernel_args).
  // Asynchronous on the device's stream.
  virtual void launch(int64_t blocks, std::vector<void*>& args) = 0;

 private:
  kir::CudaKernelSource source_;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string describe() const = 0;
  // What kernels are built for ("sm_90a"; the emulation's "host"): part of
  // the key of the tuning choices kept (gpu_kernel_tuner.h).
  virtual std::string arch() const = 0;
  virtual DeviceAllocator& allocator() = 0;
  virtual void upload(DevicePtr to, const void* from, size_t bytes) = 0;
  // Waits for the work enqueued before it.
  virtual void download(void* to, DevicePtr from, size_t bytes) = 0;
  // Device pointers are host pointers (the emulation): the host may compute
  // a step of a region in place.
  virtual bool host_memory() const { return false; }

  // Builds a kernel; throws DeviceError (with the compiler's log) when it
  // cannot. Thread-safe: the background compiler calls it.
  virtual std::shared_ptr<LaunchableKernel> build(const kir::CudaKernelSource& src) = 0;

  // C[b] = A[b] B[b], row-major f32 with batch strides (0 broadcasts);
  // throws DeviceError where the device has no product (then the caller
  // refuses the region).
  virtual void matmul_f32(int64_t batch, int64_t m, int64_t n, int64_t k, DevicePtr a, int64_t stride_a, DevicePtr b,
                          int64_t stride_b, DevicePtr c, int64_t stride_c) = 0;

  // Milliseconds the device spends on `work` (launches on its stream):
  // CUDA events around it on a GPU; by default the host's clock, for
  // devices whose kernels run as they are launched (the emulation).
  virtual double time_ms(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  // The copies' pinned staging (pinned_staging.h); none where device
  // memory is host memory.
  virtual PinnedStaging::Stats staging() const { return {}; }

  struct BuildStats {
    uint64_t built = 0, from_cache = 0;
    double build_ms = 0;
    std::string compiler;  // "NVRTC 13.0", "host c++"
  };
  virtual BuildStats build_stats() const = 0;
};

}  // namespace tessera::device
