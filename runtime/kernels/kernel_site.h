// KernelSite: one fused call site's kernels on each target, K2 and K3
// (architecture §3), and what it has seen of its shapes.
//
// A call asks the device target first (when there is one), then the CPU;
// where neither can run it (inputs that fit no kernel, a region no target
// can compile) the interpreter's kernels run it one operation at a time,
// which also raise the interpreter's errors. On each target the first call
// gets the region's K2 kernel (dims are parameters: it serves every shape
// that binds the region's symbols), compiled before the call goes on, or
// on the background thread for a target that builds K2 there (a GPU: the
// next target runs the calls meanwhile). Each K2 call's symbols go to the
// target's ShapePolicy; when it asks for a K3 kernel, the variant an
// earlier run's tuning kept is compiled, or every variant is compiled and
// timed (KernelTuner; on the background thread, or by the target at the
// first call of those shapes once all are built). Calls whose symbols fit
// a K3 kernel of the site run it.
//
// A site is used by one thread (its VM's); only background results cross
// threads, through Built::done.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_target.h"
#include "runtime/kernels/shape_policy.h"

namespace tessera::kernels {

class KernelRuntime;
struct TargetCounters;

class KernelSite {
 public:
  KernelSite(std::shared_ptr<const Region> r, KernelRuntime& runtime);

  // The region's output for these inputs; throws what the interpreter's
  // kernels throw.
  Value run(std::span<const Value> inputs);

  // A kernel (or a K3 kernel's tuned variant) being made on the background thread.
  struct Built {
    std::atomic<bool> done{false};
    std::shared_ptr<const TargetKernel> kernel;  // null: it failed (error says why)
    std::string error;
    bool ready() const { return done.load(std::memory_order_acquire); }
  };

  // One target's kernels of the site.
  struct OnTarget {
    OnTarget(std::shared_ptr<KernelTarget> t, TargetCounters& c, ShapePolicyParams p)
        : target(std::move(t)), counters(&c), policy(p) {}
    std::shared_ptr<KernelTarget> target;
    TargetCounters* counters;  // the runtime's, of this target
    ShapePolicy policy;
    bool refused = false;  // the target cannot run the site's calls
    std::shared_ptr<Built> k2;
    std::vector<std::shared_ptr<const TargetKernel>> k3;
    size_t current = 0;            // the K3 kernel that ran last
    std::shared_ptr<Built> k3_pending;  // one K3 kernel at a time
    // A tuning timed at a call: the dims and each variant's build.
    DimSpec tuning_spec;
    std::vector<std::shared_ptr<Built>> tuning;
  };
  // For tests: the CPU's kernels of the site.
  const OnTarget& cpu() const { return targets_.back(); }
  const OnTarget* device() const { return targets_.size() > 1 ? &targets_.front() : nullptr; }

 private:
  std::optional<Value> run_on(OnTarget& t, std::span<const Value> inputs, const std::vector<int64_t>& sym);
  const TargetKernel* k2(OnTarget& t);
  void collect(OnTarget& t);
  void observe(OnTarget& t, const std::vector<int64_t>& sym);
  void request_k3(OnTarget& t, const DimSpec& spec, const std::vector<int64_t>& sym);
  void refuse(OnTarget& t, const std::string& why);
  void compiled(OnTarget& t, const TargetKernel& k);
  // The timeline's and NVTX's name of its calls, made at the first that needs it.
  const std::string& span_name();
  // Runs job on the background compiler, or now (background off).
  void post(std::function<void()> job);

  std::shared_ptr<const Region> region_;
  KernelRuntime& runtime_;
  std::vector<OnTarget> targets_;  // the device's first, the CPU's last
  std::string site_id_;            // kir::region_report_id (made when first asked: id())
  // The site's name in every report (events, metrics, timeline, viewer).
  const std::string& id();
  std::string span_name_;          // span_name(), once made
};

}  // namespace tessera::kernels
