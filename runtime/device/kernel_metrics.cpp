// The Range Profiler's sequence, for one launch: (once per process)
// cuptiProfilerInitialize; (once per chip) the host object, the metrics
// added to its config, the config image and its passes; (per measurement)
// enable a range profiler on the context, a counter data image for the
// metrics, the config set for auto ranges in kernel replay, start, the
// launch, stop, decode, and range 0's values evaluated by the host object;
// then disable. A profiler object lives only for one measurement, so that
// VMs sharing the device's context never hold two at once.
#include "runtime/device/kernel_metrics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "runtime/device/device_backend.h"
#include "runtime/device/kernel_activity.h"

#ifndef TESSERA_NO_CUPTI
#include "runtime/device/cupti_api.h"
#endif

namespace tessera::device {

KernelMetrics::KernelMetrics(const Cupti& lib, DeviceBackend& backend) : lib_(lib), backend_(backend) {}

#ifndef TESSERA_NO_CUPTI
namespace {

constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kTensorPipes = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
constexpr const char* kTensorHmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
// Ranges a counter data image holds: the measured launch is one kernel; a
// few more keep a launch of several from failing the measurement.
constexpr size_t kMaxRanges = 4;

// A CUPTI call that failed: the sentence measure() returns. Not a
// DeviceError, which the launch itself may throw and which must reach the
// caller.
struct ProfilerFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A parameter struct: zeroed (pPriv null, as CUPTI asks), its size set.
template <typename P>
P params(size_t size) {
  P p{};
  p.structSize = size;
  return p;
}
#define CUPTI_PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

void ok(const Cupti& lib, CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    throw ProfilerFailure(fmt::format("{}: {}: this user may not read the GPU's performance counters (run as root, or "
                                      "load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0)",
                                      what, lib.error_text(r)));
  throw ProfilerFailure(fmt::format("{}: {}", what, lib.error_text(r)));
}

// What a chip is measured with, built once: the host object (which
// evaluates the counters), the metrics it has, their config image.
struct ChipConfig {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<const char*> metrics;  // DRAM, occupancy[, tensor pipes]
  std::vector<uint8_t> image;
  int passes = 0;
  std::string failed;  // why this chip is not measured
};

// CUPTI's profiler state of the process; held for a whole measurement
// (one range profiler per context). Never freed: CUPTI is never unloaded,
// and its host objects stay reachable from the chips' map, which is never
// destroyed either (a static map's destructor at exit would leave them to
// LeakSanitizer as leaks).
std::mutex mu;
std::string init_failed;  // cuptiProfilerInitialize's failure
bool initialized = false;
std::map<std::string, ChipConfig>& chips = *new std::map<std::string, ChipConfig>;

// The metric sets tried in order: a chip that lacks the pipe-wide tensor
// metric may have the HMMA one; one with neither is measured without it.
const std::vector<std::vector<const char*>>& metric_sets() {
  static const std::vector<std::vector<const char*>> sets = {
      {kDram, kOccupancy, kTensorPipes}, {kDram, kOccupancy, kTensorHmma}, {kDram, kOccupancy}};
  return sets;
}

void deinitialize_host(const Cupti& lib, CUpti_Profiler_Host_Object* host) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = host;
  lib.api().cuptiProfilerHostDeinitialize(&p);
}

ChipConfig configure(const Cupti& lib, const std::string& chip) {
  const Cupti::Api& api = lib.api();
  ChipConfig c;
  std::string refused;
  for (std::vector<const char*> set : metric_sets()) {
    auto init = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = nullptr;  // needed only for chips newer than this CUPTI
    if (const CUptiResult r = api.cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS) {
      c.failed = fmt::format("chip {} is not supported by {} (cuptiProfilerHostInitialize: {})", chip, lib.describe(),
                             lib.error_text(r));
      return c;
    }
    auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = init.pHostObject;
    add.ppMetricNames = set.data();
    add.numMetrics = set.size();
    if (const CUptiResult r = api.cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
      refused = fmt::format("cuptiProfilerHostConfigAddMetrics({}): {}", set.back(), lib.error_text(r));
      deinitialize_host(lib, init.pHostObject);
      continue;
    }
    try {
      auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
      size.pHostObject = init.pHostObject;
      ok(lib, api.cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
      c.image.resize(size.configImageSize);
      auto image = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
      image.pHostObject = init.pHostObject;
      image.configImageSize = c.image.size();
      image.pConfigImage = c.image.data();
      ok(lib, api.cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
      auto passes = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
      passes.configImageSize = c.image.size();
      passes.pConfigImage = c.image.data();
      ok(lib, api.cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
      c.passes = static_cast<int>(passes.numOfPasses);
    } catch (const ProfilerFailure& e) {
      deinitialize_host(lib, init.pHostObject);
      c.failed = fmt::format("chip {}: {}", chip, e.what());
      return c;
    }
    c.host = init.pHostObject;
    c.metrics = std::move(set);
    return c;
  }
  c.failed = fmt::format("chip {} has none of the metrics measured ({})", chip, refused);
  return c;
}

// The range profiler of one measurement, disabled (and stopped, if a launch
// threw while it ran) when it ends.
class RangeProfiler {
 public:
  RangeProfiler(const Cupti& lib, void* ctx) : lib_(lib) {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    p.ctx = static_cast<CUcontext>(ctx);
    ok(lib, lib.api().cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    if (started_) stop();
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = object_;
    lib_.api().cuptiRangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* object() const { return object_; }
  void start() {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    p.pRangeProfilerObject = object_;
    ok(lib_, lib_.api().cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
    started_ = true;
  }
  CUptiResult stop() {
    started_ = false;
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    p.pRangeProfilerObject = object_;
    return lib_.api().cuptiRangeProfilerStop(&p);
  }

 private:
  const Cupti& lib_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool started_ = false;
};

// The chip of device `index`, after the process's profiler initialization.
std::string chip_of(const Cupti& lib, int index) {
  if (!initialized) {
    if (!init_failed.empty()) throw ProfilerFailure(init_failed);
    auto p = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    try {
      ok(lib, lib.api().cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
    } catch (const ProfilerFailure& e) {
      init_failed = e.what();
      throw;
    }
    initialized = true;
  }
  auto p = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  p.deviceIndex = static_cast<size_t>(index);
  ok(lib, lib.api().cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
  if (!p.pChipName) throw ProfilerFailure("cuptiDeviceGetChipName gave no chip name");
  return p.pChipName;
}

KernelMetricFigures measure_launch(const Cupti& lib, DeviceBackend& backend, const ChipConfig& c,
                                   const std::function<void()>& launch) {
  const Cupti::Api& api = lib.api();
  void* ctx = backend.cuda_context();
  if (!ctx && !backend.host_memory()) throw ProfilerFailure("the device has no CUDA context to profile");
  RangeProfiler profiler(lib, ctx);
  std::vector<const char*> names = c.metrics;
  auto size = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = profiler.object();
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  ok(lib, api.cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<uint8_t> counters(size.counterDataSize);
  auto init = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler.object();
  init.counterDataSize = counters.size();
  init.pCounterData = counters.data();
  ok(lib, api.cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
  auto config = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  config.pRangeProfilerObject = profiler.object();
  config.configSize = c.image.size();
  config.pConfig = c.image.data();
  config.counterDataImageSize = counters.size();
  config.pCounterDataImage = counters.data();
  config.range = CUPTI_AutoRange;         // a range per kernel
  config.replayMode = CUPTI_KernelReplay;  // CUPTI replays the kernel for each pass, inside its launch
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  ok(lib, api.cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
  profiler.start();
  launch();
  backend.synchronize();
  ok(lib, profiler.stop(), "cuptiRangeProfilerStop");
  auto decode = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = profiler.object();
  ok(lib, api.cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counters.data();
  info.counterDataImageSize = counters.size();
  ok(lib, api.cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges == 0) throw ProfilerFailure("no kernel ran while CUPTI's range profiler measured the launch");
  std::vector<double> values(names.size(), -1);
  auto eval = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  eval.pHostObject = c.host;
  eval.pCounterDataImage = counters.data();
  eval.counterDataImageSize = counters.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = names.data();
  eval.numMetrics = names.size();
  eval.pMetricValues = values.data();
  ok(lib, api.cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
  KernelMetricFigures f;
  f.dram_pct = values[0];
  f.occupancy_pct = values[1];
  if (values.size() > 2) f.tensor_pct = values[2];
  f.passes = c.passes;
  return f;
}

}  // namespace

std::optional<KernelMetricFigures> KernelMetrics::measure(const std::function<void()>& launch, std::string& why) {
  if (owner_ == std::thread::id()) owner_ = std::this_thread::get_id();
  if (owner_ != std::this_thread::get_id()) {
    // An embedder that moves a VM between threads loses the metrics, not the run.
    why = "a launch on another thread than the VM's first: metrics are measured on that thread only";
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu);
  try {
    const std::string chip = chip_of(lib_, backend_.device_index());
    auto it = chips.find(chip);
    if (it == chips.end()) it = chips.emplace(chip, configure(lib_, chip)).first;
    const ChipConfig& c = it->second;
    if (!c.failed.empty()) {
      why = c.failed;
      return std::nullopt;
    }
    names_ = fmt::format("{}", fmt::join(c.metrics, ", "));
    return measure_launch(lib_, backend_, c, launch);
  } catch (const ProfilerFailure& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::unique_ptr<KernelMetrics> kernel_metrics(DeviceBackend& backend, std::string& why) {
  const Cupti* lib = cupti_for(backend, why);
  if (!lib) return nullptr;
  if (!lib->has_metrics()) {
    why = lib->why_no_metrics();
    return nullptr;
  }
  if (backend.host_memory()) backend.set_emulated_kernel_hook(lib->emulation_hook());
  return std::make_unique<KernelMetrics>(*lib, backend);
}

#else

std::optional<KernelMetricFigures> KernelMetrics::measure(const std::function<void()>&, std::string& why) {
  why = "this build has no CUPTI headers";
  return std::nullopt;
}

std::unique_ptr<KernelMetrics> kernel_metrics(DeviceBackend& backend, std::string& why) {
  cupti_for(backend, why);
  return nullptr;
}

#endif

}  // namespace tessera::device
