// cuBLASLt, NVIDIA's matrix product library, loaded with dlopen like the
// driver and NVRTC (nothing links it): plain matrix products of fused
// regions run through it (a well-kept library does GEMM better than a first
// kernel), with the region's generated epilogue kernel after it.
//
// CublasLt is the library (available or not, with why); GpuGemm is one
// handle and workspace on a stream, computing row-major products
// C[b] = A[b] B[b] with batch strides (a stride of 0 broadcasts) of f32,
// f16 or bf16 operands (the result of the same type), always accumulated in
// f32 (CUBLAS_COMPUTE_32F, as the interpreter widens half operands for
// OpenBLAS's sgemm and rounds the result once); an f32 product uses TF32
// only when asked (GemmDesc::tf32). Optionally with the bias epilogue
// (GemmEpilogue). Row-major is cuBLAS's column-major transposed:
// C^T = B^T A^T, so the call swaps A and B and m and n, and the row-major
// bias along C's last dim is a bias along C^T's rows, which is what
// cuBLASLt's bias epilogue adds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/device_allocator.h"
#include "runtime/device/dynamic_library.h"
#include "runtime/device/gemm_desc.h"
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

  // The product `d` (gemm_desc.h), asynchronous on the stream. Throws
  // DeviceError where cuBLASLt has no algorithm for it, and for an
  // epilogue with an empty inner dim (k = 0: cuBLASLt takes none; the
  // caller computes the epilogue of zeros itself).
  void run(const GemmDesc& d);

 private:
  const CublasLt& lib_;
  GpuStream& stream_;
  DeviceAllocator& alloc_;
  void* handle_ = nullptr;  // cublasLtHandle_t
  DevicePtr workspace_ = 0;
  size_t workspace_bytes_ = 0;
};

}  // namespace tessera::device
