// The tensor-core wrappers of tessera_cuda.h (tsr_mma_f16/bf16,
// tsr_ldmatrix_*, tsr_cp_async16 with commit and wait) in hand-written
// kernels, written as generated kernels are (TSR_KERNEL, TSR_SMEM,
// tsr_thread(), tsr_sync()): run under the host emulation
// (tessera_cuda_host.h) against references computed here, and compiled by
// NVRTC for sm_80, sm_90 and sm_90a without spills (skipped where NVRTC is missing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/cuda_kernel_compiler.h"
#include "tests/codegen/kernel/cuda_host_library.h"
#include "tests/codegen/kernel/half_test_data.h"
#include "vm/tensor/dtype.h"

namespace tessera::kir {
namespace {

using testing::half_value;
using testing::HostEntry;
using testing::random_halves;

// Compiled by both the host (emulation) and NVRTC.
const char* const kKernels = R"(#include "tessera_cuda.h"

template <bool kBf16>
TSR_FN void mma16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
  if constexpr (kBf16) tsr_mma_bf16(d, a, b, c);
  else tsr_mma_f16(d, a, b, c);
}

// One warp, one m16n8k16 per layout of B: A 16x16 row-major; B 16x8 as
// [K][N] (fragment by ldmatrix.trans) and as [N][K] (by ldmatrix); C 16x8.
// D[0] = A B + C through the first, D[1] through the second.
template <bool kBf16>
TSR_FN void one_warp(const unsigned short* A, const unsigned short* B, const unsigned short* Bt, const float* C,
                     float* D) {
  unsigned short* sA = (unsigned short*)TSR_SMEM;  // 512 bytes
  unsigned short* sB = sA + 256;                   // 256 bytes
  unsigned short* sBt = sB + 128;
  const int l = tsr_thread();
  for (int i = l; i < 256; i += 32) sA[i] = A[i];
  for (int i = l; i < 128; i += 32) sB[i] = B[i], sBt[i] = Bt[i];
  tsr_sync();
  unsigned a[4], b[2], bt[2];
  // Matrices of A: rows 0-7 and 8-15 of columns 0-7, then of columns 8-15.
  tsr_ldmatrix_x4(a, sA + (l % 16) * 16 + (l / 16) * 8);
  tsr_ldmatrix_x2_trans(b, sB + (l % 16) * 8);                // k 0-7, then 8-15
  tsr_ldmatrix_x2(bt, sBt + (l % 8) * 16 + (l / 8 % 2) * 8);  // likewise, along Bt's rows
  const int g = l / 4, q = l % 4;
  const float c[4] = {C[g * 8 + 2 * q], C[g * 8 + 2 * q + 1], C[(g + 8) * 8 + 2 * q], C[(g + 8) * 8 + 2 * q + 1]};
  float d[2][4];
  mma16<kBf16>(d[0], a, b, c);
  mma16<kBf16>(d[1], a, bt, c);
  for (int j = 0; j < 2; ++j)
    for (int e = 0; e < 4; ++e) D[j * 128 + (g + 8 * (e / 2)) * 8 + 2 * q + e % 2] = d[j][e];
}
TSR_KERNEL TSR_BOUNDS(32) void tc_one_warp_f16(const unsigned short* A, const unsigned short* B,
                                               const unsigned short* Bt, const float* C, float* D) {
  one_warp<false>(A, B, Bt, C, D);
}
TSR_KERNEL TSR_BOUNDS(32) void tc_one_warp_bf16(const unsigned short* A, const unsigned short* B,
                                                const unsigned short* Bt, const float* C, float* D) {
  one_warp<true>(A, B, Bt, C, D);
}

// Every ldmatrix form over four 8x8 matrices, row r of matrix i at halves
// (4 r + i) * 8 (interleaved, so that each lane's own address matters).
// out[lane * 14 + j]: the registers of x1, x2, x4, x1.trans, x2.trans, x4.trans.
TSR_KERNEL TSR_BOUNDS(32) void tc_ldmatrix(const unsigned short* M, unsigned* out) {
  unsigned short* s = (unsigned short*)TSR_SMEM;
  const int l = tsr_thread();
  for (int i = l; i < 256; i += 32) s[i] = M[i];
  tsr_sync();
  const unsigned short* row = s + (4 * (l % 8) + l / 8) * 8;
  unsigned r[14];
  tsr_ldmatrix_x1(r, row);
  tsr_ldmatrix_x2(r + 1, row);
  tsr_ldmatrix_x4(r + 3, row);
  tsr_ldmatrix_x1_trans(r + 7, row);
  tsr_ldmatrix_x2_trans(r + 8, row);
  tsr_ldmatrix_x4_trans(r + 10, row);
  for (int j = 0; j < 14; ++j) out[l * 14 + j] = r[j];
}

// C [M][N] = A [M][K] B [K][N], a 64x64 tile per block, 4 warps of 32x32.
// A's and B's rows are lda and ldb halves apart, multiples of 8 (cp.async
// moves 16 aligned bytes). K goes in stages of 16 through shared memory,
// two stages in flight; the stages' rows are padded (48 and 144 bytes:
// still 16-byte multiples, as ldmatrix wants, with fewer bank conflicts).
enum { kBM = 64, kBN = 64, kBK = 16, kLdsA = kBK + 8, kLdsB = kBN + 8 };

// One stage by cp.async, a 16-byte chunk of A and one of B per thread
// (128 threads); a chunk past M, N or K is zero-filled, its source clamped
// to the matrix's start (src_bytes 0 reads nothing).
TSR_FN void gemm_stage(unsigned short* sA, unsigned short* sB, const unsigned short* A, const unsigned short* B, int M,
                       int N, int K, int lda, int ldb, int m0, int n0, int k0) {
  const int t = tsr_thread();
  const int ar = t / 2, ac = (t % 2) * 8;  // A: 64 rows of 2 chunks
  const int an = m0 + ar < M ? tsr_imax(0, tsr_imin(8, K - (k0 + ac))) : 0;
  tsr_cp_async16(sA + ar * kLdsA + ac, an > 0 ? A + (tsr_i64)(m0 + ar) * lda + k0 + ac : A, 2 * an);
  const int br = t / 8, bc = (t % 8) * 8;  // B: 16 rows of 8 chunks
  const int bn = k0 + br < K ? tsr_imax(0, tsr_imin(8, N - (n0 + bc))) : 0;
  tsr_cp_async16(sB + br * kLdsB + bc, bn > 0 ? B + (tsr_i64)(k0 + br) * ldb + n0 + bc : B, 2 * bn);
}

template <bool kBf16>
TSR_FN void gemm(const unsigned short* A, const unsigned short* B, float* C, int M, int N, int K, int lda, int ldb) {
  unsigned short* smem = (unsigned short*)TSR_SMEM;
  unsigned short* sA[2] = {smem, smem + kBM * kLdsA};
  unsigned short* sB[2] = {smem + 2 * kBM * kLdsA, smem + 2 * kBM * kLdsA + kBK * kLdsB};
  const int tiles_n = (N + kBN - 1) / kBN;
  const int m0 = (int)(tsr_block() / tiles_n) * kBM, n0 = (int)(tsr_block() % tiles_n) * kBN;
  const int t = tsr_thread(), l = t % 32, wm = t / 64 * 32, wn = t / 32 % 2 * 32;
  float acc[2][4][4] = {};  // [16 rows][8 columns][fragment]
  const int ktiles = (K + kBK - 1) / kBK;
  gemm_stage(sA[0], sB[0], A, B, M, N, K, lda, ldb, m0, n0, 0);
  tsr_cp_async_commit();
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % 2;
    if (kt + 1 < ktiles) {  // the next stage's copies fly while this one is used
      gemm_stage(sA[1 - s], sB[1 - s], A, B, M, N, K, lda, ldb, m0, n0, (kt + 1) * kBK);
      tsr_cp_async_commit();
      tsr_cp_async_wait<1>();
    } else {
      tsr_cp_async_wait<0>();
    }
    tsr_sync();  // every thread's copies of stage s have landed
    unsigned a[2][4], b[4][2];
    for (int i = 0; i < 2; ++i) tsr_ldmatrix_x4(a[i], sA[s] + (wm + i * 16 + l % 16) * kLdsA + l / 16 * 8);
    for (int j = 0; j < 2; ++j) {  // two 8-column fragments of B a load: k 0-7, 8-15 of n, then of n + 8
      unsigned r[4];
      tsr_ldmatrix_x4_trans(r, sB[s] + (l % 16) * kLdsB + wn + j * 16 + l / 16 * 8);
      b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) mma16<kBf16>(acc[i][j], a[i], b[j], acc[i][j]);
    tsr_sync();  // stage s is refilled in the next iteration
  }
  const int g = l / 4, q = l % 4;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 4; ++e) {
        const int row = m0 + wm + i * 16 + g + 8 * (e / 2), col = n0 + wn + j * 8 + 2 * q + e % 2;
        if (row < M && col < N) C[(tsr_i64)row * N + col] = acc[i][j][e];
      }
}
TSR_KERNEL TSR_BOUNDS(128) void tc_gemm_f16(const unsigned short* A, const unsigned short* B, float* C, int M, int N,
                                            int K, int lda, int ldb) {
  gemm<false>(A, B, C, M, N, K, lda, ldb);
}
TSR_KERNEL TSR_BOUNDS(128) void tc_gemm_bf16(const unsigned short* A, const unsigned short* B, float* C, int M, int N,
                                             int K, int lda, int ldb) {
  gemm<true>(A, B, C, M, N, K, lda, ldb);
}

