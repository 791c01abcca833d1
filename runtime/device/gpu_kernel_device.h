// GpuKernelDevice: the JIT's fused calls on a GPU (kir::KernelDevice, which
// the call sites ask first: codegen/kernel/kernel_device.h), over a
// DeviceBackend (the CUDA driver, or the host emulation in tests).
//
// A call site's first call lowers its region to a K2 kernel (dims are
// parameters), emits CUDA C++ and builds it on the background thread; until
// it is ready the call runs on the CPU's kernels (as while a CPU K3 kernel
// is compiled). Once its shapes settle (the CPU site's policy, kernel_site.h:
// `specialize` calls in a row, dims that keep changing stay parameters, at
// most `recompiles` per site) a K3 kernel with those dims as constants is
// tuned (gpu_kernel_tuner.h): each variant is built the same way, and the
// first call of those shapes once all are built times them with CUDA events
// and keeps the fastest, noted in the kernel cache so that a later run
// builds only it. Calls of those shapes run it. Every call runs on the
// device:
//   - tensor inputs whose elements the device holds (an earlier call's
//     output, or a host tensor uploaded by an earlier call that the host
//     has not touched since) are passed as they are; others are uploaded,
//     and keep the device's block as a mirror (device_copy.h) until the host
//     touches them, so a weight made once is uploaded once;
//   - a leading matrix product runs on cuBLASLt (f32), attention as
//     lower_attention's kernel; then the region's kernel;
//   - the output is a tensor whose elements stay on the device (a
//     DeviceCopy over its block: vm/tensor/device_copy.h) until the host
//     reads them, so a chain of fused calls moves nothing between host and
//     device but its inputs from the host.
// A region the device cannot run (the emitter refuses it, a product of half
// precision) is counted with its reason and runs on the CPU: never silently.
// One thread (the VM's) calls run(); the background thread only builds.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "codegen/kernel/kernel_compile_queue.h"
#include "codegen/kernel/kernel_device.h"
#include "codegen/kernel/kernel_events.h"
#include "runtime/device/device_backend.h"
#include "runtime/device/gpu_kernel_tuner.h"

namespace tessera::device {

class GpuKernelDevice : public kir::KernelDevice, public std::enable_shared_from_this<GpuKernelDevice> {
 public:
  struct Options {
    // Build kernels on the background thread (false: before the call goes
    // on, as async=0 does for the CPU's K3 kernels).
    bool background = true;
    int specialize = 16, recompiles = 8;  // the JIT parameters of the same names
    // Tune K3 kernels by timing their variants (the JIT parameter gputune;
    // false: one K3 kernel with K2's tile, the same kernels every run).
    bool tune = true;
    // Where tuning choices are kept (the kernel cache's directory; empty:
    // not kept, every run tunes).
    std::string tune_cache_dir;
  };
  GpuKernelDevice(std::shared_ptr<DeviceBackend> backend, Options options);
  ~GpuKernelDevice() override;

  std::optional<Value> run(const Region& r, std::shared_ptr<void>& site, std::span<const Value> inputs) override;

  const DeviceBackend& backend() const { return *backend_; }
  void drain() { queue_.drain(); }  // waits for the builds (tests)

  struct Stats {
    uint64_t sites = 0;             // call sites that asked the device
    uint64_t launches = 0;          // fused calls run on the device
    uint64_t k2_launches = 0, k3_launches = 0;
    uint64_t k3_tuned = 0;          // K3 kernels chosen by timing their variants
    uint64_t k3_kept = 0;           // K3 kernels built as an earlier run's tuning chose (nothing timed)
    uint64_t variants_timed = 0;
    double tune_ms = 0;             // the calls' time spent timing variants
    uint64_t cpu_while_building = 0;  // calls run on the CPU while their kernel was built
    uint64_t refused = 0;           // calls of regions the device cannot run (run on the CPU)
    std::string first_refusal;      // the first such region's reason
    uint64_t uploads = 0, upload_bytes = 0;      // inputs copied to the device (their elements were on the host)
    uint64_t downloads = 0, download_bytes = 0;  // outputs copied back (the host read them)
    uint64_t resident_inputs = 0;   // inputs already on the device (an earlier call's output, or a mirror)
    DeviceAllocator::Stats memory;
    PinnedStaging::Stats staging;
    DeviceBackend::BuildStats builds;
  };
  Stats stats() const;
  // The --stats lines ("  gpu: ...").
  std::string report() const;

  // Counted by the DeviceCopy of outputs when the host reads them.
  void note_download(size_t bytes);

  // Where the kernel events go (kernel.compiled, kernel.k3, kernel.dynamic,
  // kernel.tuned, kernel.refused with device=gpu); null: nowhere.
  void set_events(std::shared_ptr<kir::KernelEventSink> e);

 private:
  struct Variant;
  struct Tuning;
  struct Site;
  void refuse(Site& s, const std::string& why);
  void prepare(const Region& r, Variant& v, bool with_step);
  void observe(const Region& r, Site& s, const std::vector<int64_t>& sym);
  const Variant* tune(const Region& r, Site& s, const std::vector<int64_t>& sym, const std::vector<void*>& params);
  void launch_timed(const Region& r, const Variant& v, const std::vector<int64_t>& grid, std::vector<void*>& args,
                    int64_t bytes);
  // Reports an event if someone listens; `fields` is called only then.
  template <class Fields>
  void event(std::string_view name, Fields&& fields) {
    std::shared_ptr<kir::KernelEventSink> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      e = events_;
    }
    if (e) e->kernel_event(name, fields());
  }

  std::shared_ptr<DeviceBackend> backend_;
  Options opt_;
  kir::KernelDiskCache tune_notes_;
  kir::KernelCompileQueue queue_;
  mutable std::mutex mu_;  // stats_ (the background thread touches none of it but the build's), events_
  Stats stats_;
  std::shared_ptr<kir::KernelEventSink> events_;
};

}  // namespace tessera::device
