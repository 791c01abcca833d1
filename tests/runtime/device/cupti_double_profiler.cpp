// The test double's metrics entry points: CUPTI's Range Profiler
// (cupti_range_profiler.h, cupti_profiler_target.h, cupti_target.h) and
// Profiler Host API (cupti_profiler_host.h), with the real headers'
// signatures, so that runtime/device/kernel_metrics.cpp runs its whole
// sequence in CI on the host emulation. Each call checks what the real one
// requires of it (structSize, the pointers it reads or writes, the order:
// initialized before a chip is asked for, a config set before start, start
// before stop, one profiler per context) and answers a misuse with an error.
//
// What it "measures" is its own invention, not a measurement: for each
// kernel the emulation ran between start and stop (one auto range each, as
// tesseraEmulatedKernelRan reports them) it derives figures from the launch
// shape on a notional device of 132 SMs of 64 warps:
//   achieved occupancy  100 x (blocks an SM holds) x (warps a block) / 64,
//                       an SM holding ceil(blocks / 132) blocks, at most
//                       as many as fit in 64 warps;
//   DRAM throughput     80% of peak x the fraction of SMs with a block;
//   tensor pipes        half the occupancy for kernels named *attention*
//                       or *gemm*, else 0.
// Two metrics a pass: three metrics take 2 passes, so that replay shows.
//
// Knobs (environment, read at each call):
//   TESSERA_CUPTI_DOUBLE_CHIP=NAME  the chip cuptiDeviceGetChipName gives
//       (GH100). The double's own chip table: GH100 has every metric it
//       knows; TESTCHIP_HMMA lacks the pipe-wide tensor metric;
//       TESTCHIP_NOTENSOR lacks both tensor metrics; any other chip is not
//       supported (cuptiProfilerHostInitialize fails).
//   TESSERA_CUPTI_DOUBLE_PRIVILEGES=0  cuptiRangeProfilerStart fails with
//       CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as for a user the driver keeps
//       from the counters.
// The emulation has no CUDA context: a null context is the emulation's one.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct CUpti_Profiler_Host_Object {
  std::string chip;
  std::vector<std::string> metrics;  // added to its config
};

struct CUpti_RangeProfiler_Object {
  CUcontext ctx = nullptr;
  bool configured = false, started = false;
  size_t passes = 0;
  uint8_t* counters = nullptr;  // the config's counter data image
  size_t counters_size = 0;
  struct Range {
    double dram = 0, occupancy = 0, tensor = 0;
  };
  std::vector<Range> pending;  // ranges of kernels run while started, until decoded
};

namespace {

constexpr double kSms = 132, kWarpsPerSm = 64;
constexpr uint32_t kConfigMagic = 0x47464354;   // "TCFG"
constexpr uint32_t kCounterMagic = 0x49444354;  // "TCDI"
using Range = CUpti_RangeProfiler_Object::Range;

const char* const kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* const kTensorPipes = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
const char* const kTensorHmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";

// A counter data image: this header, then `capacity` ranges.
struct CounterHeader {
  uint32_t magic;
  uint32_t capacity, ranges;
  uint32_t unused;  // the ranges' doubles aligned
};

std::mutex mu;
bool initialized = false;
std::set<CUpti_RangeProfiler_Object*> profilers;
std::set<CUpti_Profiler_Host_Object*> hosts;
std::string chip_name;  // cuptiDeviceGetChipName's answer, kept for its pointer

std::string chip() {
  const char* c = std::getenv("TESSERA_CUPTI_DOUBLE_CHIP");
  return c && *c ? c : "GH100";
}

bool chip_supported(const std::string& c) { return c == "GH100" || c == "TESTCHIP_HMMA" || c == "TESTCHIP_NOTENSOR"; }

bool chip_has(const std::string& c, const std::string& metric) {
  if (metric == kDram || metric == kOccupancy) return true;
  if (metric == kTensorHmma) return c != "TESTCHIP_NOTENSOR";
  if (metric == kTensorPipes) return c == "GH100";
  return false;
}

template <typename P>
bool bad(const P* p, size_t size) {
  return !p || p->structSize < size;
}
#define BAD_PARAMS(p, Type) bad(p, Type##_STRUCT_SIZE)

// The config image: magic, metric count, the names each ending in NUL.
std::vector<uint8_t> config_image(const CUpti_Profiler_Host_Object& h) {
  std::vector<uint8_t> image(8);
  const uint32_t head[2] = {kConfigMagic, static_cast<uint32_t>(h.metrics.size())};
  std::memcpy(image.data(), head, sizeof head);
  for (const std::string& m : h.metrics) image.insert(image.end(), m.c_str(), m.c_str() + m.size() + 1);
  return image;
}

// Metrics in a config image; 0 when it is not one.
uint32_t config_metrics(const uint8_t* image, size_t size) {
  uint32_t head[2] = {0, 0};
  if (!image || size < sizeof head) return 0;
  std::memcpy(head, image, sizeof head);
  return head[0] == kConfigMagic ? head[1] : 0;
}

CounterHeader* counter_header(const uint8_t* image, size_t size) {
  if (!image || size < sizeof(CounterHeader)) return nullptr;
  auto* h = reinterpret_cast<CounterHeader*>(const_cast<uint8_t*>(image));
  return h->magic == kCounterMagic ? h : nullptr;
}

uint8_t* range_at(CounterHeader* h, size_t i) { return reinterpret_cast<uint8_t*>(h + 1) + i * sizeof(Range); }

Range invent(const char* name, const int32_t grid[3], const int32_t block[3]) {
  const double blocks = double(grid[0]) * grid[1] * grid[2];
  const double warps = std::ceil(double(block[0]) * block[1] * block[2] / 32);
  const double fit = std::max(1.0, std::floor(kWarpsPerSm / std::max(1.0, warps)));
  const double per_sm = std::min(fit, std::ceil(blocks / kSms));
  Range r;
  r.occupancy = std::min(100.0, 100 * per_sm * warps / kWarpsPerSm);
  r.dram = 80 * std::min(1.0, blocks / kSms);
  const std::string n = name ? name : "";
  r.tensor = n.find("attention") != std::string::npos || n.find("gemm") != std::string::npos ? r.occupancy / 2 : 0;
  return r;
}

// Frees one of the double's objects; a pointer it did not give out is a misuse.
template <typename T>
CUptiResult release(std::set<T*>& live, T* o) {
  std::lock_guard<std::mutex> lock(mu);
  if (!live.erase(o)) return CUPTI_ERROR_INVALID_PARAMETER;
  delete o;
  return CUPTI_SUCCESS;
}

}  // namespace

