// GpuCrashCapture: what a fused call ran when a kernel faulted on the
// device (device::DeviceFault: an illegal address or instruction, a failed
// launch; on the emulation, a misuse it catches), written to a directory
// for a bug report, which the script's runtime error names.
//
// The directory (tessera-crash-PID-N under $TESSERA_CRASH_DIR, else the
// system's temporary directory) holds:
//   error.txt              the device's message
//   region.txt             the fused region (Graph IR)
//   KERNEL.kir, KERNEL.cu  each kernel of the call: its kernel IR and CUDA C++
//   launch.json            the device, each kernel's entry, threads, shared
//                          memory, grid and arguments, the variant and tier,
//                          the call's dims and its inputs' dtypes and shapes
//   recent-launches.txt    the target's last launches, oldest first (a GPU
//                          reports a fault at a later call than the kernel's)
// A fault that surfaces outside a call (reading a tensor back) writes the
// error and the recent launches only.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/kernel_ir.h"
#include "vm/graph/region.h"

namespace tessera::kernels {

struct GpuCrashReport {
  std::string error;   // the device's message
  std::string device;  // DeviceBackend::describe()
  const Region* region = nullptr;
  struct KernelRun {
    std::string name;  // "attention", "region"
    const kir::Kernel* kernel = nullptr;
    const kir::CudaKernelSource* source = nullptr;
    std::vector<int64_t> grid;
  };
  std::vector<KernelRun> kernels;
  std::string variant;
  std::string tier;  // "K2", "K3"
  std::vector<int64_t> dims;
  std::vector<std::string> inputs;  // "f16 [2, 70, 80]", "scalar"
  std::vector<std::string> recent;  // the last launches, oldest first
  std::vector<std::string> events;  // the kernel runtime's last JIT events, oldest first
};

// The launches a GPU target keeps for its crash captures: the last
// kKept, one line each.
class RecentLaunches {
 public:
  static constexpr size_t kKept = 16;
  void add(std::string line);
  std::vector<std::string> lines() const { return {lines_.begin(), lines_.end()}; }

 private:
  std::deque<std::string> lines_;
};

// The kernel runtime's last JIT events (kernels compiled, promoted to K3,
// tuned, refused, dims made dynamic), one --jit-log line each, kept with or
// without an event log: the runtime adds them, its device target's crash
// captures read them (recent-events.txt). Thread-safe.
class RecentEvents {
 public:
  void add(std::string line);
  std::vector<std::string> lines() const;

 private:
  mutable std::mutex mu_;
  RecentLaunches ring_;
};

// Writes `r` to a new crash directory; returns its path, or an empty
// string with `why` set where it could not be written.
std::string write_gpu_crash(const GpuCrashReport& r, std::string& why);

// The message of the script's runtime error: the fault, then where the
// capture is (or why there is none).
std::string gpu_crash_message(const std::string& what, const GpuCrashReport& r);

}  // namespace tessera::kernels
