// The Hopper wrappers of tessera_cuda.h (wgmma with shared-memory matrix
// descriptors, mbarrier, TMA 2-D loads, setmaxnreg) in hand-written kernels,
// written as generated kernels are: run under the host emulation
// (tessera_cuda_host.h) against references computed here, and compiled by
// NVRTC for sm_90a without spills (skipped where NVRTC is missing), the
// header still compiling for sm_80 and sm_90 without the sm_90a wrappers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/cuda_kernel_compiler.h"
#include "tests/codegen/kernel/cuda_host_library.h"
#include "tests/codegen/kernel/half_test_data.h"

namespace tessera::kir {
namespace {

using testing::half_value;
using testing::HostEntry;
using testing::random_halves;

// Compiled by both the host (emulation) and NVRTC (for sm_90a; for other
// targets the Hopper kernels drop out).
const char* const kKernels = R"(#include "tessera_cuda.h"
#if defined(TSR_HOST_EMULATION) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

// An operand of wgmma, MN (64 or N) x K (64) halves, in one of six
// layouts: 0 K-major no swizzle, 1 K-major 128B swizzle, 2 MN-major no
// swizzle, 3 MN-major 128B swizzle, 4 K-major 64B swizzle (K in two blocks
// of 32), 5 MN-major 32B swizzle (MN in blocks of 16). The operand starts
// 1024-aligned, so the swizzle of an offset is that of its address.
TSR_FN int hp_swizzle(int x, int bytes) { return x ^ (((x >> 7) & (bytes / 16 - 1)) << 4); }
TSR_FN bool hp_mn_major(int layout) { return layout == 2 || layout == 3 || layout == 5; }
TSR_FN int hp_offset(int layout, int mn_size, int mn, int k) {
  switch (layout) {
    case 0: return (k / 8) * (mn_size / 8) * 128 + (mn / 8) * 128 + (mn % 8) * 16 + (k % 8) * 2;
    case 1: return hp_swizzle(mn * 128 + k * 2, 128);
    case 2: return (k / 8) * (mn_size / 8) * 128 + (mn / 8) * 128 + (k % 8) * 16 + (mn % 8) * 2;
    case 3: return hp_swizzle((mn / 64) * 8192 + k * 128 + (mn % 64) * 2, 128);
    case 4: return hp_swizzle((k / 32) * mn_size * 64 + mn * 64 + (k % 32) * 2, 64);
    default: return hp_swizzle((mn / 16) * 2048 + k * 32 + (mn % 16) * 2, 32);
  }
}
// The descriptor of k-step s (k 16s..16s+15) of such an operand.
TSR_FN unsigned long long hp_desc(unsigned char* base, int layout, int mn_size, int s) {
  switch (layout) {
    case 0:
    case 2: return tsr_wgmma_desc(base + s * 2 * (mn_size / 8) * 128, (mn_size / 8) * 128, 128, 0);
    case 1: return tsr_wgmma_desc(base + 32 * s, 16, 1024, 128);
    case 3: return tsr_wgmma_desc(base + s * 2048, 8192, 1024, 128);
    case 4: return tsr_wgmma_desc(base + (s / 2) * mn_size * 64 + (s % 2) * 32, 16, 512, 64);
    default: return tsr_wgmma_desc(base + s * 512, 2048, 256, 32);
  }
}

template <int N, bool kBf16, int kTA, int kTB>
TSR_FN void hp_steps(float* acc, const unsigned long long* da, const unsigned long long* db, int scale_first) {
  tsr_wgmma_fence();
  for (int s = 0; s < 4; ++s) {
    if (kBf16) tsr_wgmma_bf16<N, kTA, kTB>(acc, da[s], db[s], s > 0 || scale_first);
    else tsr_wgmma_f16<N, kTA, kTB>(acc, da[s], db[s], s > 0 || scale_first);
  }
  tsr_wgmma_commit();
}

// One warpgroup: D [64][N] = (scale_first ? C : 0) + A [64][64] B [64][N]
// (row-major halves), A and B laid out in shared memory by la and lb, four
// wgmma of k16 in one group. stale[t]: the thread's d[0] read before the wait
// (the emulation's stale value). The descriptors are made before the fence,
// and fence to commit is straight-line code, so ptxas adds no fences.
template <int N, bool kBf16>
TSR_FN void hp_wgmma(const unsigned short* A, const unsigned short* B, const float* C, float* D, float* stale, int la,
                     int lb, int scale_first) {
  unsigned char* sA = TSR_SMEM;
  unsigned char* sB = TSR_SMEM + 8192;
  const int t = tsr_thread();
  for (int i = t; i < 64 * 64; i += 128) *(unsigned short*)(sA + hp_offset(la, 64, i / 64, i % 64)) = A[i];
  for (int i = t; i < 64 * N; i += 128) *(unsigned short*)(sB + hp_offset(lb, N, i % N, i / N)) = B[i];
  tsr_fence_proxy_async();
  tsr_sync();
  const int w = t / 32, g = t % 32 / 4, q = t % 4;
  float acc[N / 2];
  for (int i = 0; i < N / 2; ++i) acc[i] = C[(16 * w + g + 8 * (i / 2 % 2)) * N + 8 * (i / 4) + 2 * q + i % 2];
  unsigned long long da[4], db[4];
  for (int s = 0; s < 4; ++s) da[s] = hp_desc(sA, la, 64, s), db[s] = hp_desc(sB, lb, N, s);
  if (!hp_mn_major(la) && !hp_mn_major(lb)) hp_steps<N, kBf16, 0, 0>(acc, da, db, scale_first);
  else if (!hp_mn_major(la)) hp_steps<N, kBf16, 0, 1>(acc, da, db, scale_first);
  else if (!hp_mn_major(lb)) hp_steps<N, kBf16, 1, 0>(acc, da, db, scale_first);
  else hp_steps<N, kBf16, 1, 1>(acc, da, db, scale_first);
#ifdef TSR_HOST_EMULATION
  stale[t] = acc[0];  // undefined on a GPU (ptxas would add a wait before it)
#endif
  tsr_wgmma_wait<0>();
  tsr_wgmma_fence_operand(acc);
  for (int i = 0; i < N / 2; ++i) D[(16 * w + g + 8 * (i / 2 % 2)) * N + 8 * (i / 4) + 2 * q + i % 2] = acc[i];
}
#define HP_WGMMA(name, N, BF16)                                                                                    \
  TSR_KERNEL TSR_BOUNDS(128) void name(const unsigned short* A, const unsigned short* B, const float* C, float* D, \
                                       float* stale, int la, int lb, int scale_first) {                           \
    hp_wgmma<N, BF16>(A, B, C, D, stale, la, lb, scale_first);                                                    \
  }
HP_WGMMA(hp_wgmma_f16_n16, 16, false)
HP_WGMMA(hp_wgmma_bf16_n32, 32, true)
HP_WGMMA(hp_wgmma_f16_n64, 64, false)
HP_WGMMA(hp_wgmma_bf16_n64, 64, true)
HP_WGMMA(hp_wgmma_f16_n128, 128, false)
HP_WGMMA(hp_wgmma_bf16_n128, 128, true)
HP_WGMMA(hp_wgmma_f16_n256, 256, false)

// Two commit groups on two accumulators, as a pipeline issues them (N 64,
// A and B K-major): k 0..31 into acc0, k 32..63 into acc1. After wait<1>
// acc0 is done (D0); early[t]: acc1's d[0] then, still its old -1 (read
// only under the emulation); after wait<0>, D1.
TSR_KERNEL TSR_BOUNDS(128) void hp_wgmma_groups(const unsigned short* A, const unsigned short* B, float* D0, float* D1,
                                                float* early) {
  unsigned char* sA = TSR_SMEM;
  unsigned char* sB = TSR_SMEM + 8192;
  const int t = tsr_thread();
  for (int i = t; i < 64 * 64; i += 128) {
    *(unsigned short*)(sA + hp_offset(0, 64, i / 64, i % 64)) = A[i];
    *(unsigned short*)(sB + hp_offset(0, 64, i % 64, i / 64)) = B[i];
  }
  tsr_fence_proxy_async();
  tsr_sync();
  float acc0[32], acc1[32];
  for (int i = 0; i < 32; ++i) acc0[i] = acc1[i] = -1.0f;
  unsigned long long da[4], db[4];
  for (int s = 0; s < 4; ++s) da[s] = hp_desc(sA, 0, 64, s), db[s] = hp_desc(sB, 0, 64, s);
  tsr_wgmma_fence();
  tsr_wgmma_f16<64, 0, 0>(acc0, da[0], db[0], 0);
  tsr_wgmma_f16<64, 0, 0>(acc0, da[1], db[1], 1);
  tsr_wgmma_commit();
  tsr_wgmma_f16<64, 0, 0>(acc1, da[2], db[2], 0);
  tsr_wgmma_f16<64, 0, 0>(acc1, da[3], db[3], 1);
  tsr_wgmma_commit();
  tsr_wgmma_wait<1>();
  tsr_wgmma_fence_operand(acc0);
  const int w = t / 32, g = t % 32 / 4, q = t % 4;
  for (int i = 0; i < 32; ++i) D0[(16 * w + g + 8 * (i / 2 % 2)) * 64 + 8 * (i / 4) + 2 * q + i % 2] = acc0[i];
#ifdef TSR_HOST_EMULATION
  early[t] = acc1[0];
#endif
  tsr_wgmma_wait<0>();
  tsr_wgmma_fence_operand(acc1);
  for (int i = 0; i < 32; ++i) D1[(16 * w + g + 8 * (i / 2 % 2)) * 64 + 8 * (i / 4) + 2 * q + i % 2] = acc1[i];
}

// Two TMA loads through one mbarrier (phase 0, then phase 1) into one
// 1024-aligned tile; out0/out1 get the tile's bytes after each, first the
// tile as thread 0 reads it between its load and its wait; flags: whether
// the parities 1 and 0 are over after the second phase.
TSR_KERNEL TSR_BOUNDS(128) void hp_tma(TSR_GRID_CONST tsr_tensor_map map, unsigned char* out0, unsigned char* out1,
                                       unsigned char* first, int* flags, int c0a, int c1a, int c0b, int c1b,
                                       int bytes) {
  unsigned long long* bar = (unsigned long long*)TSR_SMEM;
  unsigned char* tile = TSR_SMEM + 1024;
  const int t = tsr_thread();
  if (t == 0) {
    tsr_mbar_init(bar, 1);
    tsr_fence_mbar_init();
  }
  tsr_sync();
  if (t == 0) {
    tsr_mbar_arrive_expect_tx(bar, bytes);
    tsr_tma_load_2d(tile, &map, c0a, c1a, bar);
    for (int i = 0; i < bytes; ++i) first[i] = tile[i];
  }
  tsr_mbar_wait(bar, 0);
  for (int i = t; i < bytes; i += 128) out0[i] = tile[i];
  tsr_sync();
  if (t == 0) {
    tsr_mbar_arrive_expect_tx(bar, bytes);
    tsr_tma_load_2d(tile, &map, c0b, c1b, bar);
  }
  tsr_mbar_wait(bar, 1);
  for (int i = t; i < bytes; i += 128) out1[i] = tile[i];
  if (t == 0) flags[0] = tsr_mbar_try_wait(bar, 1), flags[1] = tsr_mbar_try_wait(bar, 0);
}

// Warp specialization's register hand-off compiles (a no-op under the emulation).
TSR_KERNEL TSR_BOUNDS(256) void hp_setmaxnreg(int* out) {
  if (tsr_thread() < 128) tsr_setmaxnreg_dec<40>();
  else tsr_setmaxnreg_inc<232>();
  out[tsr_thread()] = tsr_thread();
}
#endif

#ifdef TSR_HOST_EMULATION
#define HP_ARG(i, T) (*(T*)a[i])
#define HP_WGMMA_HOST(name)                                                                                         \
  extern "C" void name##_host(void* const* a, long long programs, int threads, long long shared) {                 \
    tsr_emu::launch(programs, threads, shared, [&] {                                                                \
      name(HP_ARG(0, const unsigned short*), HP_ARG(1, const unsigned short*), HP_ARG(2, const float*),           \
           HP_ARG(3, float*), HP_ARG(4, float*), HP_ARG(5, int), HP_ARG(6, int), HP_ARG(7, int));                 \
    });                                                                                                             \
  }
HP_WGMMA_HOST(hp_wgmma_f16_n16)
HP_WGMMA_HOST(hp_wgmma_bf16_n32)
HP_WGMMA_HOST(hp_wgmma_f16_n64)
HP_WGMMA_HOST(hp_wgmma_bf16_n64)
HP_WGMMA_HOST(hp_wgmma_f16_n128)
HP_WGMMA_HOST(hp_wgmma_bf16_n128)
HP_WGMMA_HOST(hp_wgmma_f16_n256)
extern "C" void hp_wgmma_groups_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    hp_wgmma_groups(HP_ARG(0, const unsigned short*), HP_ARG(1, const unsigned short*), HP_ARG(2, float*),
                    HP_ARG(3, float*), HP_ARG(4, float*));
  });
}
extern "C" void hp_tma_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] {
    hp_tma(HP_ARG(0, tsr_tensor_map), HP_ARG(1, unsigned char*), HP_ARG(2, unsigned char*), HP_ARG(3, unsigned char*),
           HP_ARG(4, int*), HP_ARG(5, int), HP_ARG(6, int), HP_ARG(7, int), HP_ARG(8, int), HP_ARG(9, int));
  });
}
extern "C" void hp_setmaxnreg_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { hp_setmaxnreg(HP_ARG(0, int*)); });
}
// The test encodes its maps through the emulation's encoder.
extern "C" bool hp_encode_map(tsr_tensor_map* out, const void* base, unsigned elem, unsigned long long dim0,
                              unsigned long long dim1, unsigned long long stride, unsigned box0, unsigned box1,
                              int swizzle) {
  return tsr_emu_encode_tensor_map_2d(out, base, elem, dim0, dim1, stride, box0, box1, swizzle);
}

