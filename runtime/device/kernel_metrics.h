// KernelMetrics: metrics on demand (--profile-kernels, the JIT parameter
// kprofile): one kernel launch measured by CUPTI's Range Profiler
// (cupti_range_profiler.h) with metrics configured and evaluated by the
// Profiler Host API (cupti_profiler_host.h); the legacy event and metric
// APIs are gone in CUDA 13. Each measurement is one auto range around the
// launch in kernel replay: CUPTI runs the kernel once per pass the metrics
// need, saving and restoring the memory it writes, so the result is one
// run's. That costs a few kernel times and serializes the device, which is
// why it is off by default and done only for the K3 variants being tuned and
// each kernel's first call.
//
// The figures, in percent of the device's peak (perfworks names):
//   DRAM throughput     dram__throughput.avg.pct_of_peak_sustained_elapsed
//   achieved occupancy  sm__warps_active.avg.pct_of_peak_sustained_active
//   tensor pipes        sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
//                       (every tensor instruction, Hopper's wgmma with
//                       mma.sync's HMMA; where a chip lacks it,
//                       sm__pipe_tensor_op_hmma_cycles_active, which counts
//                       HMMA only; else no tensor figure).
// The config image of these metrics is built once per chip and kept for the
// process.
//
// A KernelMetrics is confined to the thread that first measures with it
// (the VM's, which launches the kernels); measurements of several VMs in one
// process are serialized, as CUPTI allows one range profiler per context.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace tessera::device {

class Cupti;
class DeviceBackend;

// One launch's figures; negative: not measured (the chip lacks the metric).
struct KernelMetricFigures {
  double dram_pct = -1, occupancy_pct = -1, tensor_pct = -1;
  int passes = 0;  // kernel replay passes they took
};

class KernelMetrics {
 public:
  // `lib` must have the metrics' entry points (Cupti::has_metrics()); the
  // backend outlives this object. Nothing of CUPTI is called until measure().
  KernelMetrics(const Cupti& lib, DeviceBackend& backend);

  // Measures the kernel that `launch` launches (once: kernel replay repeats
  // it inside CUPTI; the first kernel, if it launches several). nullopt,
  // with `why` a sentence for --stats, when it cannot: the chip is not
  // supported, the user may not read the GPU's counters, a CUPTI error (its
  // text), a call off the owning thread. What `launch` throws reaches the
  // caller (the profiler stopped and disabled first).
  std::optional<KernelMetricFigures> measure(const std::function<void()>& launch, std::string& why);

  // The metric names used on this device's chip (after a measure()); empty
  // before.
  std::string metric_names() const { return names_; }

 private:
  const Cupti& lib_;
  DeviceBackend& backend_;
  std::thread::id owner_;
  std::string names_;
};

// Metrics for `backend`, or null with `why` a sentence for --stats: no
// CUPTI, a CUPTI without the Range Profiler (Cupti::why_no_metrics()), the
// host emulation without a test double ($TESSERA_CUPTI_LIBRARY), a build
// without CUPTI's headers. On the emulation it also tells the backend of the
// double's hook, through which the double sees the launches it measures.
std::unique_ptr<KernelMetrics> kernel_metrics(DeviceBackend& backend, std::string& why);

}  // namespace tessera::device
