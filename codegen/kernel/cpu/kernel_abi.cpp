// The functions generated kernels call (kernel_abi.h).
#include "codegen/kernel/cpu/kernel_abi.h"
#include "vm/tensor/vector_math.h"

extern "C" void tessera_kernel_dot_f32(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  tessera::vmath::table().dot(m, n, k, a, b, c);
}