// A named barrier among the first 128 threads (bar.sync 1, 128) while the
// rest of the block has returned: each passes its neighbour's value twice
// through shared memory. `count`: the barrier's count (a misuse unless 128).
TSR_KERNEL void hp_named(int* out, int count) {
  int* s = (int*)TSR_SMEM;
  const int t = tsr_thread();
  if (t >= 128) return;
  s[t] = t;
  tsr_bar_sync(1, count);
  const int next = s[(t + 1) % 128];
  tsr_bar_sync(1, count);
  s[t] = next;
  tsr_bar_sync(1, count);
  out[t] = s[(t + 1) % 128];
}
extern "C" void hp_named_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { hp_named(HP_ARG(0, int*), HP_ARG(1, int)); });
}

// Misuses the emulation reports (launch throws): `how` 0: a wgmma (by
// however many threads launch); 1: a wgmma whose B reaches past shared
// memory; 2: a wgmma without a wgmma.fence; 3: a wait on an mbarrier phase
// nobody completes; 4: a TMA load completing on no mbarrier.
TSR_KERNEL void hp_misuse(int how) {
  float d[8] = {};
  unsigned long long* bar = (unsigned long long*)TSR_SMEM;
  if (how <= 2) {
    if (how != 2) tsr_wgmma_fence();
    const unsigned long long da = tsr_wgmma_desc(TSR_SMEM, 128, 256, 0);
    const unsigned long long db = tsr_wgmma_desc(TSR_SMEM, 128, how == 1 ? 65536 : 256, 0);
    tsr_wgmma_f16<16, 0, 0>(d, da, db, 1);
    tsr_wgmma_commit();
    tsr_wgmma_wait<0>();
  } else if (how == 3) {
    if (tsr_thread() == 0) tsr_mbar_init(bar, 2);
    tsr_sync();
    if (tsr_thread() == 0) tsr_mbar_arrive(bar);
    tsr_mbar_wait(bar, 0);
  } else {
    tsr_tensor_map map;
    unsigned short g[64] = {};
    tsr_emu_encode_tensor_map_2d(&map, g, 2, 8, 8, 16, 8, 8, 0);
    tsr_tma_load_2d(TSR_SMEM + 1024, &map, 0, 0, bar);
  }
  tsr_sync();
}
extern "C" void hp_misuse_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { hp_misuse(HP_ARG(0, int)); });
}
#endif
)";

