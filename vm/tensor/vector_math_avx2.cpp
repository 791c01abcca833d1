// The vector-math primitives built for AVX2 (8 f32 lanes); this file is
// compiled with -mavx2 and used only when the CPU reports AVX2.
#include <immintrin.h>

#define TESSERA_VM_ISA avx2
#define TESSERA_VM_ISA_NAME "avx2"
#define TESSERA_VM_VF __m256
#define TESSERA_VM_SLEEF(f) Sleef_##f##f8_u10
#define TESSERA_VM_SLEEF35(f) Sleef_##f##f8_u35
#define TESSERA_VM_SQRT(v) _mm256_sqrt_ps(v)
#include "vm/tensor/vector_math_impl.h"
