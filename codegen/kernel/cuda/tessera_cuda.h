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
// tsr_bar_sync(id, count) (a named barrier among `count` threads, a
// multiple of 32: the consumers of a warp-specialized kernel), tsr_shfl_xor(v, lane_mask), tsr_any(p), tsr_all(p), TSR_SMEM (the block's
// dynamic shared memory), f16 <-> f32, the f32/f64 math functions, and the
// tensor-core instructions (sm_80+): tsr_mma_f16/bf16 (mma m16n8k16, f32
// accumulators), tsr_ldmatrix_x{1,2,4}[_trans] and tsr_cp_async16 with
// tsr_cp_async_commit/tsr_cp_async_wait<N>; Hopper's (sm_90: mbarrier and
// TMA: tsr_mbar_init/arrive/arrive_expect_tx/try_wait/wait,
// tsr_fence_mbar_init, tsr_fence_proxy_async, tsr_tma_load_2d with a
// tsr_tensor_map kernel parameter (TSR_GRID_CONST); sm_90a only: wgmma,
// tsr_wgmma_f16/bf16<N, TransA, TransB> (m64nNk16, N = 16, 32, 64, 128, 256,
// f32 accumulators, A and B by tsr_wgmma_desc) with tsr_wgmma_fence/commit/
// wait<N>, and tsr_setmaxnreg_inc/dec<R>). The
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
// 1024-aligned: a 128-byte-swizzled tile (TMA, wgmma) repeats its pattern every 1024 bytes of address.
extern __shared__ __align__(1024) unsigned char tsr_smem[];
#define TSR_SMEM tsr_smem
typedef long long tsr_i64;
TSR_FN int tsr_thread() { return (int)threadIdx.x; }
TSR_FN tsr_i64 tsr_block() { return (tsr_i64)blockIdx.x; }
TSR_FN void tsr_sync() { __syncthreads(); }
TSR_FN void tsr_bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory"); }
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