const testing::HostLibrary& host_library() {
  static const auto lib = testing::build_host_library({kKernels}, "-Wall -Wextra -Werror");
  return *lib;
}

void* host_symbol(const std::string& name) { return testing::host_symbol(host_library(), name); }
HostEntry host_entry(const std::string& kernel) { return testing::host_entry(host_library(), kernel); }

const char* const kLayout[] = {"K-major",
                               "K-major 128B-swizzled",
                               "MN-major",
                               "MN-major 128B-swizzled",
                               "K-major 64B-swizzled",
                               "MN-major 32B-swizzled"};

struct WgmmaCase {
  int n;
  bool bf16;
  const char* kernel;
};

class WgmmaEmulation : public ::testing::TestWithParam<WgmmaCase> {};

// Every layout of A against every layout of B, accumulating on C and
// overwriting it; the accumulators read before the wait are C's.
TEST_P(WgmmaEmulation, EveryLayoutOfAAndBAccumulatingAndOverwriting) {
  const WgmmaCase c = GetParam();
  const int N = c.n;
  std::mt19937 rng(static_cast<unsigned>(N) * 2 + c.bf16);
  const std::vector<uint16_t> A = random_halves(64 * 64, c.bf16, rng),
                              B = random_halves(64 * static_cast<size_t>(N), c.bf16, rng);
  std::vector<float> C(64 * static_cast<size_t>(N));
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (float& x : C) x = u(rng);
  std::vector<double> ab(C.size(), 0), scale(C.size(), 0);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < 64; ++k) {
        const double p = static_cast<double>(half_value(A[m * 64 + k], c.bf16)) * half_value(B[k * N + n], c.bf16);
        ab[m * N + n] += p, scale[m * N + n] += std::fabs(p);
      }
  for (int la = 0; la < 6; ++la)
    for (int lb = 0; lb < 6; ++lb)
      for (int scale_first : {1, 0}) {
        std::vector<float> D(C.size(), NAN), stale(128, NAN);
        const uint16_t *pa = A.data(), *pb = B.data();
        const float* pc = C.data();
        float *pd = D.data(), *ps = stale.data();
        void* args[] = {&pa, &pb, &pc, &pd, &ps, &la, &lb, &scale_first};
        host_entry(c.kernel)(args, 1, 128, 8192 + 128 * std::max(N, 64));  // a 128B-swizzled MN-major row is 64 wide
        const std::string what =
            std::string("A ") + kLayout[la] + ", B " + kLayout[lb] + (scale_first ? ", D = C + AB" : ", D = AB");
        int bad = 0;
        for (size_t i = 0; i < D.size() && bad < 5; ++i) {
          const double want = ab[i] + (scale_first ? C[i] : 0.0);
          if (std::fabs(D[i] - want) > 1e-5 * (scale[i] + std::fabs(C[i])) || std::isnan(D[i]))
            ++bad, ADD_FAILURE() << what << ": D[" << i / N << "][" << i % N << "] = " << D[i] << ", want " << want;
        }
        for (int t = 0; t < 128 && bad < 5; ++t) {
          const float want = C[(16 * (t / 32) + t % 32 / 4) * N + 2 * (t % 4)];
          if (stale[t] != want)
            ++bad, ADD_FAILURE() << what << ": thread " << t << " read " << stale[t] << " before the wait, want C's "
                                 << want;
        }
      }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WgmmaEmulation,
    ::testing::Values(WgmmaCase{16, false, "hp_wgmma_f16_n16"}, WgmmaCase{32, true, "hp_wgmma_bf16_n32"},
                      WgmmaCase{64, false, "hp_wgmma_f16_n64"}, WgmmaCase{64, true, "hp_wgmma_bf16_n64"},
                      WgmmaCase{128, false, "hp_wgmma_f16_n128"}, WgmmaCase{128, true, "hp_wgmma_bf16_n128"},
                      WgmmaCase{256, false, "hp_wgmma_f16_n256"}),
    [](const ::testing::TestParamInfo<WgmmaCase>& p) { return std::string(p.param.kernel + 9); });

