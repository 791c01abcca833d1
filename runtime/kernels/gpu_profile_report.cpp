// GpuTarget's --stats lines of CUPTI's records (device_kernel_profile.h):
// the library and its records, the device's roofline, one line per kernel
// (the ones with the most device time) with its achieved rates against the
// roofline, and the metrics measured on demand.
#include <fmt/format.h>

#include <algorithm>

#include "runtime/kernels/gpu_target.h"

namespace tessera::kernels {

namespace {

// Kernels far below their roofline are reported as such: under a tenth of
// the bound at their arithmetic intensity.
constexpr double kFarBelowRoofline = 0.10;
constexpr size_t kKernelLines = 12;  // the kernels with the most device time

}  // namespace

std::string GpuTarget::profile_report() const {
  const DeviceKernelProfile& p = *profile_;
  uint64_t by_cupti, by_events;
  std::string metrics;  // kprofile's line
  {
    std::lock_guard<std::mutex> lock(mu_);
    by_cupti = tuned_by_cupti_, by_events = tuned_by_events_;
    if (opt_.kprofile && metrics_taken_)
      metrics = fmt::format("  gpu metrics: {} kernels measured by CUPTI's range profiler, each in a launch of its own "
                            "({}){}\n",
                            metrics_taken_, metrics_->metric_names(),
                            metrics_failed_ ? fmt::format("; {} not: {}", metrics_failed_, metrics_why_) : "");
    else if (opt_.kprofile)
      metrics = "  gpu metrics: not measured: " + (metrics_why_.empty() ? "no kernel launched" : metrics_why_) + "\n";
  }
  if (!p.active()) return "  gpu profile: CUPTI not used: " + p.why_not() + "\n" + metrics;
  std::string out = fmt::format(
      "  gpu profile: {}: {} kernel records ({} dropped), {:.2f} ms instrumenting modules; variants timed by CUPTI's "
      "kernel time {}, by CUDA events {}\n",
      p.describe(), p.records(), p.dropped(), p.instrumentation_ms(), by_cupti, by_events);
  std::vector<ProfiledKernel> ks = p.kernels();
  std::sort(ks.begin(), ks.end(), [](const auto& a, const auto& b) { return a.device_ms > b.device_ms; });
  const device::DeviceBackend::Limits& l = p.limits();
  if (!ks.empty() && l.dram_gb_s > 0)
    out += fmt::format("  gpu roofline: {:.0f} GB/s, {:.0f} GFLOP/s FP32, {:.0f} GFLOP/s on tensor cores ({})\n",
                       l.dram_gb_s, l.fp32_gflop_s, l.tensor_gflop_s, l.source);
  for (size_t i = 0; i < ks.size() && i < kKernelLines; ++i) {
    const ProfiledKernel& k = ks[i];
    const RooflinePoint rp = roofline_of(k, l);
    std::string line = fmt::format(
        "  gpu kernel {} {} {} {}: {} calls, {:.3f} ms on the device ({:.1f} us each), {:.1f} GB/s, {:.1f} GFLOP/s", k.site,
        k.name, k.tier, k.variant, k.calls, k.device_ms, k.device_ms * 1000 / static_cast<double>(k.calls), k.gb_s(),
        k.gflop_s());
    if (rp.bound > 0)
      line += fmt::format(", {:.1f}% of its roofline ({:.0f} {} at {:.2f} FLOP/B)", rp.fraction * 100, rp.bound,
                          k.flops > 0 ? "GFLOP/s" : "GB/s", rp.intensity);
    line += fmt::format("; {} registers, {} B static + {} B dynamic shared memory, {} threads x {} blocks", k.registers,
                        k.static_smem, k.dynamic_smem, k.threads, k.blocks);
    if (k.occupancy > 0) line += fmt::format(", occupancy {:.0f}% (theoretical)", k.occupancy * 100);
    const KernelMetricValues& m = k.metrics;
    if (m.passes > 0)
      line += fmt::format("; measured: DRAM {:.1f}% of peak, occupancy {:.1f}% achieved, tensor pipes {} ({} passes)",
                          m.dram_pct, m.occupancy_pct,
                          m.tensor_pct < 0 ? std::string("not measured") : fmt::format("{:.1f}%", m.tensor_pct), m.passes);
    out += line + "\n";
    if (rp.bound > 0 && rp.fraction < kFarBelowRoofline && k.bytes > 0)
      out += fmt::format("  gpu kernel {} {}: far below its roofline: {:.1f} {} achieved of {:.0f} ({:.2f}%)\n", k.site,
                         k.name, k.flops > 0 ? k.gflop_s() : k.gb_s(), k.flops > 0 ? "GFLOP/s" : "GB/s", rp.bound,
                         rp.fraction * 100);
  }
  if (ks.size() > kKernelLines) out += fmt::format("  gpu kernels: {} more (--metrics lists them all)\n", ks.size() - kKernelLines);
  return out + metrics;
}

}  // namespace tessera::kernels
