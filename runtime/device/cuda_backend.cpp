#include "runtime/device/cuda_backend.h"

namespace tessera::device {

namespace {

class CudaKernel : public LaunchableKernel {
 public:
  CudaKernel(kir::CudaKernelSource src, std::unique_ptr<GpuModule> module, GpuStream& stream)
      : LaunchableKernel(std::move(src)), module_(std::move(module)), stream_(stream) {}
  void launch(int64_t blocks, std::vector<void*>& args) override {
    module_->launch(stream_, blocks, source().threads, args);
  }

 private:
  std::unique_ptr<GpuModule> module_;
  GpuStream& stream_;
};

}  // namespace

CudaBackend::CudaBackend(const DeviceSelection& selection, const std::string& cache_dir)
    : device_(selection.gpu_device), describe_(selection.describe()), arch_(selection.arch) {
  if (!device_) throw DeviceError("the CUDA backend needs a selected GPU");
  stream_ = std::make_unique<GpuStream>(*device_);
  memory_ = std::make_unique<CudaMemory>(*stream_);
  alloc_ = std::make_unique<DeviceAllocator>(*memory_);
  compiler_ = std::make_unique<CudaKernelCompiler>();
  store_ = std::make_unique<GpuKernelStore>(*compiler_, selection.arch, cache_dir);
}

CudaBackend::~CudaBackend() {
  try {
    stream_->synchronize();
  } catch (const std::exception&) {
    // the device is going away with the process's use of it
  }
  gemm_.reset();
}

std::shared_ptr<LaunchableKernel> CudaBackend::build(const kir::CudaKernelSource& src) {
  std::shared_ptr<const GpuStoredKernel> k = store_->get(src);  // throws with NVRTC's log
  device_->make_current();  // the background compiler's thread loads modules too
  auto module = std::make_unique<GpuModule>(*device_, k->image, src.entry, src.shared_bytes);
  return std::make_shared<CudaKernel>(src, std::move(module), *stream_);
}

void CudaBackend::matmul_f32(int64_t batch, int64_t m, int64_t n, int64_t k, DevicePtr a, int64_t stride_a, DevicePtr b,
                             int64_t stride_b, DevicePtr c, int64_t stride_c) {
  {
    std::lock_guard<std::mutex> lock(gemm_mu_);
    if (!gemm_) gemm_ = std::make_unique<GpuGemm>(CublasLt::get(), *stream_, *alloc_);
  }
  gemm_->run(batch, m, n, k, a, stride_a, b, stride_b, c, stride_c);
}

DeviceBackend::BuildStats CudaBackend::build_stats() const {
  const GpuKernelStore::Stats s = store_->stats();
  BuildStats b;
  b.built = s.compiled;
  b.from_cache = s.from_disk;
  b.build_ms = s.compile_ms + s.load_ms;
  const auto v = NvrtcLibrary::get().version();
  b.compiler = "NVRTC " + std::to_string(v.first) + "." + std::to_string(v.second);
  return b;
}

}  // namespace tessera::device