// wait<1> lands the older group only: one accumulator done, the other not.
TEST(WgmmaEmulationGroups, WaitOneLandsTheOlderGroupOnly) {
  std::mt19937 rng(17);
  const std::vector<uint16_t> A = random_halves(64 * 64, false, rng), B = random_halves(64 * 64, false, rng);
  std::vector<float> D0(64 * 64, NAN), D1(64 * 64, NAN), early(128, NAN);
  const uint16_t *pa = A.data(), *pb = B.data();
  float *p0 = D0.data(), *p1 = D1.data(), *pe = early.data();
  void* args[] = {&pa, &pb, &p0, &p1, &pe};
  host_entry("hp_wgmma_groups")(args, 1, 128, 16384);
  for (int half = 0; half < 2; ++half)
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < 64; ++n) {
        double want = 0, scale = 0;
        for (int k = 32 * half; k < 32 * half + 32; ++k) {
          const double p = static_cast<double>(half_value(A[m * 64 + k], false)) * half_value(B[k * 64 + n], false);
          want += p, scale += std::fabs(p);
        }
        const float got = (half ? D1 : D0)[m * 64 + n];
        EXPECT_LE(std::fabs(got - want), 1e-5 * scale) << "D" << half << "[" << m << "][" << n << "] = " << got;
      }
  for (int t = 0; t < 128; ++t) EXPECT_EQ(early[t], -1.0f) << "thread " << t << "'s acc1 after wait<1>";
}