// What each thread reads of its shared memory around cp.async: two groups
// (16 bytes, then 6 bytes zero-filled to 16) over a stale pattern; its two
// chunks (8 words) before any wait, after wait<1>, after wait<0>. Before
// the right wait a GPU may show either; the emulation shows the old words.
TSR_KERNEL TSR_BOUNDS(64) void tc_cp_async_order(const unsigned* src, unsigned* out) {
  unsigned* s = (unsigned*)TSR_SMEM + tsr_thread() * 8;
  const unsigned* g = src + tsr_thread() * 8;
  unsigned* o = out + tsr_thread() * 24;
  for (int i = 0; i < 8; ++i) s[i] = 0xdeadbeefu;
  tsr_cp_async16(s, g, 16);
  tsr_cp_async_commit();
  tsr_cp_async16(s + 4, g + 4, 6);
  tsr_cp_async_commit();
  for (int i = 0; i < 8; ++i) o[i] = s[i];
  tsr_cp_async_wait<1>();
  for (int i = 0; i < 8; ++i) o[8 + i] = s[i];
  tsr_cp_async_wait<0>();
  for (int i = 0; i < 8; ++i) o[16 + i] = s[i];
}

#ifdef TSR_HOST_EMULATION
#define TC_ARG(i, T) (*(T*)a[i])
extern "C" void tc_one_warp_f16_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    tc_one_warp_f16(TC_ARG(0, const unsigned short*), TC_ARG(1, const unsigned short*),
                    TC_ARG(2, const unsigned short*), TC_ARG(3, const float*), TC_ARG(4, float*));
  });
}
extern "C" void tc_one_warp_bf16_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    tc_one_warp_bf16(TC_ARG(0, const unsigned short*), TC_ARG(1, const unsigned short*),
                     TC_ARG(2, const unsigned short*), TC_ARG(3, const float*), TC_ARG(4, float*));
  });
}
extern "C" void tc_ldmatrix_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared,
                  [&] { tc_ldmatrix(TC_ARG(0, const unsigned short*), TC_ARG(1, unsigned*)); });
}
extern "C" void tc_gemm_f16_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    tc_gemm_f16(TC_ARG(0, const unsigned short*), TC_ARG(1, const unsigned short*), TC_ARG(2, float*),
                TC_ARG(3, int), TC_ARG(4, int), TC_ARG(5, int), TC_ARG(6, int), TC_ARG(7, int));
  });
}
extern "C" void tc_gemm_bf16_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    tc_gemm_bf16(TC_ARG(0, const unsigned short*), TC_ARG(1, const unsigned short*), TC_ARG(2, float*),
                 TC_ARG(3, int), TC_ARG(4, int), TC_ARG(5, int), TC_ARG(6, int), TC_ARG(7, int));
  });
}
extern "C" void tc_cp_async_order_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared,
                  [&] { tc_cp_async_order(TC_ARG(0, const unsigned*), TC_ARG(1, unsigned*)); });
}

