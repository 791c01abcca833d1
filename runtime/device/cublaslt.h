// cuBLASLt, NVIDIA's matrix product library, loaded with dlopen like the
// driver and NVRTC (nothing links it): plain matrix products of fused
// regions run through it (a well-kept library does GEMM better than a first
// kernel), with the region's generated epilogue kernel after it.
//
// CublasLt is the library (available or not, with why); GpuGemm is one
// handle and workspace on a stream, computing row-major f32 products
// C[b] = A[b] B[b] with batch strides (a stride of 0 broadcasts), exact f32
// arithmetic (CUBLAS_COMPUTE_32F, no TF32), as the interpreter's OpenBLAS
// product. Row-major is cuBLAS's column-major transposed: C^T = B^T A^T,
// so the call swaps A and B and m and n.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/device_allocator.h"
#include "runtime/device/dynamic_library.h"
#include "runtime/device/gpu_stream.h"

namespace tessera::device {

class CublasLt : public OptionalLibrary {
 public:
  // The process's cuBLASLt ($TESSERA_CUBLASLT_LIBRARY, else libcublasLt.so.13,
  // libcublasLt.so.12, libcublasLt.so, $CUDA_HOME/lib64/libcublasLt.so.13,
  // /usr/local/cuda/lib64/libcublasLt.so.13). Never unloaded.
  static const CublasLt& get();
  static std::vector<std::string> default_candidates();
  explicit CublasLt(const std::vector<std::string>& candidates);
  ~CublasLt();
  size_t version() const { return version_; }  // e.g. 130000

  struct Api;
  const Api& api() const { return *api_; }

 private:
  std::unique_ptr<Api> api_;
  size_t version_ = 0;
};

class GpuGemm {
 public:
  // Throws DeviceError when cuBLASLt is unavailable or cannot make a handle.
  GpuGemm(const CublasLt& lib, GpuStream& stream, DeviceAllocator& alloc);
  GpuGemm(const GpuGemm&) = delete;
  GpuGemm& operator=(const GpuGemm&) = delete;
  ~GpuGemm();

  // C[b] (m x n) = A[b] (m x k) B[b] (k x n), row-major f32, b < batch;
  // strides in elements between batch entries (0: every entry uses the same
  // matrix). Asynchronous on the stream.
  void run(int64_t batch, int64_t m, int64_t n, int64_t k, DevicePtr a, int64_t stride_a, DevicePtr b, int64_t stride_b,
           DevicePtr c, int64_t stride_c);

 private:
  const CublasLt& lib_;
  GpuStream& stream_;
  DeviceAllocator& alloc_;
  void* handle_ = nullptr;  // cublasLtHandle_t
  DevicePtr workspace_ = 0;
  size_t workspace_bytes_ = 0;
};

}  // namespace tessera::device
