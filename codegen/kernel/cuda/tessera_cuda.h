// The one header generated CUDA C++ includes (cuda_emitter.h). Generated
// kernels call device intrinsics only through the tsr_* wrappers defined
// here, so that one source compiles in two places:
//
//   - by NVRTC for the GPU (no other header: NVRTC's built-in math and
//     inline PTX for the half-precision conversions);
//   - by the host C++ compiler with TSR_HOST_EMULATION defined, against the
//     emulation prelude tessera_cuda_host.h (a block's threads as fibers),
//     so that the generated code is run and checked on machines without a GPU.
//
// The wrappers a backend supplies: tsr_thread(), tsr_block(), tsr_sync(),
// tsr_shfl_xor(v, lane_mask), tsr_any(p), tsr_all(p), TSR_SMEM (the block's
// dynamic shared memory), f16 <-> f32, the f32/f64 math functions, and the
// tensor-core instructions (sm_80+): tsr_mma_f16/bf16 (mma m16n8k16, f32
// accumulators), tsr_ldmatrix_x{1,2,4}[_trans] and tsr_cp_async16 with
// tsr_cp_async_commit/tsr_cp_async_wait<N>. The
// rest (NaN-aware min/max, relu, gelu, casts with the interpreter's
// semantics) is written once below on top of them.
#ifndef TESSERA_CUDA_H
#define TESSERA_CUDA_H

#ifdef TSR_HOST_EMULATION
#include "tessera_cuda_host.h"
#else
#define TSR_FN __device__ __forceinline__
#define TSR_KERNEL extern "C" __global__
// At least one block per multiprocessor: with -maxrregcount=255
// (CudaKernelCompiler) ptxas may give a thread every register rather than
// spill to reach an occupancy the kernel does not need.
#define TSR_BOUNDS(n) __launch_bounds__(n, 1)
extern __shared__ __align__(16) unsigned char tsr_smem[];
#define TSR_SMEM tsr_smem
typedef long long tsr_i64;
TSR_FN int tsr_thread() { return (int)threadIdx.x; }
TSR_FN tsr_i64 tsr_block() { return (tsr_i64)blockIdx.x; }
TSR_FN void tsr_sync() { __syncthreads(); }
template <class T>
TSR_FN T tsr_shfl_xor(T v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
TSR_FN bool tsr_any(bool p) { return __any_sync(0xffffffffu, p) != 0; }
TSR_FN bool tsr_all(bool p) { return __all_sync(0xffffffffu, p) != 0; }
TSR_FN float tsr_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
TSR_FN unsigned short tsr_f32_to_f16(float f) {  // round to nearest even
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
TSR_FN float tsr_bits_f32(unsigned int u) { return __uint_as_float(u); }
TSR_FN unsigned int tsr_f32_bits(float f) { return __float_as_uint(f); }
TSR_FN double tsr_bits_f64(unsigned long long u) { return __longlong_as_double((long long)u); }
TSR_FN float tsr_expf(float x) { return expf(x); }
TSR_FN float tsr_exp2f(float x) { return exp2f(x); }
TSR_FN float tsr_logf(float x) { return logf(x); }
TSR_FN float tsr_log1pf(float x) { return log1pf(x); }
TSR_FN float tsr_sqrtf(float x) { return sqrtf(x); }
TSR_FN double tsr_sqrt(double x) { return sqrt(x); }
TSR_FN float tsr_tanhf(float x) { return tanhf(x); }
TSR_FN float tsr_erff(float x) { return erff(x); }
TSR_FN float tsr_sinf(float x) { return sinf(x); }
TSR_FN float tsr_cosf(float x) { return cosf(x); }
TSR_FN float tsr_powf(float a, float b) { return powf(a, b); }
TSR_FN float tsr_fabsf(float x) { return fabsf(x); }
TSR_FN double tsr_fabs(double x) { return fabs(x); }
TSR_FN bool tsr_isnan(double x) { return x != x; }

// ---------------------------------------------------------------- tensor cores (sm_80+)
// mma, ldmatrix: warp-collective, every lane of the warp calls them at the
// same point. Their operands are the PTX ISA's fragments:
//   tsr_mma_{f16,bf16}(d, a, b, c): D = A B + C, mma.m16n8k16.row.col, f32
//     accumulators. With g = lane / 4, q = lane % 4, halves h0..h7 of a (low
//     16 bits of a[i] first): A[g][2q + {0,1}], A[g+8][..], A[g][2q+8 + {0,1}],
//     A[g+8][..]; b: B[2q + {0,1}][g], B[2q+8 + {0,1}][g]; c and d:
//     C[g][2q + {0,1}], C[g+8][2q + {0,1}].
//   tsr_ldmatrix_x{1,2,4}[_trans](r, row): lane l passes the shared address
//     of row l % 8 of matrix l / 8 (16-byte aligned); r[i] gets matrix i's
//     row l / 4, columns 2(l % 4) and 2(l % 4) + 1 (_trans: of the transpose).
//   tsr_cp_async16(smem, gmem, src_bytes): per thread; 16 bytes, those past
//     src_bytes zeros, landed by tsr_cp_async_commit() + tsr_cp_async_wait<N>()
//     (at most N of the thread's committed groups still pending).
// The asm that touches memory says so ("memory"), so that the compiler keeps
// the thread's own shared-memory stores and loads on their side of it.
TSR_FN unsigned tsr_smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
TSR_FN void tsr_mma_f16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
TSR_FN void tsr_mma_bf16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
TSR_FN void tsr_ldmatrix_x1(unsigned r[1], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(tsr_smem_addr(row)) : "memory");
}
TSR_FN void tsr_ldmatrix_x2(unsigned r[2], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(tsr_smem_addr(row))
               : "memory");
}
TSR_FN void tsr_ldmatrix_x4(unsigned r[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(tsr_smem_addr(row))
               : "memory");
}
TSR_FN void tsr_ldmatrix_x1_trans(unsigned r[1], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
               : "=r"(r[0])
               : "r"(tsr_smem_addr(row))
               : "memory");
}
TSR_FN void tsr_ldmatrix_x2_trans(unsigned r[2], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(tsr_smem_addr(row))
               : "memory");
}
TSR_FN void tsr_ldmatrix_x4_trans(unsigned r[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(tsr_smem_addr(row))
               : "memory");
}
// Global -> shared, 16 bytes, bypassing L1 (.cg); bytes past src_bytes are zeros.
TSR_FN void tsr_cp_async16(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(tsr_smem_addr(smem)), "l"(gmem), "r"(src_bytes)
               : "memory");
}
TSR_FN void tsr_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
TSR_FN void tsr_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#endif

