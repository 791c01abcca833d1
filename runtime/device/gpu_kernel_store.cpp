#include "runtime/device/gpu_kernel_store.h"

#include <chrono>

namespace tessera::device {

namespace {

constexpr const char* kKind = "cubin";

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GpuKernelStore::GpuKernelStore(const CudaKernelCompiler& compiler, std::string arch, const std::string& cache_dir)
    : compiler_(compiler), arch_(std::move(arch)), disk_(cache_dir) {}

GpuKernelStore::~GpuKernelStore() { queue_.cancel(); }

std::shared_ptr<const GpuStoredKernel> GpuKernelStore::get(const kir::CudaKernelSource& src) {
  const std::string id = compiler_.identity(src, arch_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(id);
    if (it != kernels_.end()) {
      ++stats_.from_memory;
      return it->second;
    }
  }
  auto k = std::make_shared<GpuStoredKernel>();
  k->source = src;
  k->arch = arch_;
  const auto t0 = std::chrono::steady_clock::now();
  if (std::optional<std::string> image = disk_.load(kKind, id)) {
    k->image = std::move(*image);
    k->from_disk = true;
    k->ms = ms_since(t0);
  } else {
    CudaCompiled c = compiler_.compile(src, arch_);
    if (!c.ok) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.failures;
      throw DeviceError("NVRTC refused kernel " + src.entry + " for " + arch_ + ":\n" + c.log);
    }
    k->image = c.cubin.empty() ? std::move(c.ptx) : std::move(c.cubin);
    k->report = c.report;
    k->ms = c.ms;
    disk_.store(kKind, id, k->image);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = kernels_.emplace(id, std::move(k));
  if (inserted) {
    if (it->second->from_disk) ++stats_.from_disk, stats_.load_ms += it->second->ms;
    else ++stats_.compiled, stats_.compile_ms += it->second->ms;
  }
  return it->second;
}

std::shared_ptr<const GpuKernelStore::Pending> GpuKernelStore::request(const kir::CudaKernelSource& src) {
  auto p = std::make_shared<Pending>();
  queue_.post([this, p, src] {
    try {
      p->kernel_ = get(src);
    } catch (const std::exception& e) {
      p->error_ = e.what();
    }
    p->done_.store(true, std::memory_order_release);
  });
  return p;
}

GpuKernelStore::Stats GpuKernelStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.disk = disk_.counters();
  return s;
}

}  // namespace tessera::device