using EncodeMap = bool (*)(void*, const void*, unsigned, unsigned long long, unsigned long long, unsigned long long,
                           unsigned, unsigned, int);

struct alignas(64) MapBytes {
  unsigned char b[128];
};

// The bytes TMA writes for the box at (c0, c1): rows of box0 elements,
// zeros outside the tensor, 16-byte chunks swizzled by the tile's address.
std::vector<uint8_t> expected_box(const std::vector<uint16_t>& g, int w, int h, int ld, int box0, int box1, int c0,
                                  int c1, int swizzle) {
  std::vector<uint8_t> out(static_cast<size_t>(box0) * box1 * 2, 0);
  for (int y = 0; y < box1; ++y)
    for (int x = 0; x < box0; ++x) {
      const int gx = c0 + x, gy = c1 + y;
      const uint16_t v = gx >= 0 && gy >= 0 && gx < w && gy < h ? g[gy * ld + gx] : 0;
      size_t at = static_cast<size_t>(y * box0 + x) * 2;
      if (swizzle) at ^= ((at >> 7) & (swizzle / 16 - 1)) << 4;  // the tile is 1024-aligned
      std::memcpy(&out[at], &v, 2);
    }
  return out;
}

struct TmaCase {
  int box0, box1, swizzle, c0a, c1a, c0b, c1b;
};

