#include "runtime/device/gpu_stream.h"

#include <array>

namespace tessera::device {

// The stream's side of the staging: pinned memory from cuMemHostAlloc,
// asynchronous copies on the stream, and an event per buffer.
class GpuStream::Link : public StagingLink {
 public:
  explicit Link(GpuStream& s) : s_(s) {
    for (CUevent& e : events_) d().check(d().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  }
  ~Link() override {
    for (CUevent e : events_)
      if (e) d().cuEventDestroy(e);
  }
  void* allocate_pinned(size_t bytes, std::string& why_not) override {
    void* p = nullptr;
    const CUresult r = d().cuMemHostAlloc(&p, bytes, 0);
    if (r == CUDA_SUCCESS) return p;
    why_not = "cuMemHostAlloc of " + std::to_string(bytes) + " bytes: " + d().error_text(r) +
              " (the locked-memory limit, ulimit -l?): copies go directly from pageable memory";
    return nullptr;
  }
  void free_pinned(void* p) override { d().cuMemFreeHost(p); }
  void to_device(DevicePtr to, const void* pinned, size_t bytes) override {
    d().check(d().cuMemcpyHtoDAsync(to, pinned, bytes, s_.stream_), "cuMemcpyHtoDAsync");
  }
  void to_host(void* pinned, DevicePtr from, size_t bytes) override {
    d().check(d().cuMemcpyDtoHAsync(pinned, from, bytes, s_.stream_), "cuMemcpyDtoHAsync");
  }
  void mark(int slot) override { d().check(d().cuEventRecord(events_.at(slot), s_.stream_), "cuEventRecord"); }
  void wait(int slot) override { d().check(d().cuEventSynchronize(events_.at(slot)), "cuEventSynchronize"); }

 private:
  const CudaDriver& d() const { return s_.device_.driver(); }
  GpuStream& s_;
  std::array<CUevent, PinnedStaging::kBuffers> events_{};
};

GpuStream::GpuStream(const GpuDevice& device) : device_(device) {
  device_.make_current();
  device_.driver().check(device_.driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  link_ = std::make_unique<Link>(*this);
  staging_ = std::make_unique<PinnedStaging>(*link_);
}

GpuStream::~GpuStream() {
  staging_.reset();  // waits for its copies
  link_.reset();
  if (stream_) device_.driver().cuStreamDestroy(stream_);
}

void GpuStream::upload(DevicePtr to, const void* from, size_t bytes) {
  if (bytes == 0 || staging_->upload(to, from, bytes)) return;
  device_.driver().check(device_.driver().cuMemcpyHtoDAsync(to, from, bytes, stream_), "cuMemcpyHtoDAsync");
}

void GpuStream::download(void* to, DevicePtr from, size_t bytes) {
  if (bytes == 0 || staging_->download(to, from, bytes)) return;
  device_.driver().check(device_.driver().cuMemcpyDtoHAsync(to, from, bytes, stream_), "cuMemcpyDtoHAsync");
  synchronize();
}

void GpuStream::zero(DevicePtr p, size_t bytes) {
  if (bytes == 0) return;
  device_.driver().check(device_.driver().cuMemsetD8Async(p, 0, bytes, stream_), "cuMemsetD8Async");
}

void GpuStream::synchronize() { device_.driver().check(device_.driver().cuStreamSynchronize(stream_), "cuStreamSynchronize"); }

CUevent GpuStream::event() {
  CUevent e = nullptr;
  device_.driver().check(device_.driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return e;
}

void GpuStream::record(CUevent e) { device_.driver().check(device_.driver().cuEventRecord(e, stream_), "cuEventRecord"); }

double GpuStream::elapsed_ms(CUevent start, CUevent stop) {
  const CudaDriver& d = device_.driver();
  float ms = 0;
  CUresult r = d.cuEventSynchronize(stop);
  if (r == CUDA_SUCCESS) r = d.cuEventElapsedTime(&ms, start, stop);
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  d.check(r, "cuEventElapsedTime");
  return ms;
}

DevicePtr CudaMemory::allocate(size_t bytes) {
  CUdeviceptr p = 0;
  const CUresult r = stream_.device().driver().cuMemAlloc(&p, bytes);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return 0;
  stream_.device().driver().check(r, "cuMemAlloc");
  return p;
}

void CudaMemory::release(DevicePtr p) { stream_.device().driver().check(stream_.device().driver().cuMemFree(p), "cuMemFree"); }

GpuModule::GpuModule(const GpuDevice& device, const std::string& image, const std::string& entry, int64_t shared_bytes)
    : device_(device), shared_bytes_(shared_bytes), entry_(entry) {
  const CudaDriver& d = device_.driver();
  device_.make_current();
  d.check(d.cuModuleLoadData(&module_, image.data()), ("cuModuleLoadData(" + entry + ")").c_str());
  d.check(d.cuModuleGetFunction(&fn_, module_, entry.c_str()), ("cuModuleGetFunction(" + entry + ")").c_str());
  if (shared_bytes_ > 48 * 1024)
    d.check(d.cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared_bytes_)),
            ("cuFuncSetAttribute(" + entry + ", dynamic shared memory)").c_str());
}

GpuModule::~GpuModule() {
  if (module_) device_.driver().cuModuleUnload(module_);
}

void GpuModule::launch(GpuStream& stream, int64_t blocks, int threads, std::vector<void*>& args) const {
  if (blocks <= 0) return;
  if (blocks > 0x7fffffff) throw DeviceError("launch of " + entry_ + ": " + std::to_string(blocks) + " blocks is more than a grid holds");
  const CudaDriver& d = device_.driver();
  d.check(d.cuLaunchKernel(fn_, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(threads), 1, 1,
                           static_cast<unsigned>(shared_bytes_), stream.get(), args.data(), nullptr),
          ("cuLaunchKernel(" + entry_ + ")").c_str());
}

}  // namespace tessera::device
