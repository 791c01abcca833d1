// Which of a fused region's epilogue cuBLASLt can compute with the region's
// leading matrix product, so that the GPU skips the region's kernel: the
// region must be exactly
//
//   product = matmul(a, b)            (a and b of one dtype: f32, f16, bf16)
//   sum     = product + bias          (bias: a region input of the product's
//                                      dtype along its last dim, 1 elsewhere)
//   out     = relu(sum)               (optional)
//
// with `out` (or `sum`) its one output. cuBLASLt's bias epilogue adds the
// bias to the f32 accumulator (CUBLASLT_EPILOGUE_BIAS, RELU_BIAS); its GELU
// epilogues are the tanh approximation, and the interpreter's gelu is erf's
// (x/2 (1 + erf(x / sqrt 2))), so a gelu stays in the region's kernel.
//
// Pure (no device): the GPU target plans once per kernel it builds, and the
// plan is unit-tested on regions alone.
#pragma once

#include <string>

#include "runtime/device/gemm_desc.h"
#include "vm/graph/region.h"

namespace tessera::kernels {

struct GemmEpiloguePlan {
  // None: the region's own kernel computes everything after the product.
  device::GemmEpilogue epilogue = device::GemmEpilogue::None;
  size_t bias_input = 0;  // Bias, ReluBias: which of the region's inputs is the bias
  std::string why_not;    // None: why not (for tests and --dump)
  explicit operator bool() const { return epilogue != device::GemmEpilogue::None; }
};

GemmEpiloguePlan plan_gemm_epilogue(const Region& r);

}  // namespace tessera::kernels