// Misuses the emulation reports (launch throws): a cp.async whose
// destination is not shared memory; an ldmatrix in a warp of fewer than 32 threads.
TSR_KERNEL void tc_bad_cp_async(const unsigned* src, unsigned* out) {
  tsr_cp_async16(out, src, 16);
  tsr_cp_async_commit();
  tsr_cp_async_wait<0>();
}
TSR_KERNEL void tc_partial_warp(unsigned* out) {
  unsigned r[1];
  tsr_ldmatrix_x1(r, TSR_SMEM);
  out[tsr_thread()] = r[0];
}
extern "C" void tc_bad_cp_async_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { tc_bad_cp_async(TC_ARG(0, const unsigned*), TC_ARG(1, unsigned*)); });
}
extern "C" void tc_partial_warp_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { tc_partial_warp(TC_ARG(0, unsigned*)); });
}
#endif
)";

// The emulation's library, built once for every test here, warning-clean.
const testing::HostLibrary& host_library() {
  static const auto lib = testing::build_host_library({kKernels}, "-Wall -Wextra -Werror");
  return *lib;
}

HostEntry host_entry(const char* kernel) { return testing::host_entry(host_library(), kernel); }

// |got - want| within 1e-5 of the magnitude the sum went through (the
// emulation's f32 order of summation against this double one).
void expect_near_rel(float got, double want, double scale, const std::string& what) {
  EXPECT_LE(std::fabs(static_cast<double>(got) - want), 1e-5 * scale) << what << ": got " << got << ", want " << want;
}

