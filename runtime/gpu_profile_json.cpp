#include "runtime/gpu_profile_json.h"

#include <cmath>

namespace tessera {

namespace {

using json = nlohmann::ordered_json;

// Six significant digits keep the lines short without printing a small
// rate as 0 (the host emulation's kernels reach a millionth of an H100's
// roofline).
double sig6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

// A metric CUPTI did not measure (negative) is null.
json measured(double pct) { return pct >= 0 ? json(sig6(pct)) : json(nullptr); }

}  // namespace

json gpu_kernels_json(const kernels::DeviceKernelProfile& profile) {
  json out = json::array();
  const device::DeviceBackend::Limits& limits = profile.limits();
  for (const kernels::ProfiledKernel& k : profile.kernels()) {
    const kernels::RooflinePoint rp = kernels::roofline_of(k, limits);
    json j = {{"site", k.site},
              {"kernel", k.name},
              {"tier", k.tier},
              {"variant", k.variant},
              {"calls", k.calls},
              {"device_ms", sig6(k.device_ms)},
              {"gb_s", sig6(k.gb_s())},
              {"gflop_s", sig6(k.gflop_s())},
              {"bytes", k.bytes},
              {"flops", k.flops},
              {"tensor_cores", k.tensor_cores}};
    // A kernel without FLOPs is bound by the bandwidth alone; no bound
    // where the limits, its time or its bytes are unknown (roofline_of).
    j["roofline"] = rp.bound > 0 ? json{{"bound", sig6(rp.bound)},
                                        {"unit", k.flops > 0 ? "GFLOP/s" : "GB/s"},
                                        {"fraction", sig6(rp.fraction)},
                                        {"intensity", sig6(rp.intensity)}}
                                 : json(nullptr);
    j["registers"] = k.registers;
    j["static_smem"] = k.static_smem;
    j["dynamic_smem"] = k.dynamic_smem;
    j["threads"] = k.threads;
    j["blocks"] = k.blocks;
    j["occupancy"] = sig6(k.occupancy);
    const kernels::KernelMetricValues& m = k.metrics;
    if (m.passes > 0)
      j["measured"] = {{"dram_pct", measured(m.dram_pct)},
                       {"occupancy_pct", measured(m.occupancy_pct)},
                       {"tensor_pct", measured(m.tensor_pct)},
                       {"passes", m.passes}};
    out.push_back(std::move(j));
  }
  return out;
}

json gpu_profile_json(const kernels::GpuTarget* gpu) {
  if (!gpu) return {{"cupti", nullptr}, {"why_not", kNoGpuKernels}};
  const kernels::DeviceKernelProfile& p = gpu->profile();
  json j;
  j["cupti"] = p.active() ? json(p.describe()) : json(nullptr);
  if (!p.active()) j["why_not"] = p.why_not();
  j["records"] = p.records();
  j["dropped"] = p.dropped();
  j["instrumentation_ms"] = sig6(p.instrumentation_ms());
  const device::DeviceBackend::Limits& l = p.limits();
  // Unknown limits (0): no roofline.
  j["roofline"] = l.dram_gb_s > 0 ? json{{"dram_gb_s", sig6(l.dram_gb_s)},
                                         {"fp32_gflop_s", sig6(l.fp32_gflop_s)},
                                         {"tensor_gflop_s", sig6(l.tensor_gflop_s)},
                                         {"source", l.source}}
                                  : json(nullptr);
  return j;
}

}  // namespace tessera
