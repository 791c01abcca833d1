// KernelTarget: what the kernel runtime (kernel_runtime.h) needs of a place
// that runs fused calls' kernels: the variants K3 tuning tries, compiling
// (through the runtime's KernelStore), launching on a call's inputs, and
// timing. Three implementations: the CPU (cpu_target.h: the LLVM emitter,
// oneTBB), and a GPU (gpu_target.h) over a DeviceBackend: the CUDA driver
// with NVRTC, or the host emulation of the generated CUDA C++. Triton's
// split is the model: the site policy, store and tuner are the runtime's;
// emitters stay in codegen/kernel/{cpu,cuda}, drivers in runtime/device/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_store.h"
#include "runtime/kernels/kernel_tuner.h"
#include "runtime/kernels/kernel_variant.h"
#include "vm/graph/region.h"

namespace tessera::kernels {

class RecentEvents;  // gpu_crash_capture.h

// A kernel a target made of a region: K2 (every dim a parameter) or K3 (the
// settled dims constants, one variant).
class TargetKernel {
 public:
  virtual ~TargetKernel() = default;
  DimSpec spec;           // empty: K2
  KernelVariant variant;  // K3: the variant it was lowered as
  // The store's kernel it was made from (its name, compile time, whether it
  // came from the disk cache); null for a kernel the store does not keep.
  std::shared_ptr<const StoredKernel> stored;
  const char* tier() const { return spec.empty() ? "K2" : "K3"; }
  // Whether it was made for these symbols' values.
  bool fits(const std::vector<int64_t>& sym) const {
    for (size_t d = 0; d < spec.size() && d < sym.size(); ++d)
      if (spec[d] && *spec[d] != sym[d]) return false;
    return true;
  }
};

// Variants to time at a call (a GPU's tuning, times_at_call): the target
// times each on the call's buffers, runs the call with the fastest and says
// which it was.
struct CallTuning {
  std::vector<const TargetKernel*> candidates;
  std::optional<TuneOutcome> outcome;  // set by launch(); best is one of the candidates' variants
  size_t best = 0;                     // its index in candidates
  double ms = 0;                       // time spent timing
};

class KernelTarget {
 public:
  virtual ~KernelTarget() = default;
  // "cpu", "gpu": the events' device and the statistics' key.
  virtual const char* name() const = 0;
  // What its kernels are built for ("host-x86_64-...", "sm_90a"): part of the key of the tuning notes.
  virtual std::string arch() const = 0;
  // Why the target runs no kernel of `r` (asked once per site); empty: it may.
  virtual std::string refuses(const Region& r) const = 0;
  // Whether a site's K2 kernel is built on the background thread (the next
  // target runs the calls meanwhile) or before the first call goes on.
  virtual bool builds_k2_in_background() const = 0;
  // Whether K3 kernels are tuned (false: K3 is lowered with K2's variant).
  virtual bool tunes() const = 0;
  // Whether variants are timed by launch() at a call (CallTuning) rather
  // than by time_ms() on the background thread.
  virtual bool times_at_call() const = 0;
  virtual TimingPlan timing_plan() const = 0;
  // The variants tried for a K3 kernel with dims `spec`, at these symbols' values.
  virtual std::vector<KernelVariant> variants(const Region& r, const DimSpec& spec,
                                              const std::vector<int64_t>& sym) const = 0;
  // Lowers, emits and compiles a kernel of `r`; any thread. Throws when the
  // target cannot (the message says why).
  virtual std::shared_ptr<const TargetKernel> compile(const Region& r, const DimSpec& spec, const KernelVariant& v) = 0;
  // The region's output for these inputs (bound to `sym`), computed by k;
  // nullopt when the target cannot run this call (`why` says why: the
  // site's next target runs it, and this target no more). Throws what the
  // interpreter's kernels throw. With `tuning`, see CallTuning.
  virtual std::optional<Value> launch(const Region& r, const TargetKernel& k, std::span<const Value> inputs,
                                      const std::vector<int64_t>& sym, CallTuning* tuning, std::string& why) = 0;
  // Times kernels of `r` at these symbols' values (milliseconds per run),
  // on inputs of the region's types it makes once: the background tuning of
  // a target that does not time at calls.
  virtual std::function<double(const TargetKernel&)> timer(const Region& r, const std::vector<int64_t>& sym) = 0;
  // Milliseconds the device spent on the calls of `r` so far, where the
  // target measures it without cost to the calls (a GPU's CUPTI records);
  // nullopt: unknown (the K3 decision then counts calls only).
  // The runtime's last JIT events, for crash captures (a GPU's).
  virtual void set_recent_events(std::shared_ptr<const RecentEvents>) {}
  // `site_id`: kir::region_report_id of the site's region.
  virtual std::optional<double> site_device_ms(const std::string& site_id) {
    (void)site_id;
    return std::nullopt;
  }
};

}  // namespace tessera::kernels
