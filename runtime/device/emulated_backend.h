// The host emulation of a GPU, for testing the GPU target on machines
// without one: device memory is host memory (through the same caching
// allocator), and each generated kernel is compiled by the host's C++
// compiler against the emulation prelude (codegen/kernel/cuda/
// tessera_cuda_host.h: a block's threads as fibers) into a shared library
// (its image, which the kernel cache keeps like a cubin), loaded with dlopen
// and run on the calling thread. Selected with TESSERA_GPU_EMULATION=1
// together with --device=gpu (docs/gpu.md); never by --device=auto. It
// needs a C++ compiler and Boost.Context's headers and library at run time
// ($TESSERA_EMULATION_CXX, default c++), so it is a testing aid only.
// TESSERA_GPU_EMULATION_MEMORY=BYTES caps its device memory (tests of
// running out of it).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/device/device_backend.h"

namespace tessera::device {

class EmulatedBackend : public DeviceBackend {
 public:
  // `memory_cap`: bytes of device memory at most (0: $TESSERA_GPU_EMULATION_MEMORY, else no cap).
  explicit EmulatedBackend(size_t memory_cap = 0);
  ~EmulatedBackend() override;

  std::string describe() const override;
  std::string arch() const override { return "host"; }
  bool warpgroup_products() const override { return true; }
  DeviceAllocator& allocator() override { return *alloc_; }
  void upload(DevicePtr to, const void* from, size_t bytes) override;
  void download(void* to, DevicePtr from, size_t bytes) override;
  bool host_memory() const override { return true; }
  std::string image_kind() const override { return "emulated"; }
  std::string image_identity(const kir::CudaKernelSource& src) const override;
  std::string compile(const kir::CudaKernelSource& src) override;
  std::shared_ptr<LaunchableKernel> load(const kir::CudaKernelSource& src, const std::string& image) override;
  void matmul(const GemmDesc& d) override;
  std::string compiler() const override { return cxx_ + " (host emulation)"; }
  Limits limits() const override;
  void set_emulated_kernel_hook(EmulatedKernelHook hook) override;
  // Streams and events that record the order they are given
  // (emulated_stream.h). A kernel launch, upload or download that touches
  // memory that work enqueued on another stream uses, before the kernels'
  // stream waited for that work, faults (DeviceFault): on a GPU it could
  // read that work's output before it is written, or overwrite its input.
  void* create_stream() override;
  void* record_event(void* stream) override;
  void stream_wait(void* stream, void* event) override;
  bool event_done(void* event) override;  // false only after a stall (EmulatedStream::stalled)
  void destroy_event(void* event) override;

  struct Order;  // the streams and the launch count, shared with the kernels

 private:
  class HostMemory;
  std::unique_ptr<HostMemory> memory_;
  std::unique_ptr<DeviceAllocator> alloc_;
  std::string cxx_;
  // Shared with its kernels, which may outlive the backend's use.
  std::shared_ptr<std::atomic<EmulatedKernelHook>> hook_ = std::make_shared<std::atomic<EmulatedKernelHook>>(nullptr);
  std::shared_ptr<Order> order_;
};

}  // namespace tessera::device
