#include "runtime/device/cuda_backend.h"

namespace tessera::device {

namespace {

class CudaKernel : public LaunchableKernel {
 public:
  CudaKernel(kir::CudaKernelSource src, std::unique_ptr<GpuModule> module, GpuStream& stream, const CudaDriver& driver)
      : LaunchableKernel(std::move(src)), module_(std::move(module)), stream_(stream), driver_(driver) {}
  void launch(int64_t blocks, std::vector<void*>& args) override {
    module_->launch(stream_, blocks, source().threads, args);
  }
  bool encode_tensor_map(const kir::TensorMapRequest& rq, kir::TensorMapBytes& m) const override {
    return device::encode_tensor_map(driver_, rq, m);
  }

 private:
  std::unique_ptr<GpuModule> module_;
  GpuStream& stream_;
  const CudaDriver& driver_;
};

}  // namespace

bool encode_tensor_map(const CudaDriver& d, const kir::TensorMapRequest& rq, kir::TensorMapBytes& m) {
  if (!d.cuTensorMapEncodeTiled || (rq.elem != kir::Elem::F16 && rq.elem != kir::Elem::BF16)) return false;
  const cuuint64_t dims[2] = {rq.cols, rq.rows};
  const cuuint64_t strides[1] = {rq.row_bytes};
  const cuuint32_t box[2] = {rq.box_cols, rq.box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  static_assert(sizeof(CUtensorMap) == sizeof(kir::TensorMapBytes), "a tensor map is 128 bytes");
  return d.cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(m.bytes),
                                  rq.elem == kir::Elem::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                            : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                  2, reinterpret_cast<void*>(rq.base), dims, strides, box, elem_strides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

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

void* CudaBackend::create_stream() {
  device_->make_current();
  CUstream s = nullptr;
  device_->driver().check(device_->driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return s;
}

void* CudaBackend::record_event(void* stream) {
  const CudaDriver& d = device_->driver();
  CUevent e = nullptr;
  d.check(d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  const CUresult r = d.cuEventRecord(e, stream ? static_cast<CUstream>(stream) : stream_->get());
  if (r != CUDA_SUCCESS) {
    d.cuEventDestroy(e);
    d.check(r, "cuEventRecord");
  }
  return e;
}

void CudaBackend::stream_wait(void* stream, void* event) {
  const CudaDriver& d = device_->driver();
  d.check(d.cuStreamWaitEvent(stream ? static_cast<CUstream>(stream) : stream_->get(), static_cast<CUevent>(event), 0),
          "cuStreamWaitEvent");
}

bool CudaBackend::event_done(void* event) {
  const CudaDriver& d = device_->driver();
  const CUresult r = d.cuEventQuery(static_cast<CUevent>(event));
  if (r == CUDA_SUCCESS) return true;
  if (r == CUDA_ERROR_NOT_READY) return false;
  throw DeviceFault("cuEventQuery: " + d.error_text(r));
}

void CudaBackend::destroy_event(void* event) {
  if (event) device_->driver().cuEventDestroy(static_cast<CUevent>(event));
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
  return std::make_shared<CudaKernel>(src, std::move(module), *stream_, device_->driver());
}

void CudaBackend::matmul(const GemmDesc& d) {
  {
    std::lock_guard<std::mutex> lock(gemm_mu_);
    if (!gemm_) gemm_ = std::make_unique<GpuGemm>(CublasLt::get(), *stream_, *alloc_);
  }
  gemm_->run(d);
}

DeviceBackend::Limits CudaBackend::limits() const {
  const CudaDriver& d = device_->driver();
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    return d.cuDeviceGetAttribute(&v, a, device_->device()) == CUDA_SUCCESS ? v : 0;
  };
  Limits l;
  l.sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  l.max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  l.registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  l.shared_bytes_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const double clock_hz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) * 1e3;  // kHz
  const double memory_hz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3;
  const int bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  // Double data rate; 128 FP32 lanes per SM since sm_80 (64 before);
  // dense f16 tensor FMAs per SM per clock: 1024 on sm_80/86/89, 2048 on
  // sm_90 and later (the architecture whitepapers' peaks).
  l.dram_gb_s = 2.0 * memory_hz * bus_bits / 8 / 1e9;
  l.fp32_gflop_s = l.sms * (major >= 8 ? 128 : 64) * 2.0 * clock_hz / 1e9;
  l.tensor_gflop_s = l.sms * (major >= 9 ? 2048 : major >= 8 ? 1024 : 0) * 2.0 * clock_hz / 1e9;
  l.source = "the device's attributes (clocks, bus width, SMs)";
  return l;
}

std::string CudaBackend::compiler() const {
  const auto v = NvrtcLibrary::get().version();
  return "NVRTC " + std::to_string(v.first) + "." + std::to_string(v.second);
}

}  // namespace tessera::device
