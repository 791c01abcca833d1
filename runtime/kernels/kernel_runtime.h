// KernelRuntime: one VM's fused calls (CallTarget kind Kernel, made by
// optimizer/fusion.h) and everything that runs them, for every target: the
// call sites (kernel_site.h: K2, then K3 once shapes settle, by one
// ShapePolicy), one KernelStore over the persistent kernel cache, one
// KernelTuner, the CPU target and a device target (a GPU, or its host
// emulation) when --device chose one, the kernel events (jit_events.def)
// and the counters --stats and --metrics print. Nothing is shared between
// VMs: two VMs in one process, each with its own parameters, device, cache
// and dump, run at once without seeing each other's kernels, tuning or
// counters.
//
// The VM's thread makes the calls; the background compiler (one thread per
// runtime) builds K2 kernels of background targets and K3 kernels.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "codegen/host/trace_abi.h"
#include "codegen/kernel/kernel_compile_queue.h"
#include "runtime/jit_clock.h"
#include "runtime/jit_event_log.h"
#include "runtime/kernels/gpu_crash_capture.h"
#include "runtime/kernels/cpu_target.h"
#include "runtime/kernels/kernel_store.h"
#include "runtime/kernels/kernel_tuner.h"
#include "vm/graph/region.h"

namespace tessera::kernels {

class KernelSite;

struct KernelRuntimeConfig {
  int specialize = 16;     // same-shape K2 calls of a site before its K3 kernel; 0: no K3
  int recompiles = 8;      // K3 kernels per site at most
  int hot_calls = 5;       // same-shape calls before their device time may ask for K3 (shape_policy.h)
  double hot_ms = 1.0;     // device ms of those calls that ask for K3 before `specialize`; 0: calls only
  bool background = true;  // kernels made on the background thread (false: before the call goes on)
  std::string cache_dir;   // the persistent kernel cache; empty: off
  std::string dump_dir;    // --dump: each CPU kernel's kernel IR, LLVM IR, CUDA C++ and PTX; empty: none
};

// What a target's sites did (the counters of one target).
struct TargetCounters {
  std::atomic<uint64_t> sites{0}, k2{0}, k3{0}, promotions{0}, recompiles{0}, dynamic_dims{0}, capped{0};
  std::atomic<uint64_t> k2_runs{0}, k3_runs{0};
  std::atomic<uint64_t> refused{0};          // calls the target could not run (the next one ran them)
  std::atomic<uint64_t> failures{0};         // regions or variants it refused to compile
  std::atomic<uint64_t> while_building{0};   // calls run by the next target while its K2 kernel was built
  std::atomic<uint64_t> k3_tuned{0}, k3_kept{0}, variants_timed{0};
  std::atomic<uint64_t> promoted_by_time{0};  // K3 asked for by device time before `specialize` calls
  std::atomic<uint64_t> tune_us{0};
  std::atomic<uint64_t> not_allocated{0};    // intermediate tensors its kernels' runs never made
};

// The CPU's numbers as --stats prints them.
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

class KernelRuntime : public jit::FusedCallRunner {
 public:
  KernelRuntime();
  ~KernelRuntime() override;  // drops the K3 work not started, waits for the running job
  KernelRuntime(const KernelRuntime&) = delete;
  KernelRuntime& operator=(const KernelRuntime&) = delete;

  void configure(const KernelRuntimeConfig& c);
  const KernelRuntimeConfig& config() const { return config_; }

  // The device target that runs fused calls before the CPU (null: the CPU
  // alone). set_device drops a pending resolver.
  void set_device(std::shared_ptr<KernelTarget> d);
  // Or chosen when first asked for (--device=auto: probing for a GPU where
  // there is none cost every start half a millisecond): the first device()
  // runs `resolve` once and installs what it returns.
  using DeviceResolver = std::function<std::shared_ptr<KernelTarget>()>;
  void set_device_resolver(DeviceResolver resolve);
  std::shared_ptr<KernelTarget> device();
  std::shared_ptr<KernelTarget> installed_device() const;

  // Where kernel events and spans go (null: nowhere).
  void set_events(std::shared_ptr<jit::JitEventLog> e);
  const std::shared_ptr<jit::JitEventLog>& events() const { return events_; }
  // Reports an event to the log, if there is one, and to the last events
  // a crash capture keeps (kernel events are few: per site, not per call).
  template <class Fields>
  void event(jit::JitEventKind kind, Fields&& fields) const {
    jit::EventFields f = fields();
    recent_events_->add(jit::JitEventLog::line(jit::now_ms(), kind, f));
    if (events_) events_->emit(kind, std::move(f));
  }
  const std::shared_ptr<RecentEvents>& recent_events() const { return recent_events_; }

  // A fused call: the region's output for these inputs. Throws what the
  // interpreter's kernels throw. The site is found by the region, which the
  // runtime keeps alive (a trace's region may be reused by no other).
  Value run(const std::shared_ptr<const Region>& r, std::span<const Value> inputs);
  Value run_fused_call(const std::shared_ptr<const Region>& r, std::span<const Value> inputs) override {
    return run(r, inputs);
  }
  // The site of `r` (made on its first call); for tests.
  KernelSite& site(const std::shared_ptr<const Region>& r);

  CpuTarget& cpu() { return *cpu_; }
  KernelStore& store() { return store_; }
  const KernelStore& store() const { return store_; }
  const KernelTuner& tuner() const { return tuner_; }
  kir::KernelCompileQueue& queue() { return queue_; }
  void cancel_background() { queue_.cancel(); }
  void drain_background() { queue_.drain(); }

  TargetCounters& counters(const KernelTarget& t);
  // A target's counters so far (zero for one that ran nothing).
  const TargetCounters& counters(const std::string& target) const;
  std::atomic<uint64_t>& reference_runs() { return reference_runs_; }
  // A region or variant a target refused: the first message kept for --stats.
  void note_failure(const KernelTarget& t, const std::string& what);
  std::string first_failure(const std::string& target) const;

  KernelCallStats stats() const;  // the CPU's
  // --dump: the first kernel file that could not be written ("PATH: REASON"), or "".
  std::string dump_error() const { return cpu_->dump_error(); }

 private:
  KernelRuntimeConfig config_;
  KernelStore store_;
  KernelTuner tuner_;
  std::unique_ptr<CpuTarget> cpu_;
  mutable std::mutex mu_;  // device_, resolver_, first_failure_
  std::shared_ptr<KernelTarget> device_;
  DeviceResolver resolver_;
  uint64_t generation_ = 0;  // of the device or resolver set last
  std::mutex resolving_;     // held while a resolver runs
  std::shared_ptr<jit::JitEventLog> events_;
  std::shared_ptr<RecentEvents> recent_events_ = std::make_shared<RecentEvents>();
  std::map<std::string, std::unique_ptr<TargetCounters>> counters_;  // under mu_ (the map; counters are atomic)
  std::map<std::string, std::string> first_failure_;
  std::atomic<uint64_t> reference_runs_{0};
  // The sites, by region (which they keep alive); the last one found, for
  // a loop's calls of one site.
  struct SiteEntry;
  std::unordered_map<const Region*, std::unique_ptr<SiteEntry>> sites_;
  const Region* last_region_ = nullptr;
  KernelSite* last_site_ = nullptr;
  // Last: its destructor waits for the running job, which uses the above.
  kir::KernelCompileQueue queue_;
};

}  // namespace tessera::kernels