class TmaEmulation : public ::testing::TestWithParam<TmaCase> {};

// A 40x20 tensor of halves in rows of 48: two boxes through one mbarrier's
// two phases, each partly outside the tensor; the issuing thread's read
// before the wait sees the old bytes; parity 1 is over, parity 0 (the third
// phase) is not.
TEST_P(TmaEmulation, TwoPhasesOfBoxesPartlyOutsideTheTensor) {
  const TmaCase c = GetParam();
  const int w = 40, h = 20, ld = 48;
  std::vector<uint16_t> g(static_cast<size_t>(ld) * h);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint16_t>(i + 1);
  MapBytes map{};
  const auto encode = reinterpret_cast<EncodeMap>(host_symbol("hp_encode_map"));
  ASSERT_TRUE(
      encode(&map, g.data(), 2, w, h, ld * 2, static_cast<unsigned>(c.box0), static_cast<unsigned>(c.box1), c.swizzle));
  const int bytes = c.box0 * c.box1 * 2;
  std::vector<uint8_t> out0(bytes, 0xee), out1(bytes, 0xee), first(bytes, 0xee);
  int flags[2] = {-1, -1};
  uint8_t *p0 = out0.data(), *p1 = out1.data(), *pf = first.data();
  int* pflags = flags;
  int c0a = c.c0a, c1a = c.c1a, c0b = c.c0b, c1b = c.c1b, n = bytes;
  void* args[] = {&map, &p0, &p1, &pf, &pflags, &c0a, &c1a, &c0b, &c1b, &n};
  host_entry("hp_tma")(args, 1, 128, 1024 + bytes);
  EXPECT_EQ(out0, expected_box(g, w, h, ld, c.box0, c.box1, c.c0a, c.c1a, c.swizzle));
  EXPECT_EQ(out1, expected_box(g, w, h, ld, c.box0, c.box1, c.c0b, c.c1b, c.swizzle));
  EXPECT_EQ(first, std::vector<uint8_t>(bytes, 0)) << "the tile before the wait";
  EXPECT_EQ(flags[0], 1) << "parity 1 after the second phase";
  EXPECT_EQ(flags[1], 0) << "parity 0 after the second phase (the third is open)";
}