class TensorCoreEmulation : public ::testing::TestWithParam<bool> {};  // bf16?

TEST_P(TensorCoreEmulation, OneWarpMmaWithEachLayoutOfB) {
  const bool bf16 = GetParam();
  std::mt19937 rng(bf16 ? 7 : 3);
  const std::vector<uint16_t> A = random_halves(16 * 16, bf16, rng), B = random_halves(16 * 8, bf16, rng);
  std::vector<uint16_t> Bt(8 * 16);  // B as [N][K]
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) Bt[n * 16 + k] = B[k * 8 + n];
  std::vector<float> C(16 * 8), D(2 * 16 * 8, NAN);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (float& c : C) c = u(rng);
  const uint16_t *pa = A.data(), *pb = B.data(), *pbt = Bt.data();
  const float* pc = C.data();
  float* pd = D.data();
  void* args[] = {&pa, &pb, &pbt, &pc, &pd};
  host_entry(bf16 ? "tc_one_warp_bf16" : "tc_one_warp_f16")(args, 1, 32, 1024);
  for (int j = 0; j < 2; ++j)
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double want = C[m * 8 + n], scale = std::fabs(want);
        for (int k = 0; k < 16; ++k) {
          const double p = static_cast<double>(half_value(A[m * 16 + k], bf16)) * half_value(B[k * 8 + n], bf16);
          want += p, scale += std::fabs(p);
        }
        expect_near_rel(D[j * 128 + m * 8 + n], want, scale,
                        std::string(j ? "B as [N][K]" : "B as [K][N]") + " D[" + std::to_string(m) + "][" +
                            std::to_string(n) + "]");
      }
}

