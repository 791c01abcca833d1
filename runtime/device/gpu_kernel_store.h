// Where the process's GPU kernels come from: generated CUDA C++ compiled by
// NVRTC for the device's architecture, looked up first among the kernels
// this process already has, then in the persistent kernel cache (the same
// directory as the CPU kernels' objects, entries of kind "cubin", keyed by
// CudaKernelCompiler::identity: source, wrapper header, NVRTC options,
// architecture, NVRTC version), else compiled and stored there. A warm cache
// loads without compiling. Compiles can run on a background thread
// (request()): the caller goes on (with the CPU kernels) until ready().
// Thread-safe. Needs NVRTC, not a GPU: what it keeps are images (cubin or
// PTX) that a GpuModule loads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/kernel_compile_queue.h"
#include "codegen/kernel/kernel_disk_cache.h"
#include "runtime/device/cuda_kernel_compiler.h"

namespace tessera::device {

struct GpuStoredKernel {
  kir::CudaKernelSource source;
  std::string arch;
  std::string image;  // cubin, or PTX for a compute_XX arch
  bool from_disk = false;
  double ms = 0;                      // compiling (or reading it from the cache)
  std::optional<PtxasReport> report;  // when compiled in this process
};

class GpuKernelStore {
 public:
  // `cache_dir` empty: no persistent cache.
  GpuKernelStore(const CudaKernelCompiler& compiler, std::string arch, const std::string& cache_dir);
  ~GpuKernelStore();  // waits for the background compile that is running

  // The kernel, compiled now if need be; throws DeviceError when NVRTC
  // refuses it (the message has NVRTC's log).
  std::shared_ptr<const GpuStoredKernel> get(const kir::CudaKernelSource& src);

  // A compile on the background thread: poll ready(), then kernel() (null
  // when it failed: error() says why).
  class Pending {
   public:
    bool ready() const { return done_.load(std::memory_order_acquire); }
    std::shared_ptr<const GpuStoredKernel> kernel() const { return ready() ? kernel_ : nullptr; }
    const std::string& error() const { return error_; }

   private:
    friend class GpuKernelStore;
    std::atomic<bool> done_{false};
    std::shared_ptr<const GpuStoredKernel> kernel_;
    std::string error_;
  };
  std::shared_ptr<const Pending> request(const kir::CudaKernelSource& src);
  void drain() { queue_.drain(); }  // waits for the background compiles (tests)

  struct Stats {
    uint64_t compiled = 0, from_disk = 0, from_memory = 0, failures = 0;
    double compile_ms = 0, load_ms = 0;
    kir::KernelDiskCache::Counters disk;
  };
  Stats stats() const;
  const std::string& arch() const { return arch_; }

 private:
  const CudaKernelCompiler& compiler_;
  std::string arch_;
  kir::KernelDiskCache disk_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const GpuStoredKernel>> kernels_;  // by identity
  Stats stats_;
  kir::KernelCompileQueue queue_;
};

}  // namespace tessera::device