INSTANTIATE_TEST_SUITE_P(Boxes, TmaEmulation,
                         ::testing::Values(TmaCase{32, 16, 0, 24, -4, 0, 8}, TmaCase{64, 8, 128, -8, 15, 0, 0},
                                           TmaCase{16, 16, 32, 30, 10, -3, -3}),
                         [](const ::testing::TestParamInfo<TmaCase>& p) {
                           return "box" + std::to_string(p.param.box0) + "x" + std::to_string(p.param.box1) +
                                  "_swizzle" + std::to_string(p.param.swizzle);
                         });

TEST(TmaEmulation, EncodeRefusesWhatCuTensorMapEncodeTiledRefuses) {
  std::vector<uint16_t> g(64 * 64);
  MapBytes map{};
  const auto encode = reinterpret_cast<EncodeMap>(host_symbol("hp_encode_map"));
  EXPECT_TRUE(encode(&map, g.data(), 2, 64, 64, 128, 64, 8, 128));
  EXPECT_FALSE(encode(&map, g.data(), 2, 64, 64, 120, 64, 8, 0)) << "row stride no multiple of 16";
  EXPECT_FALSE(encode(&map, g.data(), 2, 64, 64, 128, 4, 8, 0)) << "inner box of 8 bytes";
  EXPECT_FALSE(encode(&map, g.data(), 2, 64, 64, 128, 64, 8, 64)) << "inner box wider than the swizzle";
  EXPECT_FALSE(encode(&map, g.data(), 2, 64, 64, 128, 8, 512, 0)) << "box dim past 256";
}

TEST(HopperEmulationMisuse, LaunchThrowsRatherThanCrashingOrHanging) {
  int how = 0;
  void* args[] = {&how};
  const HostEntry misuse = host_entry("hp_misuse");
  EXPECT_NO_THROW(misuse(args, 1, 128, 4096)) << "a whole warpgroup";
  EXPECT_THROW(misuse(args, 1, 96, 4096), std::logic_error) << "a warpgroup of 96 threads";
  EXPECT_THROW(misuse(args, 1, 160, 4096), std::logic_error) << "a second warpgroup of 32 threads";
  how = 1;
  EXPECT_THROW(misuse(args, 1, 128, 4096), std::logic_error) << "B past shared memory";
  how = 2;
  EXPECT_THROW(misuse(args, 1, 128, 4096), std::logic_error) << "no wgmma.fence";
  how = 3;
  EXPECT_THROW(misuse(args, 1, 64, 4096), std::logic_error) << "a phase that never completes";
  how = 4;
  EXPECT_THROW(misuse(args, 1, 32, 4096), std::logic_error) << "TMA on no mbarrier";
  int out[256] = {};
  int* po = out;
  void* reg_args[] = {&po};
  EXPECT_NO_THROW(host_entry("hp_setmaxnreg")(reg_args, 1, 256, 0));
  EXPECT_EQ(out[255], 255);
}

// Named barriers (a warp-specialized kernel's consumers): 128 threads sync
// among themselves while the block's last warp has returned; a count that
// is not a multiple of 32, or more threads than ever arrive, is reported.
TEST(HopperEmulation, NamedBarriersSyncTheirThreadsOnly) {
  int out[128] = {};
  int* po = out;
  int count = 128;
  void* args[] = {&po, &count};
  const HostEntry named = host_entry("hp_named");
  EXPECT_NO_THROW(named(args, 1, 160, 1024));
  for (int t = 0; t < 128; ++t) ASSERT_EQ(out[t], (t + 2) % 128) << t;
  count = 100;
  EXPECT_THROW(named(args, 1, 160, 1024), std::logic_error) << "a count not a multiple of 32";
  count = 128;
  EXPECT_THROW(named(args, 1, 96, 1024), std::logic_error) << "128 expected, 96 arrive";
}

