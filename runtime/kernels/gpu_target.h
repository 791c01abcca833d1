// GpuTarget: fused calls' kernels on a GPU (kernel_target.h), over a
// DeviceBackend: the CUDA driver with NVRTC and cuBLASLt, or the host
// emulation of the generated CUDA C++ (runtime/device/).
//
// A site's K2 kernel is built on the background thread (the CPU runs the
// calls meanwhile); K3 variants (tiles, layouts, threads per block) are all
// built there, and timed with CUDA events at the first call of their
// shapes once all are built, on that call's buffers. Every call runs on
// the device:
//   - tensor inputs whose elements the device holds (an earlier call's
//     output, or a host tensor uploaded by an earlier call that the host
//     has not touched since) are passed as they are; others are uploaded,
//     and keep the device's block as a mirror (device_copy.h) until the host
//     touches them, so a weight made once is uploaded once;
//   - a leading matrix product runs on cuBLASLt (f32, f16, bf16, f32
//     accumulation), attention as lower_attention's kernel; then the
//     region's kernel, unless cuBLASLt computed the region's bias and relu
//     with the product (gemm_epilogue.h);
//   - the output is a tensor whose elements stay on the device (a
//     DeviceCopy over its block) until the host reads them, so a chain of
//     fused calls moves nothing between host and device but its inputs.
// Device blocks are owned by RAII handles (DeviceBlock) until a tensor
// takes them: a failure at any step of a call (out of device memory, a
// launch the device refuses) frees every block the call allocated. Out of
// device memory fails the script's operation with "out of memory"; a
// kernel that faulted fails it with a runtime error naming a crash capture
// (gpu_crash_capture.h); other device errors leave the site to the CPU,
// counted with the reason.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "runtime/device/device_backend.h"
#include "runtime/device/kernel_metrics.h"
#include "runtime/jit_event_log.h"
#include "runtime/kernels/device_kernel_profile.h"
#include "runtime/kernels/gpu_crash_capture.h"
#include "runtime/kernels/kernel_runtime.h"
#include "runtime/kernels/kernel_target.h"

namespace tessera::kernels {

// The variants a GPU's K3 tuning tries for the dims `spec` fixes: tiles of
// 256 to 4096 elements in blocks of 128 or 256 threads (no more threads
// than elements), rows or flat for outputs of rank 2 or more; row kernels
// (lower_region.h) have one layout and tile; a leading attention's kernel
// on the tensor cores its query rows per program (kir::attention_tiles'
// for these dims) by 128 or 256 threads and twice as many rows by 256 (on
// a device with `warpgroup_products`, also 64 rows by 256 threads on
// wgmma, with TMA copies and a producer warpgroup, where the head and
// value dims are at most 128), in f32 one (those
// that ptxas compiles without spills: cuda_kernel_nvrtc_test).
std::vector<KernelVariant> gpu_variants(const Region& r, const DimSpec& spec = {}, bool warpgroup_products = false);

class GpuTarget : public KernelTarget, public std::enable_shared_from_this<GpuTarget> {
 public:
  struct Options {
    // Tune K3 kernels by timing their variants (the JIT parameter gputune;
    // false: one K3 kernel with K2's tile, the same kernels every run).
    bool tune = true;
    // f32 products may use TF32 on tensor cores (the JIT parameter tf32).
    bool tf32 = false;
    // Record every kernel with CUPTI's activity API where CUPTI serves (the
    // JIT parameter cupti; device_kernel_profile.h); the tuner then ranks
    // variants by CUPTI's kernel time.
    bool cupti = true;
    // Measure metrics with CUPTI's range profiler (the JIT parameter
    // kprofile, --profile-kernels; kernel_metrics.h) for each K3 variant
    // being tuned and each kernel's first call, shown with the kernels'
    // records (so only where `cupti` records them).
    bool kprofile = false;
  };
  // `store` is the VM's kernel runtime's (it outlives the target's use).
  GpuTarget(std::shared_ptr<device::DeviceBackend> backend, KernelStore& store, Options options);

