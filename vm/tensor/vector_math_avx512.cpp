// The vector-math primitives built for AVX-512 (16 f32 lanes); this file is
// compiled with -mavx512f and used only when the CPU reports AVX-512F.
#include <immintrin.h>

#define TESSERA_VM_ISA avx512
#define TESSERA_VM_ISA_NAME "avx512"
#define TESSERA_VM_VF __m512
#define TESSERA_VM_SLEEF(f) Sleef_##f##f16_u10
#define TESSERA_VM_SLEEF35(f) Sleef_##f##f16_u35
// (the zero-masked form: _mm512_sqrt_ps trips GCC 12's -Wmaybe-uninitialized)
#define TESSERA_VM_SQRT(v) _mm512_maskz_sqrt_ps(0xFFFF, v)
#include "vm/tensor/vector_math_impl.h"
