// One matrix product for a device (DeviceBackend::matmul, GpuGemm::run):
// row-major C[b] (m x n) = A[b] (m x k) B[b] (k x n), b < batch, with batch
// strides in elements (0: every entry uses the same matrix), the operands
// and the result of one element type, accumulated in f32 (the interpreter's
// product: half operands widened to f32, the result rounded once), and
// optionally cuBLASLt's bias epilogue (runtime/kernels/gemm_epilogue.h says
// when it applies).
#pragma once

#include <cstdint>

#include "runtime/device/device_allocator.h"
#include "vm/tensor/dtype.h"

namespace tessera::device {

enum class GemmEpilogue {
  None,      // C = A B
  Bias,      // C = A B + bias (n elements of the dtype, broadcast over the rows and the batch)
  ReluBias,  // C = relu(A B + bias)
};

const char* gemm_epilogue_name(GemmEpilogue e);

struct GemmDesc {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  DType dtype = DType::F32;  // A's, B's, C's and the bias's: F32, F16 or BF16
  DevicePtr a = 0, b = 0, c = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  GemmEpilogue epilogue = GemmEpilogue::None;
  DevicePtr bias = 0;  // with an epilogue
  // An f32 product may round its operands to TF32 on tensor cores (the JIT
  // parameter tf32, as PyTorch's allow_tf32); ignored for half operands,
  // which tensor cores take as they are.
  bool tf32 = false;
};

inline const char* gemm_epilogue_name(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::None: return "none";
    case GemmEpilogue::Bias: return "bias";
    case GemmEpilogue::ReluBias: return "relu(bias)";
  }
  return "?";
}

}  // namespace tessera::device
