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

CudaBackend::CudaBackend(const DeviceSelection& selection)
    : device_(selection.gpu_device), describe_(selection.describe()), arch_(selection.arch) {
  if (!device_) throw DeviceError("the CUDA backend needs a selected GPU");
  stream_ = std::make_unique<GpuStream>(*device_);
  memory_ = std::make_unique<CudaMemory>(*stream_);
  alloc_ = std::make_unique<DeviceAllocator>(*memory_);
  compiler_ = std::make_unique<CudaKernelCompiler>();
}

CudaBackend::~CudaBackend() {
  try {
    stream_->synchronize();
  } catch (const std::exception&) {
    // the device is going away with the process's use of it
  }
  gemm_.reset();
}

std::string CudaBackend::image_identity(const kir::CudaKernelSource& src) const { return compiler_->identity(src, arch_); }

std::string CudaBackend::compile(const kir::CudaKernelSource& src) {
  CudaCompiled c = compiler_->compile(src, arch_);
  if (!c.ok) throw DeviceError("NVRTC refused kernel " + src.entry + " for " + arch_ + ":\n" + c.log);
  return c.cubin.empty() ? std::move(c.ptx) : std::move(c.cubin);
}

std::shared_ptr<LaunchableKernel> CudaBackend::load(const kir::CudaKernelSource& src, const std::string& image) {
  device_->make_current();  // the background compiler's thread loads modules too
  auto module = std::make_unique<GpuModule>(*device_, image, src.entry, src.shared_bytes);
  return std::make_shared<CudaKernel>(src, std::move(module), *stream_);
}

void CudaBackend::matmul(const GemmDesc& d) {
  {
    std::lock_guard<std::mutex> lock(gemm_mu_);
    if (!gemm_) gemm_ = std::make_unique<GpuGemm>(CublasLt::get(), *stream_, *alloc_);
  }
  gemm_->run(d);
}

std::string CudaBackend::compiler() const {
  const auto v = NvrtcLibrary::get().version();
  return "NVRTC " + std::to_string(v.first) + "." + std::to_string(v.second);
}

}  // namespace tessera::device
