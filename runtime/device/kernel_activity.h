// KernelActivity: what a GPU ran, kernel by kernel, as CUPTI's Activity API
// records it (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which times kernels
// without serializing them): start and end on the device, grid and block,
// registers, static and dynamic shared memory, and the external correlation
// id that was pushed when it was launched (Tessera pushes one per fused
// call, and per variant being timed), so that each record is tied to the
// call that made it, cuBLASLt's kernels included.
//
// Records are delivered in buffers that CUPTI fills on its own; flush()
// takes those complete at a sync point (a download, the end of a run, a
// tuning's timing), never per launch. The one-time cost of instrumenting
// each module CUPTI reports (CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION)
// is summed for --stats.
//
// CUPTI's buffer callbacks take no user data, so one activity serves the
// process: kernel_activity() starts it once (before any module is loaded,
// as CUPTI's docs advise) and every caller shares it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::device {

class Cupti;
class DeviceBackend;

struct DeviceKernelRecord {
  std::string name;                // the kernel's entry ("tsr_region"; cuBLASLt's own)
  double start_ms = 0, end_ms = 0;  // on the JIT's clock (jit_clock.h)
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers = 0;  // per thread
  int32_t static_smem = 0, dynamic_smem = 0;
  uint64_t external_id = 0;  // the id pushed at its launch; 0: none
  double ms() const { return end_ms - start_ms; }
  int64_t threads_per_block() const { return int64_t{block[0]} * block[1] * block[2]; }
  int64_t blocks() const { return int64_t{grid[0]} * grid[1] * grid[2]; }
};

class KernelActivity {
 public:
  virtual ~KernelActivity() = default;
  // What records them ("CUPTI 13.0 (API 130001, ...)").
  virtual std::string describe() const = 0;
  // Kernels launched by this thread from push to pop carry `id`.
  virtual void push(uint64_t id) = 0;
  virtual void pop() = 0;
  // The records of kernels that completed since the last flush (the caller
  // has synchronized with the device if it needs them all).
  virtual std::vector<DeviceKernelRecord> flush() = 0;
  // Milliseconds CUPTI spent instrumenting modules (reported, not per launch).
  virtual double instrumentation_ms() const = 0;
  // Records CUPTI dropped (its buffers were full).
  virtual uint64_t dropped() const = 0;
  // Turns the activity kinds off and on again (measuring their cost: on
  // and off in one run); on when started.
  virtual void set_enabled(bool on) = 0;
};

// The process's activity on `backend`, started on the first call; null,
// with `why` a sentence for --stats, where CUPTI cannot serve: no library,
// the host emulation without a test double ($TESSERA_CUPTI_LIBRARY), a
// build without CUPTI's headers.
KernelActivity* kernel_activity(DeviceBackend& backend, std::string& why);
// The process's CUPTI where it can see `backend`'s kernels (kernel_activity
// and kernel_metrics.h's uses); null, with `why`, where it cannot.
const Cupti* cupti_for(DeviceBackend& backend, std::string& why);

}  // namespace tessera::device
