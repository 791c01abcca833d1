// The vector-math primitives built for baseline x86-64 (SSE2, 4 f32 lanes).
#include <immintrin.h>

#define TESSERA_VM_ISA sse2
#define TESSERA_VM_ISA_NAME "sse2"
#define TESSERA_VM_VF __m128
#define TESSERA_VM_SLEEF(f) Sleef_##f##f4_u10
#define TESSERA_VM_SLEEF35(f) Sleef_##f##f4_u35
#define TESSERA_VM_SQRT(v) _mm_sqrt_ps(v)
#include "vm/tensor/vector_math_impl.h"
