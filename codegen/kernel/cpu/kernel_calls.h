// What a trace's Kernel call runs (CallTarget::Kind::Kernel, made by
// optimizer/fusion.h): the call site's kernels (kernel_site.h: K2 at
// first, K3 once its shapes settle), or, where the inputs fit none or the
// region cannot be compiled, the interpreter's kernels one operation at a
// time, which also raise the interpreter's errors.
//
// A device installed in KernelCalls (kernel_device.h) is asked first.
//
// KernelCalls is the process's: one kernel store (compiler, disk cache,
// linked kernels), one background compiler, the JIT parameters that steer
// them (set by each VM's JIT as it starts; the last VM's settings hold) and
// the counters --stats prints.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "codegen/kernel/kernel_compile_queue.h"
#include "codegen/kernel/cpu/kernel_store.h"
#include "codegen/kernel/kernel_device.h"
#include "codegen/kernel/kernel_events.h"
#include "vm/graph/region.h"

namespace tessera::kir {

struct KernelCallConfig {
  int specialize = 16;      // same-shape K2 calls of a site before its K3 kernel; 0: no K3
  int recompiles = 8;       // K3 kernels per site at most
  bool background = true;   // K3 made on the background thread (false: before the call goes on)
  std::string cache_dir;    // the persistent kernel cache; empty: off
  std::string dump_dir;     // --dump: each kernel's kernel IR, LLVM IR and CUDA C++
  DumpPtx dump_ptx;         // and its PTX, where the runtime can compile it (NVRTC); empty: none
};

struct KernelCallStats {
  uint64_t sites = 0;                  // fused call sites that ran
  uint64_t k2_kernels = 0, k3_kernels = 0;
  uint64_t compiled = 0, from_cache = 0;  // kernels compiled / linked from the disk cache
  double compile_ms = 0, compile_median_ms = 0, load_ms = 0;
  double tune_ms = 0;                  // K3 tuning, compiles of its variants included
  uint64_t cache_hits = 0, cache_misses = 0, cache_corrupt = 0, cache_writes = 0, cache_write_failures = 0;
  std::string cache_dir;
  uint64_t promotions = 0;    // sites that went from K2 to K3
  uint64_t recompiles = 0;    // K3 kernels asked for beyond a site's first
  uint64_t dynamic_dims = 0;  // symbols marked dynamic (over all sites)
  uint64_t capped = 0;        // sites that reached the recompile limit
  uint64_t k2_runs = 0, k3_runs = 0, reference_runs = 0;
  uint64_t compile_failures = 0;       // regions or variants the emitter refused
  std::string first_failure;           // the first one's message
  uint64_t tensors_not_allocated = 0;  // intermediate tensors the kernels' runs never made
};

class KernelCalls {
 public:
  static KernelCalls& process();

  void configure(const KernelCallConfig& c);
  KernelCallConfig config() const;
  // A VM ends: K3 work not started is dropped, the running job finishes.
  void cancel_background() { queue_.cancel(); }
  // Waits for the background compiler (tests, async=0).
  void drain_background() { queue_.drain(); }

  // The device that runs fused calls besides the CPU (null: the CPU alone).
  // Installed by the runtime for a run (--device); the last VM's holds.
  // set_device drops a pending resolver.
  void set_device(std::shared_ptr<KernelDevice> d);
  // Or chosen when first asked for (--device=auto: probing for a GPU where
  // there is none cost every start half a millisecond): the first device()
  // call runs `resolve` (outside the lock, once; concurrent callers wait)
  // and installs what it returns. `owner` identifies it for
  // drop_device_resolver, which an owner going away calls.
  using DeviceResolver = std::function<std::shared_ptr<KernelDevice>()>;
  void set_device_resolver(const void* owner, DeviceResolver resolve);
  void drop_device_resolver(const void* owner);
  std::shared_ptr<KernelDevice> device() const;
  // The installed device without resolving a pending one.
  std::shared_ptr<KernelDevice> installed_device() const;
  // Where kernel events go (kernel_events.h; null: nowhere). Installed by
  // the runtime for a run with an event log; the last VM's holds.
  void set_events(std::shared_ptr<KernelEventSink> e);
  std::shared_ptr<KernelEventSink> events() const;
  // Whether the sink wants a span per call (one relaxed load per call).
  bool spans() const { return spans_.load(std::memory_order_relaxed); }
  // Reports an event to the sink, if there is one; `fields` is called only then.
  template <class Fields>
  void event(std::string_view name, Fields&& fields) const {
    if (std::shared_ptr<KernelEventSink> e = events()) e->kernel_event(name, fields());
  }

  KernelStore& store() { return store_; }
  KernelCompileQueue& queue() { return queue_; }
  KernelCallStats stats() const;

  // Counters the sites bump.
  struct Counters {
    std::atomic<uint64_t> sites{0}, k2{0}, k3{0}, promotions{0}, recompiles{0}, dynamic_dims{0}, capped{0};
    std::atomic<uint64_t> k2_runs{0}, k3_runs{0}, reference_runs{0}, failures{0}, not_allocated{0};
    std::atomic<uint64_t> tune_us{0};
  };
  Counters& counters() { return counters_; }
  // A region or variant the emitter refused: counted, the first message kept for --stats.
  void note_failure(const std::string& what);

 private:
  KernelCalls() = default;
  mutable std::mutex mu_;
  KernelCallConfig config_;
  std::string first_failure_;
  KernelStore store_;
  KernelCompileQueue queue_;
  Counters counters_;
  mutable std::shared_ptr<KernelDevice> device_;
  mutable DeviceResolver resolver_;
  mutable const void* resolver_owner_ = nullptr;
  mutable std::mutex resolving_;  // held while a resolver runs
  std::shared_ptr<KernelEventSink> events_;
  std::atomic<bool> spans_{false};
};

// The region's single output for these inputs; throws what the
// interpreter's kernels throw. `site` is the call site's slot
// (CallTarget::kernel): filled on the first call with its KernelSite.
Value run_kernel_call(const Region& r, std::shared_ptr<void>& site, std::span<const Value> inputs);

}  // namespace tessera::kir