// The same kernels for the GPU: NVRTC compiles them for sm_90a, ptxas
// reports no spills; the PTX has the instructions the wrappers name.
TEST(HopperNvrtc, KernelsCompileForSm90aWithoutSpills) {
  const device::NvrtcLibrary& nvrtc = device::NvrtcLibrary::get();
  if (!nvrtc.available()) GTEST_SKIP() << "NVRTC is not available: " << nvrtc.why_unavailable();
  const device::CudaKernelCompiler compiler(nvrtc);
  CudaKernelSource src;
  src.entry = "hp_wgmma_f16_n64";
  src.source = kKernels;
  const device::CudaCompiled out = compiler.compile(src, "sm_90a");
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.cubin.empty());
  // ptxas adds a warpgroup.arrive or wait where registers wgmma uses are
  // written between the fence and the commit (C7519, C7517), and may
  // serialize the wgmma: none in these kernels (the header says how).
  EXPECT_EQ(out.log.find("is injected"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("serialized"), std::string::npos) << out.log;
  for (const char* kernel :
       {"hp_wgmma_f16_n16", "hp_wgmma_bf16_n32", "hp_wgmma_f16_n64", "hp_wgmma_bf16_n64", "hp_wgmma_f16_n128",
        "hp_wgmma_bf16_n128", "hp_wgmma_f16_n256", "hp_wgmma_groups", "hp_tma", "hp_setmaxnreg"}) {
    const auto report = device::parse_ptxas_report(out.log, kernel);
    ASSERT_TRUE(report.has_value()) << kernel << ": no ptxas report in\n" << out.log;
    EXPECT_GT(report->registers, 0) << kernel;
    EXPECT_EQ(report->spill_stores, 0) << kernel << "\n" << out.log;
    EXPECT_EQ(report->spill_loads, 0) << kernel;
    RecordProperty(std::string(kernel) + "_registers", report->registers);
  }
  const device::CudaCompiled ptx = compiler.compile(src, "compute_90a");
  ASSERT_TRUE(ptx.ok) << ptx.log;
  for (const char* insn :
       {"wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16", "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        "fence.proxy.async.shared::cta", "mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
        "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
        "setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232"})
    EXPECT_NE(ptx.ptx.find(insn), std::string::npos) << insn;
}

// The header without the sm_90a wrappers elsewhere: the kernels' source
// compiles for sm_80 and sm_90 (the Hopper kernels drop out); a use of
// wgmma compiles for sm_90a only, mbarrier and TMA for sm_90 and sm_90a.
TEST(HopperNvrtc, Sm90aWrappersOnlyForSm90a) {
  const device::NvrtcLibrary& nvrtc = device::NvrtcLibrary::get();
  if (!nvrtc.available()) GTEST_SKIP() << "NVRTC is not available: " << nvrtc.why_unavailable();
  const device::CudaKernelCompiler compiler(nvrtc);
  CudaKernelSource all;
  all.entry = "hp_all";
  all.source = std::string(kKernels) + "TSR_KERNEL void hp_all() {}\n";
  for (const char* arch : {"sm_80", "sm_90"}) EXPECT_TRUE(compiler.compile(all, arch).ok) << arch;
  CudaKernelSource wgmma;
  wgmma.entry = "probe";
  wgmma.source = "#include \"tessera_cuda.h\"\nTSR_KERNEL void probe() { tsr_wgmma_fence(); }\n";
  CudaKernelSource tma;
  tma.entry = "probe";
  tma.source =
      "#include \"tessera_cuda.h\"\nTSR_KERNEL void probe(TSR_GRID_CONST tsr_tensor_map m) {\n"
      "  unsigned long long* bar = (unsigned long long*)TSR_SMEM;\n  tsr_mbar_init(bar, 1);\n"
      "  tsr_tma_load_2d(TSR_SMEM + 1024, &m, 0, 0, bar);\n  tsr_mbar_wait(bar, 0);\n}\n";
  EXPECT_FALSE(compiler.compile(wgmma, "sm_80").ok);
  EXPECT_FALSE(compiler.compile(wgmma, "sm_90").ok);
  EXPECT_TRUE(compiler.compile(wgmma, "sm_90a").ok);
  EXPECT_FALSE(compiler.compile(tma, "sm_80").ok);
  EXPECT_TRUE(compiler.compile(tma, "sm_90").ok);
  EXPECT_TRUE(compiler.compile(tma, "sm_90a").ok);
}

}  // namespace
}  // namespace tessera::kir
