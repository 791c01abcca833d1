// DeviceBackend: what the GPU kernel target (runtime/kernels/gpu_target.h)
// needs of a device: its memory (through the caching allocator), copies to
// and from it, kernels compiled from generated CUDA C++ to an image (which
// the kernel runtime's store caches) and loaded, and matrix products. Two
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
#include "codegen/kernel/cuda/cuda_region.h"
#include "runtime/device/device_allocator.h"
#include "runtime/device/device_error.h"
#include "runtime/device/emulated_kernel_hook.h"
#include "runtime/device/gemm_desc.h"
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
  // A tensor map for one of its TensorMap arguments (kir::TensorMapEncoder):
  // the driver's cuTensorMapEncodeTiled on a GPU, the emulation's own
  // encoding there; false where the device refuses the arguments.
  virtual bool encode_tensor_map(const kir::TensorMapRequest&, kir::TensorMapBytes&) const { return false; }
  // The arguments of a launch: kir::cuda_kernel_args with this kernel's
  // encoder; `maps` holds the tensor maps and must outlive the launch.
  std::vector<void*> arguments(const std::vector<void*>& params, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& grid, std::vector<kir::TensorMapBytes>& maps) const {
    return kir::cuda_kernel_args(source_, params, dims, grid, &maps,
                                 [this](const kir::TensorMapRequest& rq, kir::TensorMapBytes& m) {
                                   return encode_tensor_map(rq, m);
                                 });
  }

 private:
  kir::CudaKernelSource source_;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string describe() const = 0;
  // What kernels are built for ("sm_90a"; the emulation's "host"): part of
  // the key of the tuning choices kept (runtime/kernels/kernel_tuner.h).
  virtual std::string arch() const = 0;
  // Whether generated kernels may use Hopper's warpgroup products (wgmma:
  // sm_90a; the host emulation emulates them, so that their kernels run in
  // its tests).
  virtual bool warpgroup_products() const { return arch() == "sm_90a"; }
  virtual DeviceAllocator& allocator() = 0;
  virtual void upload(DevicePtr to, const void* from, size_t bytes) = 0;
  // Waits for the work enqueued before it.
  virtual void download(void* to, DevicePtr from, size_t bytes) = 0;
  // Device pointers are host pointers (the emulation): the host may compute
  // a step of a region in place.
  virtual bool host_memory() const { return false; }

  // A kernel's image: the disk cache's kind of entry for it, its identity
  // (every input of the compile: source, headers, compiler, options,
  // architecture), the image (a cubin or PTX; the emulation's shared
  // library), and the image loaded for launches. compile and load throw
  // DeviceError (with the compiler's log) when they cannot; both are
  // thread-safe (the background compiler calls them).
  virtual std::string image_kind() const = 0;
  virtual std::string image_identity(const kir::CudaKernelSource& src) const = 0;
  virtual std::string compile(const kir::CudaKernelSource& src) = 0;
  virtual std::shared_ptr<LaunchableKernel> load(const kir::CudaKernelSource& src, const std::string& image) = 0;
  // Compiled and loaded, without a cache (tests, benchmarks).
  std::shared_ptr<LaunchableKernel> build(const kir::CudaKernelSource& src) { return load(src, compile(src)); }

  // The product `d` (gemm_desc.h), asynchronous on the device's stream;
  // throws DeviceError where the device has no product of it (then the
  // caller refuses the region).
  virtual void matmul(const GemmDesc& d) = 0;

  // Milliseconds the device spends on `work` (launches on its stream):
  // CUDA events around it on a GPU; by default the host's clock, for
  // devices whose kernels run as they are launched (the emulation).
  virtual double time_ms(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  // Whether its kernels run on a GPU through the CUDA driver, where CUPTI
  // can record them (kernel_activity.h).
  virtual bool cuda_driver() const { return false; }

  // Waits for every launch and copy enqueued so far.
  virtual void synchronize() {}

  // Streams and events beside the kernels' stream, for work ordered with
  // the kernels (the collectives' NCCL transport, runtime/comm/
  // nccl_transport.h). Opaque handles: a CUstream and CUevents on a GPU;
  // the emulation's (emulated_stream.h) record the order they are given,
  // its kernels having run when their launch returns. A null `stream` is
  // the kernels' stream. A stream lives as long as the backend; an event
  // until destroy_event. Throw DeviceError.
  virtual void* create_stream() { throw DeviceError(describe() + " has no streams beside its kernels'"); }
  // A new event, recorded on `stream` after the work enqueued there so far.
  virtual void* record_event(void* /*stream*/) { throw DeviceError(describe() + " has no events"); }
  // Work enqueued on `stream` from now on waits for `event`.
  virtual void stream_wait(void* /*stream*/, void* /*event*/) { throw DeviceError(describe() + " has no events"); }
  // Whether the work before `event` has completed (a fault is DeviceFault).
  virtual bool event_done(void* /*event*/) { return true; }
  virtual void destroy_event(void* /*event*/) {}
  // Makes the device current on the calling thread (libraries that use
  // the CUDA runtime's current device, as NCCL does).
  virtual void make_current() {}
  // Called before the host waits for the kernels' stream (a copy to the
  // host, synchronize(), a timing): the owner of work on another stream
  // that the kernels' stream may wait for (runtime/comm/nccl_transport.h,
  // collectives left in flight) waits for that work there, against its
  // deadline, so that the host never waits without one. One hook; an empty
  // function clears it.
  void set_host_wait_hook(std::function<void()> hook) { host_wait_hook_ = std::move(hook); }
  void before_host_wait() const {
    if (host_wait_hook_) host_wait_hook_();
  }

  // The copies' pinned staging (pinned_staging.h); none where device
  // memory is host memory.
  virtual PinnedStaging::Stats staging() const { return {}; }

  // What compiles its kernels ("NVRTC 13.0", "c++ (host emulation)").
  virtual std::string compiler() const = 0;

  // The device's peaks, for the roofline of each kernel's achieved rates
  // (--stats, the trace viewer) and its theoretical occupancy.
  struct Limits {
    double dram_gb_s = 0;         // memory bandwidth, GB/s
    double fp32_gflop_s = 0;      // FP32 arithmetic (FMA = 2 FLOPs), GFLOP/s
    double tensor_gflop_s = 0;    // dense f16/bf16 tensor-core products with f32 accumulation, GFLOP/s
    int sms = 0;
    int max_threads_per_sm = 0, max_blocks_per_sm = 0;
    int registers_per_sm = 0;     // 32-bit registers
    int shared_bytes_per_sm = 0;
    std::string source;           // where the figures come from, for the reports
  };
  virtual Limits limits() const { return {}; }  // unknown: no roofline

  // The CUDA context its kernels run in (a CUcontext) and the device's
  // ordinal, for CUPTI's profiler (kernel_metrics.h); none on the emulation.
  virtual void* cuda_context() const { return nullptr; }
  virtual int device_index() const { return 0; }

  // The host emulation tells `hook` of each kernel it runs (a CUPTI test
  // double's way of seeing them); a GPU has CUPTI itself and ignores it.
  virtual void set_emulated_kernel_hook(EmulatedKernelHook) {}

 private:
  std::function<void()> host_wait_hook_;
};

}  // namespace tessera::device
