// The host emulation of a GPU, for testing the GPU backend on machines
// without one: device memory is host memory (through the same caching
// allocator), and each generated kernel is compiled by the host's C++
// compiler against the emulation prelude (codegen/kernel/cuda/
// tessera_cuda_host.h: a block's threads as fibers), loaded with dlopen and
// run on the calling thread. Selected with TESSERA_GPU_EMULATION=1 together
// with --device=gpu (docs/gpu.md); never by --device=auto. It needs a C++
// compiler and Boost.Context's headers and library at run time
// ($TESSERA_EMULATION_CXX, default c++), so it is a testing aid only.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "runtime/device/device_backend.h"

namespace tessera::device {

class EmulatedBackend : public DeviceBackend {
 public:
  EmulatedBackend();
  ~EmulatedBackend() override;

  std::string describe() const override;
  std::string arch() const override { return "host"; }
  DeviceAllocator& allocator() override { return *alloc_; }
  void upload(DevicePtr to, const void* from, size_t bytes) override;
  void download(void* to, DevicePtr from, size_t bytes) override;
  bool host_memory() const override { return true; }
  std::shared_ptr<LaunchableKernel> build(const kir::CudaKernelSource& src) override;
  void matmul_f32(int64_t batch, int64_t m, int64_t n, int64_t k, DevicePtr a, int64_t stride_a, DevicePtr b,
                  int64_t stride_b, DevicePtr c, int64_t stride_c) override;
  BuildStats build_stats() const override;

 private:
  class HostMemory;
  std::unique_ptr<HostMemory> memory_;
  std::unique_ptr<DeviceAllocator> alloc_;
  std::string cxx_;
  mutable std::mutex mu_;
  uint64_t built_ = 0;
  double build_ms_ = 0;
};

}  // namespace tessera::device