// 50x70x40-like shapes that are no multiples of 16: the second block has a
// partial N tile, K's last stage is part zeros (K = 36 with rows of 40), and
// the rows' padding holds NaN, which a read past K or N would spread.
TEST_P(TensorCoreEmulation, PipelinedGemmOfATileWithEdges) {
  const bool bf16 = GetParam();
  const int M = 50, N = 70, K = 36, lda = 40, ldb = 72;
  std::mt19937 rng(bf16 ? 11 : 5);
  std::vector<uint16_t> A = random_halves(static_cast<size_t>(M) * lda, bf16, rng),
                        B = random_halves(static_cast<size_t>(K) * ldb, bf16, rng);
  const uint16_t nan = bf16 ? f32_to_bf16(NAN) : f32_to_f16(NAN);
  for (int m = 0; m < M; ++m)
    for (int k = K; k < lda; ++k) A[m * lda + k] = nan;
  for (int k = 0; k < K; ++k)
    for (int n = N; n < ldb; ++n) B[k * ldb + n] = nan;
  std::vector<float> C(static_cast<size_t>(M) * N, NAN);
  const uint16_t *pa = A.data(), *pb = B.data();
  float* pc = C.data();
  int m = M, n = N, k = K, la = lda, lb = ldb;
  void* args[] = {&pa, &pb, &pc, &m, &n, &k, &la, &lb};
  const long long blocks = ((M + 63) / 64) * ((N + 63) / 64), smem = 2 * (64 * 24 + 16 * 72) * 2;
  host_entry(bf16 ? "tc_gemm_bf16" : "tc_gemm_f16")(args, blocks, 128, smem);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0, scale = 0;
      for (int kk = 0; kk < K; ++kk) {
        const double p = static_cast<double>(half_value(A[i * lda + kk], bf16)) * half_value(B[kk * ldb + j], bf16);
        want += p, scale += std::fabs(p);
      }
      expect_near_rel(C[i * N + j], want, scale, "C[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    }
}

INSTANTIATE_TEST_SUITE_P(F16AndBf16, TensorCoreEmulation, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "bf16" : "f16"; });

// Each ldmatrix form hands each lane the elements the PTX ISA says.
TEST(TensorCoreEmulationLdmatrix, EveryFormMatchesTheFragmentLayout) {
  std::vector<uint16_t> M(256);  // matrix i, row r, column c: 100 i + 10 r + c, at (4 r + i) * 8 + c
  for (int i = 0; i < 4; ++i)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) M[(4 * r + i) * 8 + c] = static_cast<uint16_t>(100 * i + 10 * r + c);
  const auto elem = [&](int i, int r, int c) { return static_cast<uint32_t>(M[(4 * r + i) * 8 + c]); };
  std::vector<uint32_t> out(32 * 14, 0xffffffffu);
  const uint16_t* pm = M.data();
  uint32_t* po = out.data();
  void* args[] = {&pm, &po};
  host_entry("tc_ldmatrix")(args, 1, 32, 512);
  for (int l = 0; l < 32; ++l) {
    int j = 0;
    for (bool trans : {false, true})
      for (int count : {1, 2, 4})
        for (int i = 0; i < count; ++i, ++j) {
          const int r = l / 4, c = 2 * (l % 4);
          const uint32_t want = trans ? elem(i, c, r) | elem(i, c + 1, r) << 16 : elem(i, r, c) | elem(i, r, c + 1) << 16;
          EXPECT_EQ(out[l * 14 + j], want) << "lane " << l << " x" << count << (trans ? ".trans" : "") << " r[" << i << "]";
        }
  }
}