// ---------------------------------------------------------------- half precision
// bf16 as the interpreter rounds it (vm/tensor/dtype.cpp): nearest even, NaN kept quiet.
TSR_FN float tsr_bf16_to_f32(unsigned short h) { return tsr_bits_f32((unsigned int)h << 16); }
TSR_FN unsigned short tsr_f32_to_bf16(float f) {
  const unsigned int x = tsr_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#ifdef TSR_HOST_EMULATION
// The emulated mma is defined here rather than in the prelude so that it
// converts its operands with the wrappers above (tsr_bf16_to_f32 comes after
// the prelude).
TSR_FN void tsr_mma_f16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
  tsr_emu::mma_m16n8k16(d, a, b, c, tsr_f16_to_f32);
}
TSR_FN void tsr_mma_bf16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
  tsr_emu::mma_m16n8k16(d, a, b, c, tsr_bf16_to_f32);
}
#endif

// ---------------------------------------------------------------- elementwise math
// min/max on floats: NaN propagates, ties keep a (the interpreter's rule).
template <class T>
TSR_FN T tsr_min(T a, T b) { return (tsr_isnan((double)a) || tsr_isnan((double)b)) ? a + b : (b < a ? b : a); }
template <class T>
TSR_FN T tsr_max(T a, T b) { return (tsr_isnan((double)a) || tsr_isnan((double)b)) ? a + b : (b > a ? b : a); }
TSR_FN tsr_i64 tsr_imin(tsr_i64 a, tsr_i64 b) { return b < a ? b : a; }
TSR_FN tsr_i64 tsr_imax(tsr_i64 a, tsr_i64 b) { return b > a ? b : a; }
TSR_FN int tsr_imin(int a, int b) { return b < a ? b : a; }
TSR_FN int tsr_imax(int a, int b) { return b > a ? b : a; }
// Ints wrap (two's complement), which C++ leaves undefined for signed types.
TSR_FN tsr_i64 tsr_iadd(tsr_i64 a, tsr_i64 b) { return (tsr_i64)((unsigned long long)a + (unsigned long long)b); }
TSR_FN tsr_i64 tsr_isub(tsr_i64 a, tsr_i64 b) { return (tsr_i64)((unsigned long long)a - (unsigned long long)b); }
TSR_FN tsr_i64 tsr_imul(tsr_i64 a, tsr_i64 b) { return (tsr_i64)((unsigned long long)a * (unsigned long long)b); }
TSR_FN tsr_i64 tsr_ineg(tsr_i64 a) { return (tsr_i64)(0ull - (unsigned long long)a); }
TSR_FN int tsr_iadd(int a, int b) { return (int)((unsigned int)a + (unsigned int)b); }
TSR_FN int tsr_isub(int a, int b) { return (int)((unsigned int)a - (unsigned int)b); }
TSR_FN int tsr_imul(int a, int b) { return (int)((unsigned int)a * (unsigned int)b); }
TSR_FN int tsr_ineg(int a) { return (int)(0u - (unsigned int)a); }
// Index math never traps: a zero divisor gives 0, -1 gives -a (and 0 for rem).
template <class T>
TSR_FN T tsr_idiv(T a, T b) { return b == 0 ? T(0) : (b == T(-1) ? tsr_ineg(a) : a / b); }
template <class T>
TSR_FN T tsr_irem(T a, T b) { return (b == 0 || b == T(-1)) ? T(0) : a % b; }
template <class T>
TSR_FN T tsr_iabs(T a) { return a < 0 ? tsr_ineg(a) : a; }
TSR_FN float tsr_sigmoid(float x) { return 1.0f / (1.0f + tsr_expf(-x)); }
TSR_FN float tsr_relu(float x) { return (x > 0.0f || tsr_isnan(x)) ? x : 0.0f; }
TSR_FN float tsr_gelu(float x) { return 0.5f * x * (1.0f + tsr_erff(x * 0.70710678118654752f)); }
TSR_FN float tsr_silu(float x) { return x * tsr_sigmoid(x); }
// max(x, 0) + log1p(e^-|x|): no overflow for large x (the interpreter's form).
TSR_FN float tsr_softplus(float x) { return (x > 0.0f ? x : 0.0f) + tsr_log1pf(tsr_expf(-tsr_fabsf(x))); }
TSR_FN float tsr_rsqrt(float x) { return 1.0f / tsr_sqrtf(x); }

