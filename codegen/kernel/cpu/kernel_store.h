// Where the process's CPU kernels come from: one compiler, the persistent
// kernel cache (kernel_disk_cache.h) and the kernels already linked in this
// process, looked up by the kernel IR's text. A kernel is linked from this
// process's set, else from the disk cache's object, else compiled (and its
// object written to the cache). With a --dump directory, each kernel's
// kernel IR, LLVM IR and CUDA C++ (and PTX, given a way to make it) are
// written there as it is made. Thread-safe: the
// VM's thread and the background compiler (kernel_compile_queue.h) share it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/cpu/cpu_compiler.h"
#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/kernel_disk_cache.h"
#include "vm/core/text_file.h"

namespace tessera::kir {

// The PTX of a kernel's CUDA C++ for --dump, or a line saying why there is
// none. The runtime supplies it (NVRTC is loaded there, a layer above).
using DumpPtx = std::function<std::string(const CudaKernelSource&)>;

struct StoredKernel {
  std::shared_ptr<const Kernel> kernel;
  KernelFn fn = nullptr;
  bool from_disk = false;  // linked from the disk cache, not compiled
  double ms = 0;           // compiling (or loading) it
  std::string name;        // "region-HASH": its --dump files' and the event log's name
  // Whether a site has reported it (kernel.compiled): once per kernel,
  // though several sites share it.
  mutable std::atomic<bool> reported{false};
};

class KernelStore {
 public:
  KernelStore();

  // `cache_dir` empty: no disk cache. `dump_dir` empty: no dumps; `dump_ptx`
  // empty: dumps without PTX.
  void configure(const std::string& cache_dir, const std::string& dump_dir, DumpPtx dump_ptx = {});

  // The kernel for k (verified kernel IR); `note` heads its dump (the
  // region it computes). Throws what the compiler throws.
  std::shared_ptr<const StoredKernel> get(Kernel k, const std::string& note = {});

  // Small text results kept beside the kernels (the tuner's choices), keyed
  // by an identity the caller forms; host_identity() is added to it.
  std::optional<std::string> load_note(const std::string& kind, const std::string& identity);
  void store_note(const std::string& kind, const std::string& identity, const std::string& text);

  struct Stats {
    uint64_t compiled = 0, from_disk = 0;
    std::vector<double> compile_ms;  // one per compiled kernel
    double load_ms = 0;              // linking objects from the disk cache
    KernelDiskCache::Counters disk;
    std::string cache_dir;           // empty: the cache is off
  };
  Stats stats() const;
  // The first --dump file that could not be written ("PATH: REASON"), or "".
  std::string dump_error() const;

  // Made at its first use (thread-safe): LLVM's target machine and JIT took
  // milliseconds of every run's start-up, programs without tensors too.
  CpuKernelCompiler& compiler() const;

 private:
  std::string identity(const Kernel& k) const;
  void dump(const std::string& identity, const Kernel& k, const std::string& note, const std::string& llvm_ir);

  mutable std::once_flag compiler_made_;
  mutable std::unique_ptr<CpuKernelCompiler> compiler_;
  mutable std::mutex mu_;
  std::shared_ptr<const KernelDiskCache> disk_;  // replaced by configure, in use elsewhere
  std::string dump_dir_;
  DumpPtx dump_ptx_;
  FirstWriteError dump_error_;  // under mu_
  // By identity; kept for the process (traces hold their kernels' code).
  std::unordered_map<std::string, std::shared_ptr<const StoredKernel>> kernels_;
  Stats stats_;
};

}  // namespace tessera::kir
