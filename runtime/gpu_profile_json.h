// The GPU's kernels as CUPTI saw them (kernels/device_kernel_profile.h), as
// JSON: the run line of --metrics (run_metrics.h) and the trace viewer's
// "GPU kernels" view (trace_viewer.h) show the same fields.
//   - gpu_kernels_json: one object per kernel: site, kernel (its entry),
//     tier, variant, calls, device_ms, gb_s, gflop_s, bytes, flops,
//     tensor_cores, roofline {bound, unit, fraction, intensity} (null where
//     the device's limits, or the kernel's time or bytes, are unknown), registers, static_smem,
//     dynamic_smem, threads, blocks, occupancy, and "measured" where
//     --profile-kernels measured its metrics;
//   - gpu_profile_json: whether CUPTI recorded (its description, or why
//     not), the records taken and dropped, the instrumentation's time, and
//     the roofline's limits.
// docs/observability.md lists the fields.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/kernels/gpu_target.h"

namespace tessera {

// Why there is no profile when no kernel ran on a GPU (the run had no GPU target).
inline constexpr const char* kNoGpuKernels = "no kernel ran on a GPU";

nlohmann::ordered_json gpu_kernels_json(const kernels::DeviceKernelProfile& profile);
// `gpu` null: {"cupti": null, "why_not": kNoGpuKernels}.
nlohmann::ordered_json gpu_profile_json(const kernels::GpuTarget* gpu);

}  // namespace tessera