// ---------------------------------------------------------------- reductions
// Folds (b at index ib) into argmax's partial result (a at index ia), so
// that partial results may meet in any order (warp shuffles): the first NaN
// wins, else the largest value, and among equal values the smallest index.
template <class T>
TSR_FN void tsr_argmax_merge(T& a, tsr_i64& ia, T b, tsr_i64 ib) {
  const bool na = tsr_isnan((double)a), nb = tsr_isnan((double)b);
  const bool take = na ? (nb && ib < ia) : (nb || b > a || (b == a && ib < ia));
  if (take) a = b, ia = ib;
}

// ---------------------------------------------------------------- casts
// Float to int saturates, NaN gives 0 (as TensorObj::set_i); through
// double, which holds every f32 exactly.
TSR_FN tsr_i64 tsr_f2i64(double f) {
  return tsr_isnan(f) ? 0
         : f <= -9223372036854775808.0 ? (-9223372036854775807LL - 1)
         : f >= 9223372036854775808.0  ? 9223372036854775807LL
                                       : (tsr_i64)f;
}
TSR_FN int tsr_f2i32(double f) {
  return tsr_isnan(f) ? 0 : f <= -2147483648.0 ? (-2147483647 - 1) : f >= 2147483647.0 ? 2147483647 : (int)f;
}

#endif  // TESSERA_CUDA_H