  const char* name() const override { return "gpu"; }
  std::string arch() const override { return backend_->arch(); }
  std::string refuses(const Region& r) const override;
  bool builds_k2_in_background() const override { return true; }
  bool tunes() const override { return opt_.tune; }
  bool times_at_call() const override { return true; }
  TimingPlan timing_plan() const override { return TimingPlan{1, 1, 0}; }
  // gpu_variants; one where cuBLASLt computes the region's epilogue (its
  // kernel does not run, so there is nothing to time).
  std::vector<KernelVariant> variants(const Region& r, const DimSpec&, const std::vector<int64_t>&) const override;
  std::shared_ptr<const TargetKernel> compile(const Region& r, const DimSpec& spec, const KernelVariant& v) override;
  std::optional<Value> launch(const Region& r, const TargetKernel& k, std::span<const Value> inputs,
                              const std::vector<int64_t>& sym, CallTuning* tuning, std::string& why) override;
  std::function<double(const TargetKernel&)> timer(const Region& r, const std::vector<int64_t>& sym) override;

  device::DeviceBackend& backend() const { return *backend_; }

  // What moved between host and device.
  struct Traffic {
    uint64_t uploads = 0, upload_bytes = 0;      // inputs copied to the device (their elements were on the host)
    uint64_t downloads = 0, download_bytes = 0;  // outputs copied back (the host read them)
    uint64_t resident_inputs = 0;  // inputs already on the device (an earlier call's output, or a mirror)
    uint64_t product_epilogues = 0;  // calls whose bias (and relu) the product computed: no kernel of theirs ran
    uint64_t attention_epilogues = 0;  // calls whose attention kernel computed the region (consumers fused into its write)
  };
  Traffic traffic() const;
  // Counted by the DeviceCopy of outputs when the host reads them.
  void note_download(size_t bytes);
  // The --stats lines ("  gpu: ..."), with the runtime's counters of this target.
  std::string report(const KernelRuntime& runtime) const;

  void set_recent_events(std::shared_ptr<const RecentEvents> e) override;

  // Where the launches' spans on the device go (the timeline; null: nowhere).
  void set_events(std::shared_ptr<jit::JitEventLog> e);

  // CUPTI's account of the kernels (inactive, saying why, without CUPTI).
  DeviceKernelProfile& profile() const { return *profile_; }
  // Takes CUPTI's records after waiting for the device: the end of a run,
  // before the reports read them.
  void finish_profile();
  // Device milliseconds the calls of `r` spent so far, from CUPTI's
  // records (taken now, at most once a millisecond); nullopt without CUPTI.
  std::optional<double> site_device_ms(const std::string& site_id) override;

  // A kernel that faulted (device::DeviceFault) surfacing outside a call:
  // the runtime error's message, with a crash capture of the recent
  // launches (gpu_crash_capture.h).
  std::string fault_message(const std::string& what, const std::string& error) const;

 private:
  // Kept for crash captures: one line per kernel launched.
  void note_launch(const kir::CudaKernelSource& src, const std::vector<int64_t>& grid, const TargetKernel& k);
  GpuCrashReport crash_report(const std::string& error) const;
  // The --stats lines of CUPTI's records (or why there are none).
  std::string profile_report() const;

  void launch_timed(const Region& r, const TargetKernel& k, const std::vector<int64_t>& grid, std::vector<void*>& args,
                    int64_t bytes);
  // With kprofile: the metrics of `k`'s main kernel in one more `launch`
  // (once per site, kernel and variant), for the profile; a failure is kept
  // for --stats.
  void measure_metrics(const Region& r, const TargetKernel& k, std::span<const Value> inputs,
                       const std::vector<int64_t>& sym, const std::function<void()>& launch);

  std::shared_ptr<device::DeviceBackend> backend_;
  KernelStore& store_;
  Options opt_;
  mutable std::mutex mu_;  // traffic_, events_, recent_
  Traffic traffic_;
  std::shared_ptr<jit::JitEventLog> events_;
  RecentLaunches recent_;
  std::shared_ptr<const RecentEvents> recent_events_;  // the kernel runtime's
  std::unique_ptr<DeviceKernelProfile> profile_;
  uint64_t tuned_by_cupti_ = 0, tuned_by_events_ = 0;  // variants timed by each clock
  double last_site_flush_ms_ = 0;
  // kprofile: null, with metrics_why_, where metrics cannot be measured.
  std::unique_ptr<device::KernelMetrics> metrics_;
  std::set<std::tuple<std::string, std::string, std::string>> measured_;  // site, kernel, variant (the VM thread's)
  std::string metrics_why_;  // the first failure
  uint64_t metrics_taken_ = 0, metrics_failed_ = 0;
};

}  // namespace tessera::kernels
