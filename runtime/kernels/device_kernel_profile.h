// DeviceKernelProfile: the GPU's own account of the kernels Tessera
// launched (tier 1 of the design documents' profiling): CUPTI's activity
// records (runtime/device/kernel_activity.h) joined with what Tessera knew
// at each launch (the fused call's site, tier and variant, the bytes it
// moves and the FLOPs it computes), summed per kernel: calls, device time,
// achieved GB/s and GFLOP/s against the device's roofline, registers,
// shared memory and theoretical occupancy; the metrics measured on demand
// (kernel_metrics.h) where --profile-kernels asked for them.
//
// Every fused call is one external correlation id (begin/end around its
// launches); a variant being timed by the tuner is another, and the tuner
// reads its time back (tuning_ms). Records are taken at the VM's sync
// points (flush), never per launch; each taken record is also a span on the
// timeline's GPU track (the device's real start and end).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/device_backend.h"
#include "runtime/device/kernel_activity.h"

namespace tessera::kernels {

// What Tessera knew of a fused call (or a timed variant) at its launches.
struct LaunchNote {
  std::string site_id;   // "k1a2b3c4d5e6" (kir::region_report_id)
  std::string site;      // "gpu k1a2b3c4d5e6 (mul add tanh)": the fused kernel as the timeline names it
  const char* tier = "K2";
  std::string variant;   // KernelVariant::str()
  bool tuning = false;   // a variant being timed, not a call
  std::string main;      // the entry of the kernel that writes the outputs
  // By kernel entry (its launches in this call): bytes it reads and writes
  // and FLOPs it computes; whether its FLOPs run on tensor cores.
  struct Work {
    int64_t bytes = 0, flops = 0;
    bool tensor_cores = false;
  };
  std::map<std::string, Work> work;
};

// Metrics measured on demand by CUPTI's profiler (kernel_metrics.h), in
// percent of the device's peak; negative: not measured.
struct KernelMetricValues {
  double dram_pct = -1, occupancy_pct = -1, tensor_pct = -1;
  int passes = 0;  // replay passes they took
};

struct ProfiledKernel {
  std::string site, name, tier, variant;
  uint64_t calls = 0;
  double device_ms = 0;
  int64_t bytes = 0, flops = 0;
  bool tensor_cores = false;
  uint32_t registers = 0;
  int32_t static_smem = 0, dynamic_smem = 0;
  int64_t threads = 0, blocks = 0;  // per launch (the last one's)
  double occupancy = 0;             // theoretical, in [0, 1] (made by kernels()); 0: limits unknown
  KernelMetricValues metrics;
  // Achieved rates, and the roofline's bound at this kernel's arithmetic
  // intensity (min(peak FLOP/s, intensity x peak bandwidth)); 0: unknown.
  double gb_s() const { return device_ms > 0 ? static_cast<double>(bytes) / device_ms / 1e6 : 0; }
  double gflop_s() const { return device_ms > 0 ? static_cast<double>(flops) / device_ms / 1e6 : 0; }
};

// A kernel's roofline against `limits`: its bound (GFLOP/s at its
// intensity; for a kernel without FLOPs, GB/s at the peak bandwidth) and
// the fraction of it achieved; {0, 0} when the limits are unknown.
struct RooflinePoint {
  double intensity = 0;    // FLOPs per byte
  double peak_gflop_s = 0; // the ceiling that applies (tensor or FP32)
  double bound = 0;        // attainable GFLOP/s (or GB/s without FLOPs)
  double fraction = 0;     // achieved / bound
};
RooflinePoint roofline_of(const ProfiledKernel& k, const device::DeviceBackend::Limits& limits);
// Theoretical occupancy of blocks of `threads` threads using `registers`
// per thread and `smem` bytes of shared memory, on these limits.
double theoretical_occupancy(int64_t threads, uint32_t registers, int64_t smem, const device::DeviceBackend::Limits& limits);

class DeviceKernelProfile {
 public:
  // `activity` null: nothing is recorded, `why_not` says why.
  DeviceKernelProfile(device::KernelActivity* activity, std::string why_not, device::DeviceBackend::Limits limits);

  bool active() const { return activity_ != nullptr; }
  const std::string& why_not() const { return why_not_; }
  const device::DeviceBackend::Limits& limits() const { return limits_; }
  std::string describe() const { return activity_ ? activity_->describe() : std::string(); }

  // Kernels launched on this thread until end() belong to `note`; returns its id.
  uint64_t begin(LaunchNote note);
  void end();
  // Takes the records complete so far into the kernels' sums, the tuning
  // times and the timeline (the span sink); `synced`: the caller waited for
  // the device, so every launch so far has its records now.
  void flush(bool synced);
  // Device milliseconds of the kernels launched under `id` (after a flush).
  double ms_of(uint64_t id) const;
  // Device milliseconds of every call of a site (its site_id) so far (flushed records).
  double site_ms(const std::string& site_id) const;
  // Metrics for one kernel of a site (kernel_metrics.h's measurements).
  void set_metrics(const std::string& site, const std::string& name, const std::string& variant, KernelMetricValues m);

  std::vector<ProfiledKernel> kernels() const;  // by site, tier, variant and entry
  double instrumentation_ms() const { return activity_ ? activity_->instrumentation_ms() : 0; }
  uint64_t records() const;  // records of this profile's launches taken
  uint64_t dropped() const { return activity_ ? activity_->dropped() : 0; }

  // Each flushed record as a span on the timeline: its fused kernel's name,
  // the record, and its note.
  using SpanSink = std::function<void(const std::string& name, const device::DeviceKernelRecord&, const LaunchNote&)>;
  void set_span_sink(SpanSink sink);

 private:
  device::KernelActivity* activity_;
  std::string why_not_;
  device::DeviceBackend::Limits limits_;
  mutable std::mutex mu_;
  std::map<uint64_t, LaunchNote> notes_;  // ids whose records may still come
  std::map<uint64_t, double> id_ms_;      // device ms per id (tuning)
  std::map<std::string, double> site_ms_;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ProfiledKernel> kernels_;
  std::map<std::tuple<std::string, std::string, std::string>, KernelMetricValues> metrics_;
  uint64_t records_ = 0;
  SpanSink sink_;
};

}  // namespace tessera::kernels
