// The CUDA device backend: device 0's primary context, one stream, the
// caching allocator over the driver's memory, kernels compiled by NVRTC
// (the kernel runtime's store keeps their cubins) and loaded as modules,
// f32, f16 and bf16 products (with their bias epilogues) through cuBLASLt.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "runtime/device/cublaslt.h"
#include "runtime/device/device_backend.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/cuda_kernel_compiler.h"
#include "runtime/device/gpu_stream.h"

namespace tessera::device {

// A kernel's tensor map (kir::TensorMapEncoder) through the driver's
// cuTensorMapEncodeTiled: no interleave, no swizzle (the emitter's
// core-matrix layout), zeros outside the matrix. False where the driver
// lacks it (before CUDA 12.0) or refuses the arguments.
bool encode_tensor_map(const CudaDriver& driver, const kir::TensorMapRequest& rq, kir::TensorMapBytes& m);

class CudaBackend : public DeviceBackend {
 public:
  // `selection` must have selected a GPU.
  explicit CudaBackend(const DeviceSelection& selection);
  ~CudaBackend() override;

  std::string describe() const override { return describe_; }
  std::string arch() const override { return arch_; }
  DeviceAllocator& allocator() override { return *alloc_; }
  void upload(DevicePtr to, const void* from, size_t bytes) override { stream_->upload(to, from, bytes); }
  void download(void* to, DevicePtr from, size_t bytes) override {
    before_host_wait();
    stream_->download(to, from, bytes);
  }
  std::string image_kind() const override { return "cubin"; }
  std::string image_identity(const kir::CudaKernelSource& src) const override;
  std::string compile(const kir::CudaKernelSource& src) override;
  std::shared_ptr<LaunchableKernel> load(const kir::CudaKernelSource& src, const std::string& image) override;
  void matmul(const GemmDesc& d) override;
  double time_ms(const std::function<void()>& work) override {
    before_host_wait();
    return stream_->time_ms(work);
  }
  void synchronize() override {
    before_host_wait();
    stream_->synchronize();
  }
  void* create_stream() override;
  void* record_event(void* stream) override;
  void stream_wait(void* stream, void* event) override;
  bool event_done(void* event) override;
  void destroy_event(void* event) override;
  void make_current() override { device_->make_current(); }
  bool cuda_driver() const override { return true; }
  PinnedStaging::Stats staging() const override { return stream_->staging(); }
  std::string compiler() const override;
  Limits limits() const override;
  void* cuda_context() const override { return device_->context(); }
  int device_index() const override { return static_cast<int>(device_->device()); }

 private:
  std::shared_ptr<GpuDevice> device_;
  std::string describe_, arch_;
  std::unique_ptr<GpuStream> stream_;
  std::unique_ptr<CudaMemory> memory_;
  std::unique_ptr<DeviceAllocator> alloc_;
  std::unique_ptr<CudaKernelCompiler> compiler_;
  std::mutex gemm_mu_;
  std::unique_ptr<GpuGemm> gemm_;  // made on the first product
};

}  // namespace tessera::device
