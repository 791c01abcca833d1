// The activity over CUPTI: buffers of 4 MiB requested and completed by
// CUPTI's callbacks; kernel records joined with the external correlation
// records CUPTI writes before the driver's launch records (which is why
// CUPTI_ACTIVITY_KIND_DRIVER is enabled: external ids are attached to API
// records); a kernel whose correlation has not arrived waits one flush.
#include "runtime/device/kernel_activity.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>

#include "runtime/device/device_backend.h"
#include "runtime/device/device_error.h"

#ifndef TESSERA_NO_CUPTI
#include "runtime/device/cupti_api.h"
#endif

namespace tessera::device {

#ifndef TESSERA_NO_CUPTI
namespace {

constexpr size_t kBufferBytes = size_t{4} << 20;
constexpr CUpti_ExternalCorrelationKind kTesseraIds = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_OVERHEAD};

class CuptiActivity final : public KernelActivity {
 public:
  explicit CuptiActivity(const Cupti& lib) : lib_(lib) {
    uint64_t t = 0;
    lib.check(lib.api().cuptiGetTimestamp(&t), "cuptiGetTimestamp");
    const double steady_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    offset_ms_ = steady_ms - static_cast<double>(t) / 1e6;
    self_ = this;
    lib.check(lib.api().cuptiActivityRegisterCallbacks(&requested, &completed), "cuptiActivityRegisterCallbacks");
    set_enabled(true);
  }

  void set_enabled(bool on) override {
    for (CUpti_ActivityKind k : kKinds)
      lib_.check(on ? lib_.api().cuptiActivityEnable(k) : lib_.api().cuptiActivityDisable(k),
                 on ? "cuptiActivityEnable" : "cuptiActivityDisable");
  }

  std::string describe() const override { return lib_.describe(); }
  void push(uint64_t id) override { lib_.api().cuptiActivityPushExternalCorrelationId(kTesseraIds, id); }
  void pop() override {
    uint64_t last = 0;
    lib_.api().cuptiActivityPopExternalCorrelationId(kTesseraIds, &last);
  }

  std::vector<DeviceKernelRecord> flush() override {
    lib_.api().cuptiActivityFlushAll(0);
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<DeviceKernelRecord> out;
    std::vector<Pending> waiting;
    for (Pending& p : pending_) {
      auto it = ids_.find(p.correlation);
      if (it != ids_.end()) p.record.external_id = it->second.id;
      if (it != ids_.end() || p.flushes++ > 0) out.push_back(std::move(p.record));
      else waiting.push_back(std::move(p));
    }
    pending_ = std::move(waiting);
    // An id a kernel will not claim (a copy's, a driver call's) is dropped
    // after two flushes.
    for (auto it = ids_.begin(); it != ids_.end();)
      it = ++it->second.flushes > 2 ? ids_.erase(it) : std::next(it);
    return out;
  }

  double instrumentation_ms() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return instrumentation_ms_;
  }
  uint64_t dropped() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return dropped_;
  }

 private:
  struct Pending {
    DeviceKernelRecord record;
    uint32_t correlation = 0;
    int flushes = 0;
  };
  struct Id {
    uint64_t id = 0;
    int flushes = 0;
  };

  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
  }
  static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
    self_->take(ctx, stream, buffer, valid);
    std::free(buffer);
  }

  void take(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid) {
    std::lock_guard<std::mutex> lock(mu_);
    CUpti_Activity* rec = nullptr;
    while (lib_.api().cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
          Pending p;
          p.correlation = k->correlationId;
          DeviceKernelRecord& r = p.record;
          r.name = k->name ? k->name : "?";
          r.start_ms = static_cast<double>(k->start) / 1e6 + offset_ms_;
          r.end_ms = static_cast<double>(k->end) / 1e6 + offset_ms_;
          r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
          r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
          r.registers = k->registersPerThread;
          r.static_smem = k->staticSharedMemory;
          r.dynamic_smem = k->dynamicSharedMemory;
          pending_.push_back(std::move(p));
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
          if (e->externalKind == kTesseraIds) ids_[e->correlationId] = Id{e->externalId, 0};
          break;
        }
        case CUPTI_ACTIVITY_KIND_OVERHEAD: {
          const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
          if (o->overheadKind == CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION)
            instrumentation_ms_ += static_cast<double>(o->end - o->start) / 1e6;
          break;
        }
        default:
          break;  // the driver's API records: enabled for the correlation only
      }
    }
    size_t lost = 0;
    if (lib_.api().cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS) dropped_ += lost;
  }

  static inline CuptiActivity* self_ = nullptr;
  const Cupti& lib_;
  double offset_ms_ = 0;  // the JIT's clock minus CUPTI's
  mutable std::mutex mu_;
  std::vector<Pending> pending_;
  std::map<uint32_t, Id> ids_;  // correlation id -> Tessera's id
  double instrumentation_ms_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace

const Cupti* cupti_for(DeviceBackend& backend, std::string& why) {
  const bool emulated = !backend.cuda_driver();
  if (emulated && !backend.host_memory()) {
    why = "this device has no CUPTI (it is not a GPU run by the CUDA driver)";
    return nullptr;
  }
  if (emulated && !std::getenv("TESSERA_CUPTI_LIBRARY")) {
    why = "the host emulation has no CUPTI (TESSERA_CUPTI_LIBRARY names a test double of it)";
    return nullptr;
  }
  const Cupti& lib = Cupti::get();
  if (!lib.available()) {
    why = lib.why_unavailable();
    return nullptr;
  }
  if (emulated && !lib.emulation_hook()) {
    why = lib.library() + " cannot see the host emulation's kernels (it is not a test double: it lacks tesseraEmulatedKernelRan)";
    return nullptr;
  }
  return &lib;
}

KernelActivity* kernel_activity(DeviceBackend& backend, std::string& why) {
  const Cupti* found = cupti_for(backend, why);
  if (!found) return nullptr;
  const Cupti& lib = *found;
  const bool emulated = backend.host_memory();
  static std::mutex mu;
  static CuptiActivity* activity = nullptr;
  static std::string failed;
  std::lock_guard<std::mutex> lock(mu);
  if (!activity && failed.empty()) {
    try {
      activity = new CuptiActivity(lib);  // lives as long as CUPTI, which is never unloaded
    } catch (const DeviceError& e) {
      failed = e.what();
    }
  }
  if (!activity) {
    why = failed;
    return nullptr;
  }
  if (emulated) backend.set_emulated_kernel_hook(lib.emulation_hook());
  return activity;
}

#else

const Cupti* cupti_for(DeviceBackend&, std::string& why) {
  why = "this build has no CUPTI headers (the CUDA toolkit's include/cupti.h was not found)";
  return nullptr;
}

KernelActivity* kernel_activity(DeviceBackend& backend, std::string& why) {
  cupti_for(backend, why);
  return nullptr;
}

#endif

}  // namespace tessera::device
