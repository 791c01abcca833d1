// One fused call site's kernels, K2 and K3 (architecture §3), and what it
// has seen of its shapes.
//
// The first call gets the region's K2 kernel (dims are parameters: it
// serves every shape that binds the region's symbols). Each K2 call notes
// the symbols' values: a symbol whose value has changed twice is dynamic;
// once `specialize` calls in a row have had the same values of the other
// symbols, a K3 kernel is asked for: the region lowered with those values
// as constants (dynamic symbols stay parameters), its tile and thread split
// tuned (kernel_tuner.h), compiled on the background thread while calls go
// on with K2. Later calls whose symbols fit a K3 kernel of the site run it.
// A site asks for at most `recompiles` K3 kernels (torch.compile's
// recompile_limit): a program whose shapes keep settling elsewhere stays on
// K2 instead of compiling without end.
//
// A site is used by one thread (its trace's); only the background result
// crosses threads, through Pending::done.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "codegen/kernel/cpu/kernel_calls.h"
#include "codegen/kernel/cpu/region_kernel.h"

namespace tessera::kir {

class KernelSite {
 public:
  KernelSite(const Region& r, KernelCalls& calls);

  // The region's output for these inputs; throws what the interpreter's
  // kernels throw (inputs that fit no kernel run by reference).
  Value run(std::span<const Value> inputs);

  // For tests: the site's K3 kernels so far, and whether one is being made.
  const std::vector<std::shared_ptr<const CpuRegionKernel>>& k3() const { return k3_; }
  bool k3_pending() const { return pending_ != nullptr; }
  // Which symbols the site has marked dynamic.
  const std::vector<bool>& dynamic() const { return dynamic_; }

 private:
  Value run_kernels(std::span<const Value> inputs);  // run() without the timeline's span
  std::string span_name_;  // the timeline's name of its calls (made on the first timed call)
  struct Pending {
    std::atomic<bool> done{false};
    std::shared_ptr<const CpuRegionKernel> kernel;  // null: the compile failed
  };

  const CpuRegionKernel* k2();
  void observe(const std::vector<int64_t>& sym);
  void request_k3(const std::vector<int64_t>& sym);
  void collect();

  const Region& region_;  // the CallTarget's, which also holds the site
  std::shared_ptr<KernelDevice> device_;  // the process's when the site was made (null: CPU only)
  std::shared_ptr<void> device_site_;     // the device's state for this site
  KernelCalls& calls_;
  KernelCallConfig config_;  // the process's when the site was made
  std::shared_ptr<const CpuRegionKernel> k2_;
  bool k2_refused_ = false;
  std::vector<std::shared_ptr<const CpuRegionKernel>> k3_;
  size_t current_ = 0;  // the K3 kernel that ran last
  std::vector<int64_t> last_;
  std::vector<int> changes_;
  std::vector<bool> dynamic_;
  int streak_ = 0;
  int requested_ = 0;
  std::shared_ptr<Pending> pending_;
};

}  // namespace tessera::kir