// Called by cupti_double.cpp's tesseraEmulatedKernelRan for every kernel
// the emulation ran: a range for each started profiler.
void cupti_double_profiler_kernel_ran(const char* name, const int32_t grid[3], const int32_t block[3]) {
  std::lock_guard<std::mutex> lock(mu);
  for (CUpti_RangeProfiler_Object* p : profilers)
    if (p->started) p->pending.push_back(invent(name, grid, block));
}

extern "C" {

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Initialize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  initialized = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_DeInitialize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!initialized) return CUPTI_ERROR_NOT_INITIALIZED;
  initialized = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (BAD_PARAMS(p, CUpti_Device_GetChipName_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!initialized) return CUPTI_ERROR_NOT_INITIALIZED;
  if (p->deviceIndex != 0) return CUPTI_ERROR_INVALID_DEVICE;  // the emulation is one device
  chip_name = chip();
  p->pChipName = chip_name.c_str();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_Initialize_Params) || !p->pChipName) return CUPTI_ERROR_INVALID_PARAMETER;
  if (p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER) return CUPTI_ERROR_NOT_SUPPORTED;  // the double's subset
  if (!chip_supported(p->pChipName)) return CUPTI_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(mu);
  p->pHostObject = *hosts.insert(new CUpti_Profiler_Host_Object{p->pChipName, {}}).first;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_Deinitialize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  return release(hosts, p->pHostObject);
}

CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_ConfigAddMetrics_Params) || !p->ppMetricNames || !p->numMetrics)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!hosts.count(p->pHostObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; ++i)
    if (!p->ppMetricNames[i] || !chip_has(p->pHostObject->chip, p->ppMetricNames[i]))
      return CUPTI_ERROR_INVALID_METRIC_NAME;
  for (size_t i = 0; i < p->numMetrics; ++i) p->pHostObject->metrics.push_back(p->ppMetricNames[i]);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_GetConfigImageSize_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!hosts.count(p->pHostObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (p->pHostObject->metrics.empty()) return CUPTI_ERROR_INVALID_OPERATION;  // no metric added
  p->configImageSize = config_image(*p->pHostObject).size();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_GetConfigImage_Params) || !p->pConfigImage)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!hosts.count(p->pHostObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  const std::vector<uint8_t> image = config_image(*p->pHostObject);
  if (p->configImageSize < image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
  std::memcpy(p->pConfigImage, image.data(), image.size());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_GetNumOfPasses_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  const uint32_t metrics = config_metrics(p->pConfigImage, p->configImageSize);
  if (!metrics) return CUPTI_ERROR_INVALID_PARAMETER;
  p->numOfPasses = (metrics + 1) / 2;  // two metrics a pass
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (BAD_PARAMS(p, CUpti_Profiler_Host_EvaluateToGpuValues_Params) || !p->ppMetricNames || !p->pMetricValues ||
      !p->numMetrics)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!hosts.count(p->pHostObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  CounterHeader* h = counter_header(p->pCounterDataImage, p->counterDataImageSize);
  if (!h || p->rangeIndex >= h->ranges) return CUPTI_ERROR_INVALID_PARAMETER;
  Range r;
  std::memcpy(&r, range_at(h, p->rangeIndex), sizeof r);
  const std::vector<std::string>& configured = p->pHostObject->metrics;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const std::string m = p->ppMetricNames[i] ? p->ppMetricNames[i] : "";
    if (std::find(configured.begin(), configured.end(), m) == configured.end()) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pMetricValues[i] = m == kDram ? r.dram : m == kOccupancy ? r.occupancy : r.tensor;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_Enable_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!initialized) return CUPTI_ERROR_NOT_INITIALIZED;
  for (CUpti_RangeProfiler_Object* o : profilers)
    if (o->ctx == p->ctx) return CUPTI_ERROR_INVALID_OPERATION;  // one range profiler per context
  auto* o = new CUpti_RangeProfiler_Object;
  o->ctx = p->ctx;
  profilers.insert(o);
  p->pRangeProfilerObject = o;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_Disable_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  return release(profilers, p->pRangeProfilerObject);
}

CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_GetCounterDataSize_Params) || !p->pMetricNames || !p->numMetrics ||
      !p->maxNumOfRanges || p->maxNumRangeTreeNodes < p->maxNumOfRanges)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!profilers.count(p->pRangeProfilerObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  p->counterDataSize = sizeof(CounterHeader) + p->maxNumOfRanges * sizeof(Range);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_CounterDataImage_Initialize_Params) || !p->pCounterData ||
      p->counterDataSize < sizeof(CounterHeader) + sizeof(Range))
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  if (!profilers.count(p->pRangeProfilerObject)) return CUPTI_ERROR_INVALID_PARAMETER;
  const auto capacity = static_cast<uint32_t>((p->counterDataSize - sizeof(CounterHeader)) / sizeof(Range));
  const CounterHeader h{kCounterMagic, capacity, 0, 0};
  std::memcpy(p->pCounterData, &h, sizeof h);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_SetConfig_Params) || !p->maxRangesPerPass || !p->numNestingLevels)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const uint32_t metrics = config_metrics(p->pConfig, p->configSize);
  if (!metrics || !counter_header(p->pCounterDataImage, p->counterDataImageSize)) return CUPTI_ERROR_INVALID_PARAMETER;
  // The double's subset: a range per kernel, replayed inside its launch.
  if (p->range != CUPTI_AutoRange || p->replayMode != CUPTI_KernelReplay) return CUPTI_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (!profilers.count(o)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (o->started) return CUPTI_ERROR_INVALID_OPERATION;
  o->configured = true;
  o->passes = (metrics + 1) / 2;
  o->counters = p->pCounterDataImage;
  o->counters_size = p->counterDataImageSize;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_Start_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* privileged = std::getenv("TESSERA_CUPTI_DOUBLE_PRIVILEGES");
  std::lock_guard<std::mutex> lock(mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (!profilers.count(o)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!o->configured || o->started) return CUPTI_ERROR_INVALID_OPERATION;
  if (privileged && std::strcmp(privileged, "0") == 0) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  o->started = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_Stop_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (!profilers.count(o)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!o->started) return CUPTI_ERROR_INVALID_OPERATION;
  o->started = false;
  p->passIndex = o->passes;  // kernel replay ran every pass inside each launch
  p->targetNestingLevel = 1;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_PushRange_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  return CUPTI_ERROR_NOT_SUPPORTED;  // user ranges: not in the double's subset
}

CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_PopRange_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  return CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_DecodeData_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (!profilers.count(o)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!o->configured || o->started) return CUPTI_ERROR_INVALID_OPERATION;
  CounterHeader* h = counter_header(o->counters, o->counters_size);
  if (!h) return CUPTI_ERROR_INVALID_PARAMETER;
  p->numOfRangeDropped = 0;
  for (const Range& r : o->pending) {
    if (h->ranges < h->capacity) std::memcpy(range_at(h, h->ranges++), &r, sizeof r);
    else ++p->numOfRangeDropped;
  }
  o->pending.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (BAD_PARAMS(p, CUpti_RangeProfiler_GetCounterDataInfo_Params)) return CUPTI_ERROR_INVALID_PARAMETER;
  const CounterHeader* h = counter_header(p->pCounterDataImage, p->counterDataImageSize);
  if (!h) return CUPTI_ERROR_INVALID_PARAMETER;
  p->numTotalRanges = h->ranges;
  return CUPTI_SUCCESS;
}

}  // extern "C"