// ---------------------------------------------------------------- Hopper (sm_90, sm_90a)
// A kernel takes a tensor map by value as `TSR_GRID_CONST tsr_tensor_map map`
// (const __grid_constant__: it stays in the parameter space, whose address
// TMA reads) and passes `&map`. The 128 bytes are cuTensorMapEncodeTiled's.
struct __align__(64) tsr_tensor_map {
  unsigned char opaque[128];
};
#define TSR_GRID_CONST const __grid_constant__
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// mbarrier and TMA (sm_90+). An mbarrier is 8 bytes of shared memory, 8-aligned.
TSR_FN void tsr_mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tsr_smem_addr(bar)), "r"(count) : "memory");
}
// The barrier's initialization visible to the async proxy (TMA) and the cluster.
TSR_FN void tsr_fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// Shared memory written by this thread's generic stores made visible to the
// async proxy (wgmma's operands, a TMA store's source).
TSR_FN void tsr_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
TSR_FN void tsr_mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(tsr_smem_addr(bar)) : "memory");
}
// Expects `bytes` more transaction bytes in the current phase, then arrives.
TSR_FN void tsr_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tsr_smem_addr(bar)), "r"(bytes)
               : "memory");
}
// Whether the phase of parity `phase` (0 for the barrier's first phase) has completed.
TSR_FN bool tsr_mbar_try_wait(unsigned long long* bar, unsigned phase) {
  unsigned done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(tsr_smem_addr(bar)), "r"(phase)
      : "memory");
  return done != 0;
}
TSR_FN void tsr_mbar_wait(unsigned long long* bar, unsigned phase) {
  while (!tsr_mbar_try_wait(bar, phase)) {
  }
}
// The box of `map` at element (c0, c1) (c0 along the contiguous dimension)
// into shared memory (128-byte aligned), completing its bytes on `bar`.
TSR_FN void tsr_tma_load_2d(void* smem, const tsr_tensor_map* map, int c0, int c1, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          tsr_smem_addr(smem)),
      "l"(map), "r"(c0), "r"(c1), "r"(tsr_smem_addr(bar))
      : "memory");
}
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma and setmaxnreg: sm_90a only. NVRTC (and nvcc) define
// __CUDA_ARCH_FEAT_SM90_ALL for -arch=sm_90a (compute_90a), not for sm_90,
// so the same header still compiles for sm_80 and sm_90 without them.
//
// wgmma is warpgroup-collective: the 128 threads of 4 consecutive warps
// (the first a multiple of 4) call it at the same point with the same
// descriptors. D (64 x N, f32) = A (64 x 16) B (16 x N) + (scale_d ? D : 0),
// A and B in shared memory, described by tsr_wgmma_desc. Warp w of the
// group holds rows 16w..16w+15; with g = lane / 4, q = lane % 4, d[i] (N / 2
// of them) is D[16w + g + 8 ((i / 2) % 2)][8 (i / 4) + 2q + i % 2].
// TransA = 0: A K-major (row-major 64 x 16), 1: M-major; TransB = 0: B
// K-major (stored N x 16), 1: N-major (stored 16 x N, row-major).
// The results land at tsr_wgmma_wait<N>() for the thread's groups (commit);
// d must not be touched in between. Before the first wgmma and after
// touching d: tsr_wgmma_fence(). After the wait, tsr_wgmma_fence_operand(d)
// keeps the compiler from moving reads of d above it. Make the descriptors
// before the fence and keep fence .. wgmma .. commit straight-line code:
// otherwise ptxas adds a warpgroup.arrive (or wait) before wgmma
// (ptxas info C7519, C7517) and the wgmma no longer overlap.
TSR_FN void tsr_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
TSR_FN void tsr_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
TSR_FN void tsr_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int R>
TSR_FN void tsr_wgmma_fence_operand(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// tsr_wgmma_desc(smem, lbo_bytes, sbo_bytes, swizzle) (defined below, for
// the emulation too): the operand's start, leading and stride byte offsets
// (16-byte multiples, < 256 KiB), swizzle in bytes (0, 32, 64, 128). A
// swizzled tile starts at a multiple of 8 x its swizzle bytes (the base
// offset field is 0); a descriptor may start inside it (K-major k-steps:
// + 32 bytes). The layouts (16-bit elements):
//   K-major, no swizzle: core matrices of 8 rows x 16 bytes (contiguous);
//     LBO: from a core matrix to the next along K, SBO: to the next 8 rows.
//   K-major, swizzled: rows of `swizzle` bytes (K contiguous), 8 rows a
//     group, SBO: from a group of 8 rows to the next; LBO unused.
//   MN-major, no swizzle: core matrices of 8 k x 16 bytes (8 of M or N);
//     SBO: to the next 8 of M/N, LBO: to the next 8 of K.
//   MN-major, swizzled: rows of `swizzle` bytes along M/N, one per k;
//     LBO: to the next `swizzle` bytes of M/N, SBO: to the next 8 of K.
//   Swizzle: the address's 16-byte chunk bits [4, 4 + b) XOR bits [7, 7 + b)
//     (b = 3, 2, 1 for 128, 64, 32 bytes), as TMA writes with the same mode.
// (The emulation checks the arguments here.)
TSR_FN unsigned tsr_wgmma_desc_start(const void* smem, unsigned, unsigned, int) { return tsr_smem_addr(smem); }
// The asm operand lists of wgmma.m64nNk16 with f32 accumulators: N / 2
// registers %0.., then desc_a, desc_b, scale_d, trans_a, trans_b.
#define TSR_D10(p) "%" #p "0,%" #p "1,%" #p "2,%" #p "3,%" #p "4,%" #p "5,%" #p "6,%" #p "7,%" #p "8,%" #p "9"
#define TSR_R8 "%0,%1,%2,%3,%4,%5,%6,%7"
#define TSR_R16 TSR_D10() ",%10,%11,%12,%13,%14,%15"
#define TSR_R32 TSR_D10() "," TSR_D10(1) "," TSR_D10(2) ",%30,%31"
#define TSR_R64 TSR_D10() "," TSR_D10(1) "," TSR_D10(2) "," TSR_D10(3) "," TSR_D10(4) "," TSR_D10(5) ",%60,%61,%62,%63"
#define TSR_R128                                                                                                   \
  TSR_D10() "," TSR_D10(1) "," TSR_D10(2) "," TSR_D10(3) "," TSR_D10(4) "," TSR_D10(5) "," TSR_D10(6) "," TSR_D10(7) \
      "," TSR_D10(8) "," TSR_D10(9) "," TSR_D10(10) "," TSR_D10(11) ",%120,%121,%122,%123,%124,%125,%126,%127"
#define TSR_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define TSR_F8(i) TSR_F4(i), TSR_F4(i + 4)
#define TSR_F16(i) TSR_F8(i), TSR_F8(i + 8)
#define TSR_F32(i) TSR_F16(i), TSR_F16(i + 16)
#define TSR_F64(i) TSR_F32(i), TSR_F32(i + 32)
#define TSR_F128(i) TSR_F64(i), TSR_F64(i + 64)
#define TSR_WGMMA_ASM(N, T, REGS, A, B, S, TA, TB, ...)                                                          \
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %" S ", 0;\n wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T \
               "." T " {" REGS "}, %" A ", %" B ", p, 1, 1, %" TA ", %" TB ";\n}"                                \
               : __VA_ARGS__                                                                                     \
               : "l"(a), "l"(b), "r"(s), "n"(TransA), "n"(TransB)                                                 \
               : "memory")