// cp.async is deferred until the wait: a read before it sees the old bytes.
TEST(TensorCoreEmulationCpAsync, ReadsBeforeTheWaitSeeTheOldBytes) {
  std::vector<uint32_t> src(64 * 8), out(64 * 24, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = 0x01000000u + static_cast<uint32_t>(i) * 0x00010203u;
  const uint32_t* ps = src.data();
  uint32_t* po = out.data();
  void* args[] = {&ps, &po};
  host_entry("tc_cp_async_order")(args, 1, 64, 64 * 32);
  const uint32_t stale = 0xdeadbeefu;
  for (int t = 0; t < 64; ++t) {
    const uint32_t* s = &src[t * 8];
    const uint32_t* o = &out[t * 24];
    for (int i = 0; i < 8; ++i) EXPECT_EQ(o[i], stale) << "thread " << t << " before any wait, word " << i;
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(o[8 + i], i < 4 ? s[i] : stale) << "thread " << t << " after wait<1>, word " << i;
    // The second copy: 6 bytes (word 4, the low half of word 5), then zeros.
    const uint32_t second[4] = {s[4], s[5] & 0xffffu, 0, 0};
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(o[16 + i], i < 4 ? s[i] : second[i - 4]) << "thread " << t << " after wait<0>, word " << i;
  }
}

TEST(TensorCoreEmulationMisuse, LaunchThrows) {
  std::vector<uint32_t> src(4, 1), out(64, 0);
  const uint32_t* ps = src.data();
  uint32_t* po = out.data();
  void* copy_args[] = {&ps, &po};
  EXPECT_THROW(host_entry("tc_bad_cp_async")(copy_args, 1, 32, 64), std::logic_error);
  void* warp_args[] = {&po};
  EXPECT_THROW(host_entry("tc_partial_warp")(warp_args, 1, 48, 64), std::logic_error);
  EXPECT_NO_THROW(host_entry("tc_partial_warp")(warp_args, 1, 64, 64));
}

// The same kernels for the GPU: NVRTC compiles them, ptxas reports no spills.
TEST(TensorCoreNvrtc, KernelsCompileForSm80Sm90AndSm90aWithoutSpills) {
  const device::NvrtcLibrary& nvrtc = device::NvrtcLibrary::get();
  if (!nvrtc.available()) GTEST_SKIP() << "NVRTC is not available: " << nvrtc.why_unavailable();
  const device::CudaKernelCompiler compiler(nvrtc);
  CudaKernelSource src;
  src.entry = "tc_gemm_f16";
  src.source = kKernels;
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    const device::CudaCompiled out = compiler.compile(src, arch);
    ASSERT_TRUE(out.ok) << arch << "\n" << out.log;
    EXPECT_FALSE(out.cubin.empty()) << arch;
    for (const char* kernel : {"tc_one_warp_f16", "tc_one_warp_bf16", "tc_ldmatrix", "tc_gemm_f16", "tc_gemm_bf16",
                               "tc_cp_async_order"}) {
      const auto report = device::parse_ptxas_report(out.log, kernel);
      ASSERT_TRUE(report.has_value()) << kernel << " " << arch << ": no ptxas report in\n" << out.log;
      EXPECT_GT(report->registers, 0) << kernel << " " << arch;
      EXPECT_LE(report->registers, 255) << kernel << " " << arch;
      EXPECT_EQ(report->spill_stores, 0) << kernel << " " << arch << "\n" << out.log;
      EXPECT_EQ(report->spill_loads, 0) << kernel << " " << arch;
      RecordProperty(std::string(kernel) + "_" + arch + "_registers", report->registers);
    }
  }
}

// The wrappers are the PTX instructions they name (the PTX for compute_80).
TEST(TensorCoreNvrtc, WrappersEmitTheirPtxInstructions) {
  const device::NvrtcLibrary& nvrtc = device::NvrtcLibrary::get();
  if (!nvrtc.available()) GTEST_SKIP() << "NVRTC is not available: " << nvrtc.why_unavailable();
  CudaKernelSource src;
  src.entry = "tc_gemm_f16";
  src.source = kKernels;
  const device::CudaCompiled out = device::CudaKernelCompiler(nvrtc).compile(src, "compute_80");
  ASSERT_TRUE(out.ok) << out.log;
  for (const char* insn :
       {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group 1", "cp.async.wait_group 0"})
    EXPECT_NE(out.ptx.find(insn), std::string::npos) << insn;
}

}  // namespace
}  // namespace tessera::kir
