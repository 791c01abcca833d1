// A test double of the CUPTI subset Tessera uses (runtime/device/
// cupti_api.def), built as a shared library and loaded in CUPTI's place
// with TESSERA_CUPTI_LIBRARY, so that the activity plumbing (buffers,
// records, external correlation, flushes) runs in CI on the host
// emulation. It sees the emulation's kernels through
// tesseraEmulatedKernelRan, which the real library lacks, and writes the
// records the real one would: an external correlation record and a driver
// API record before each kernel record of a launch made while an id was
// pushed, and one instrumentation overhead record at the first kernel.
//
// Knobs (environment):
//   TESSERA_CUPTI_DOUBLE_SCALE=THREADS:FACTOR  kernels of blocks of THREADS
//       threads are reported FACTOR times longer than they ran (the tests of
//       the tuner's choice by CUPTI's time, which then differs from the
//       host clock's).
//   TESSERA_CUPTI_DOUBLE_REGISTERS=N  registers per thread reported (32).
// The metrics entry points (the Range Profiler and the Profiler Host API)
// are in cupti_double_profiler.cpp.
#include <cupti.h>

#include <time.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

std::mutex mu;
CUpti_BuffersCallbackRequestFunc request_fn = nullptr;
CUpti_BuffersCallbackCompleteFunc complete_fn = nullptr;
std::set<CUpti_ActivityKind> enabled;
uint8_t* buffer = nullptr;
size_t buffer_size = 0, buffer_used = 0;
uint32_t next_correlation = 1;
bool instrumented = false;
std::set<std::string> names;  // the kernels' names, kept for the records' pointers
thread_local std::vector<uint64_t> external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

size_t record_size(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

// Hands the filled buffer to the client (outside the lock: its callback
// takes its own).
void complete(uint8_t* b, size_t used) {
  if (b && complete_fn) complete_fn(nullptr, 0, b, used, used);
}

// Room for one record of `bytes`, zeroed; null when the client gave no buffer.
// `full` receives a buffer to complete once the lock is released.
void* room(size_t bytes, std::pair<uint8_t*, size_t>& full) {
  if (buffer && buffer_used + bytes > buffer_size) {
    full = {buffer, buffer_used};
    buffer = nullptr;
  }
  if (!buffer) {
    size_t max_records = 0;
    if (!request_fn) return nullptr;
    request_fn(&buffer, &buffer_size, &max_records);
    buffer_used = 0;
    if (!buffer || buffer_size < bytes) return buffer = nullptr;
  }
  void* r = buffer + buffer_used;
  std::memset(r, 0, bytes);
  buffer_used += bytes;
  return r;
}

double scale_for(int32_t threads) {
  const char* s = std::getenv("TESSERA_CUPTI_DOUBLE_SCALE");
  if (!s) return 1;
  const char* colon = std::strchr(s, ':');
  if (!colon || std::atoi(s) != threads) return 1;
  return std::atof(colon + 1);
}

}  // namespace

// cupti_double_profiler.cpp: a kernel the emulation ran, for the started range profilers.
void cupti_double_profiler_kernel_ran(const char* name, const int32_t grid[3], const int32_t block[3]);

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER (the CUPTI test double)"; break;
    case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION (the CUPTI test double)"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED (the CUPTI test double)"; break;
    case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME (the CUPTI test double)"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (the CUPTI test double)"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN (the CUPTI test double)"; break;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = now_ns();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                    CUpti_BuffersCallbackCompleteFunc done) {
  std::lock_guard<std::mutex> lock(mu);
  request_fn = req;
  complete_fn = done;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (!record_size(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(mu);
  enabled.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(mu);
  enabled.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  std::pair<uint8_t*, size_t> full{nullptr, 0};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (buffer && buffer_used) {
      full = {buffer, buffer_used};
      buffer = nullptr;
    }
  }
  complete(full.first, full.second);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buf, size_t valid, CUpti_Activity** record) {
  size_t at = 0;
  if (*record) {
    at = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buf) + record_size((*record)->kind);
  }
  if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buf + at);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  external_ids[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* last) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (external_ids[kind].empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last) *last = external_ids[kind].back();
  external_ids[kind].pop_back();
  return CUPTI_SUCCESS;
}

// The emulation's launch (runtime/device/emulated_kernel_hook.h).
void tesseraEmulatedKernelRan(const char* name, const int32_t grid[3], const int32_t block[3], int32_t static_smem,
                              int32_t dynamic_smem, uint64_t start_ns, uint64_t end_ns) {
  cupti_double_profiler_kernel_ran(name, grid, block);  // the metrics' ranges, whatever the activity records
  std::vector<std::pair<uint8_t*, size_t>> full;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!enabled.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return;
    const uint32_t correlation = next_correlation++;
    auto add = [&](CUpti_ActivityKind k) {
      std::pair<uint8_t*, size_t> f{nullptr, 0};
      void* r = room(record_size(k), f);
      if (f.first) full.push_back(f);
      return r;
    };
    if (!instrumented && enabled.count(CUPTI_ACTIVITY_KIND_OVERHEAD)) {
      instrumented = true;  // as CUPTI instruments a module at its first use
      if (auto* o = static_cast<CUpti_ActivityOverhead3*>(add(CUPTI_ACTIVITY_KIND_OVERHEAD))) {
        o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
        o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
        o->start = start_ns;
        o->end = start_ns + 250000;  // the double's figure: 0.25 ms
      }
    }
    const std::vector<uint64_t>& ids = external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0];
    if (enabled.count(CUPTI_ACTIVITY_KIND_DRIVER)) {
      if (!ids.empty() && enabled.count(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))
        if (auto* e = static_cast<CUpti_ActivityExternalCorrelation*>(add(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))) {
          e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
          e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
          e->externalId = ids.back();
          e->correlationId = correlation;
        }
      if (auto* a = static_cast<CUpti_ActivityAPI*>(add(CUPTI_ACTIVITY_KIND_DRIVER))) {
        a->kind = CUPTI_ACTIVITY_KIND_DRIVER;
        a->start = a->end = start_ns;
        a->correlationId = correlation;
      }
    }
    if (auto* k = static_cast<CUpti_ActivityKernel10*>(add(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
      k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k->name = names.insert(name).first->c_str();
      k->start = start_ns;
      k->end = start_ns + static_cast<uint64_t>(static_cast<double>(end_ns - start_ns) * scale_for(block[0]));
      k->gridX = grid[0], k->gridY = grid[1], k->gridZ = grid[2];
      k->blockX = block[0], k->blockY = block[1], k->blockZ = block[2];
      k->staticSharedMemory = static_smem;
      k->dynamicSharedMemory = dynamic_smem;
      const char* regs = std::getenv("TESSERA_CUPTI_DOUBLE_REGISTERS");
      k->registersPerThread = static_cast<uint16_t>(regs ? std::atoi(regs) : 32);
      k->correlationId = correlation;
    }
  }
  for (auto& f : full) complete(f.first, f.second);
}

}  // extern "C"