template <int N>
struct tsr_wgmma_n;  // N = 16, 32, 64, 128, 256
#define TSR_WGMMA_N(N, REGS, A, B, S, TA, TB, ...)                                                     \
  template <>                                                                                          \
  struct tsr_wgmma_n<N> {                                                                              \
    template <int TransA, int TransB>                                                                  \
    static TSR_FN void f16(float* d, unsigned long long a, unsigned long long b, int s) {              \
      TSR_WGMMA_ASM(N, "f16", REGS, A, B, S, TA, TB, __VA_ARGS__);                                            \
    }                                                                                                  \
    template <int TransA, int TransB>                                                                  \
    static TSR_FN void bf16(float* d, unsigned long long a, unsigned long long b, int s) {             \
      TSR_WGMMA_ASM(N, "bf16", REGS, A, B, S, TA, TB, __VA_ARGS__);                                           \
    }                                                                                                  \
  };
TSR_WGMMA_N(16, TSR_R8, "8", "9", "10", "11", "12", TSR_F8(0))
TSR_WGMMA_N(32, TSR_R16, "16", "17", "18", "19", "20", TSR_F16(0))
TSR_WGMMA_N(64, TSR_R32, "32", "33", "34", "35", "36", TSR_F32(0))
TSR_WGMMA_N(128, TSR_R64, "64", "65", "66", "67", "68", TSR_F64(0))
TSR_WGMMA_N(256, TSR_R128, "128", "129", "130", "131", "132", TSR_F128(0))
template <int N, int TransA, int TransB>
TSR_FN void tsr_wgmma_f16(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  tsr_wgmma_n<N>::template f16<TransA, TransB>(d, desc_a, desc_b, scale_d);
}
template <int N, int TransA, int TransB>
TSR_FN void tsr_wgmma_bf16(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  tsr_wgmma_n<N>::template bf16<TransA, TransB>(d, desc_a, desc_b, scale_d);
}
// Warp specialization: the warpgroup's register budget raised or lowered
// to R per thread (a multiple of 8 in 24..256), by every thread of it.
template <int R>
TSR_FN void tsr_setmaxnreg_inc() {
  static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}
template <int R>
TSR_FN void tsr_setmaxnreg_dec() {
  static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}
#endif
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
template <int N, int TransA, int TransB>
TSR_FN void tsr_wgmma_f16(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  tsr_emu::wgmma<N, TransA != 0, TransB != 0>(d, desc_a, desc_b, scale_d, tsr_f16_to_f32);
}
template <int N, int TransA, int TransB>
TSR_FN void tsr_wgmma_bf16(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  tsr_emu::wgmma<N, TransA != 0, TransB != 0>(d, desc_a, desc_b, scale_d, tsr_bf16_to_f32);
}
#endif
#if defined(TSR_HOST_EMULATION) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma's shared-memory matrix descriptor (the layouts: the sm_90a section
// above): the start address, LBO and SBO >> 4 in 14 bits each at bits 0,
// 16, 32; base offset 0 (bits 49-51); the swizzle mode at bits 62-63.
TSR_FN unsigned long long tsr_wgmma_desc(const void* smem, unsigned lbo_bytes, unsigned sbo_bytes, int swizzle) {
  const unsigned long long mode = swizzle == 128 ? 1ull : swizzle == 64 ? 2ull : swizzle == 32 ? 3ull : 0ull;
  return (unsigned long long)((tsr_wgmma_desc_start(smem, lbo_bytes, sbo_bytes, swizzle) & 0x3ffffu) >> 4) |
         (unsigned long long)((lbo_bytes & 0x3ffffu) >> 4) << 16 |
         (unsigned long long)((sbo_bytes & 0x3ffffu) >> 4) << 32 | mode << 62;
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
