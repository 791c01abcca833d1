// The generated CUDA C++ run on the host: every kernel of cuda_test_cases.h,
// K2 and K3, is emitted, compiled by the host's C++ compiler against the
// emulation prelude (tessera_cuda_host.h: a block's threads as fibers) into
// one shared library, loaded, launched over its grid, and its outputs
// compared with the interpreter's kernels (run_region_reference) within the
// tolerances of cuda_test_launch.h.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/cuda/cuda_region.h"
#include "codegen/kernel/kernel_text.h"
#include "tests/codegen/kernel/cuda_host_library.h"
#include "tests/codegen/kernel/cuda_test_launch.h"

namespace tessera::kir {
namespace {

using testing::CudaCase;
using testing::HostEntry;

// A kernel with tensor maps (TMA) exports the emulation's encoder,
// ENTRY_encode_map; `base` (if set) stands in for every map's pointer.
TensorMapEncoder map_encoder(const testing::HostLibrary& lib, const std::string& entry, const void* base = nullptr) {
  using MapEncoder = int (*)(void*, const void*, unsigned, unsigned long long, unsigned long long, unsigned long long,
                             unsigned, unsigned);
  auto encoder = reinterpret_cast<MapEncoder>(dlsym(lib.handle, (entry + "_encode_map").c_str()));
  return [encoder, base](const TensorMapRequest& rq, TensorMapBytes& m) {
    return encoder && encoder(m.bytes, base ? base : reinterpret_cast<const void*>(rq.base), 2, rq.cols, rq.rows,
                              rq.row_bytes, rq.box_cols, rq.box_rows) != 0;
  };
}

struct KernelRun {
  const CudaCase* c;
  size_t set;
  bool k3;
  Kernel kernel;
  CudaKernelSource src;
};

std::vector<KernelRun> make_runs(const std::vector<CudaCase>& cases) {
  std::vector<KernelRun> runs;
  for (const CudaCase& c : cases) {
    for (size_t s = 0; s < c.inputs.size(); ++s) {
      const auto sym = bind_symbols(c.region, c.inputs[s]);
      EXPECT_TRUE(sym.has_value()) << c.name << " input set " << s;
      if (!sym) continue;
      for (bool k3 : {false, true}) {
        if (!k3 && s > 0) continue;  // one K2 kernel serves every input set
        const std::string entry = "k" + std::to_string(runs.size());
        Kernel k = testing::lower_case(c, c.name, k3 ? &*sym : nullptr);
        CudaKernelSource src = emit_cuda_kernel(k, entry, cuda_target_for(c.region));
        runs.push_back(KernelRun{&c, s, k3, std::move(k), std::move(src)});
      }
    }
  }
  return runs;
}

// Builds the runs' kernels into one library, launches each over its grid
// and compares its outputs with the interpreter's.
void expect_runs_match_the_interpreter(const std::vector<KernelRun>& runs) {
  ASSERT_FALSE(runs.empty());
  std::vector<std::string> sources;
  for (const KernelRun& r : runs) sources.push_back(r.src.source);
  auto lib = testing::build_host_library(sources);
  ASSERT_NE(lib->handle, nullptr) << lib->error;
  int launched = 0;
  for (const KernelRun& r : runs) {
    auto fn = reinterpret_cast<HostEntry>(dlsym(lib->handle, (r.src.entry + "_host").c_str()));
    ASSERT_NE(fn, nullptr) << r.src.entry;
    const std::vector<Value> want = run_region_reference(r.c->region, r.c->inputs[r.set]);
    testing::CaseLaunch launch(*r.c, r.set, r.kernel, r.src, map_encoder(*lib, r.src.entry));
    try {
      if (launch.programs > 0) fn(launch.args.data(), launch.programs, r.src.threads, r.src.shared_bytes);
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.c->name << ": " << e.what();
      continue;
    }
    const std::vector<Value> got = launch.outputs();
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o)
      testing::expect_close(got[o], want[o],
                   r.c->name + " set " + std::to_string(r.set) + (r.k3 ? " K3" : " K2") + " output " + std::to_string(o));
    ++launched;
  }
  EXPECT_EQ(launched, static_cast<int>(runs.size()));
}

TEST(CudaEmulation, EveryKernelKindComputesWhatTheInterpreterComputes) {
  const std::vector<CudaCase> cases = testing::cuda_cases();
  expect_runs_match_the_interpreter(make_runs(cases));
}

// Hopper's products (CudaTarget::wgmma): the tensor-core attention cases
// with 64 query rows per block (a warpgroup's m64), K2 and K3, with 128
// and 256 consumer threads (one warpgroup, or two sharing each product's
// columns) and a producer copying the keys and values by TMA, both
// products on wgmma with operands in the core-matrix layout, against the
// interpreter.
TEST(CudaEmulation, AttentionOnWarpgroupProductsComputesWhatTheInterpreterComputes) {
  const std::vector<CudaCase> cases = testing::cuda_cases();
  std::vector<KernelRun> runs;
  for (const CudaCase& c : cases) {
    if (!c.attention || !attention_on_tensor_cores(c.region)) continue;
    for (size_t s = 0; s < c.inputs.size(); ++s) {
      const auto sym = bind_symbols(c.region, c.inputs[s]);
      ASSERT_TRUE(sym.has_value()) << c.name;
      for (bool k3 : {false, true}) {
        RegionLowering opt;
        if (k3) opt.symbol_values.assign(sym->begin(), sym->end());
        const AttentionTiles tiles = attention_tiles(c.region, opt, 64);
        if (tiles.head > 128 || tiles.value > 128) continue;  // 64 rows of a whole 256: a variant the GPU does not have
        for (int threads : {128, 256}) {
          if (!k3 && (s > 0 || threads == 128)) continue;
          CudaTarget target = cuda_target_for(c.region, threads);
          target.wgmma = true;
          Kernel k = lower_attention(c.region, c.name, opt, tiles);
          const std::string entry = "w" + std::to_string(runs.size());
          CudaKernelSource src = emit_cuda_kernel(k, entry, target);
          EXPECT_NE(src.source.find("tsr_wgmma_"), std::string::npos) << c.name;
          EXPECT_EQ(src.source.find("tsr_mma_"), std::string::npos) << c.name;
          // K3's keys and values are copied by a producer: a warp beside one
          // consumer warpgroup, a warpgroup (setmaxnreg) beside two. (K2
          // walks the head dim in chunks: its loads are in an inner loop.)
          if (k3) {
            EXPECT_EQ(src.threads, threads == 128 ? 160 : 384) << c.name;
            EXPECT_EQ(src.source.find("tsr_setmaxnreg_inc") != std::string::npos, threads == 256) << c.name;
          }
          runs.push_back(KernelRun{&c, s, k3, std::move(k), std::move(src)});
        }
      }
    }
  }
  expect_runs_match_the_interpreter(runs);
}

// Hopper's variant copies its Q, K and V blocks with TMA where a block lies
// whole inside the sequence (a 64-row block of 70 queries or 90 keys), and
// by cp.async at the ragged end: with every map pointing at zeros instead
// of its tensor, the whole blocks read zeros and the result changes, while
// with the tensors' own maps it is the interpreter's (the test above).
TEST(CudaEmulation, WarpgroupAttentionCopiesWholeBlocksByTma) {
  const std::vector<CudaCase> cases = testing::cuda_cases();
  const auto c = std::find_if(cases.begin(), cases.end(), [](const CudaCase& x) { return x.name == "attention_tc_f16"; });
  ASSERT_NE(c, cases.end());
  const auto sym = bind_symbols(c->region, c->inputs[0]);
  ASSERT_TRUE(sym.has_value());
  RegionLowering opt;
  opt.symbol_values.assign(sym->begin(), sym->end());
  Kernel k = lower_attention(c->region, c->name, opt, attention_tiles(c->region, opt, 64));
  CudaTarget target = cuda_target_for(c->region, 128);
  target.wgmma = true;
  const CudaKernelSource src = emit_cuda_kernel(k, "tma0", target);
  EXPECT_NE(src.source.find("tsr_tma_load_2d"), std::string::npos);
  std::vector<int> mapped;
  for (const CudaArg& a : src.args)
    if (a.kind == CudaArgKind::TensorMap) mapped.push_back(a.index);
  EXPECT_EQ(mapped, (std::vector<int>{0, 1, 2}));  // q, k and v
  auto lib = testing::build_host_library({src.source});
  ASSERT_NE(lib->handle, nullptr) << lib->error;
  auto fn = reinterpret_cast<HostEntry>(dlsym(lib->handle, "tma0_host"));
  ASSERT_NE(fn, nullptr);
  const std::vector<Value> want = run_region_reference(c->region, c->inputs[0]);
  const std::vector<uint16_t> zeros(1 << 20, 0);
  testing::CaseLaunch launch(*c, 0, k, src, map_encoder(*lib, "tma0", zeros.data()));
  fn(launch.args.data(), launch.programs, src.threads, src.shared_bytes);
  const std::vector<Value> outs = launch.outputs();
  const TensorObj& got = *outs.at(0).as_tensor();
  const TensorObj& ref = *want.at(0).as_tensor();
  ASSERT_EQ(got.nbytes(), ref.nbytes());
  EXPECT_NE(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0) << "no block was copied through its tensor map";
}

// The emulation itself: a barrier every thread reaches, shuffles within a
// warp, votes; a barrier some threads skip is reported, not hung on.
TEST(CudaEmulation, PreludeBarriersShufflesAndVotes) {
  const std::string probe = R"(#include "tessera_cuda.h"
TSR_KERNEL void probe(float* out) {
  float* s = (float*)TSR_SMEM;
  const int t = tsr_thread();
  s[t] = (float)t;
  tsr_sync();
  float v = s[(t + 1) % 64];                 // a neighbour's value, after the barrier
  float w = (float)t;
  for (int m = 16; m >= 1; m /= 2) w += tsr_shfl_xor(w, m);  // the warp's sum
  const bool any = tsr_any(t == 40), all = tsr_all(t < 64);
  out[tsr_block() * 64 + t] = v + 1000.0f * w + (any ? 1e6f : 0.0f) + (all ? 1e7f : 0.0f);
}
TSR_KERNEL void diverge(float* out) {
  if (tsr_thread() < 5) return;
  tsr_sync();
  out[0] = 1;
}
extern "C" void probe_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { probe(*(float**)a[0]); });
}
extern "C" void diverge_host(void* const* a, long long programs, int threads, long long shared) {
  tsr_emu::launch(programs, threads, shared, [&] { diverge(*(float**)a[0]); });
}
)";
  auto lib = testing::build_host_library({probe});
  ASSERT_NE(lib->handle, nullptr) << lib->error;
  auto fn = reinterpret_cast<HostEntry>(dlsym(lib->handle, "probe_host"));
  ASSERT_NE(fn, nullptr);
  std::vector<float> out(128, -1);
  float* p = out.data();
  void* args[] = {&p};
  fn(args, 2, 64, 64 * 4);
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 64; ++t) {
      const int warp = t / 32 * 32;
      const float warp_sum = static_cast<float>(32 * warp + 31 * 32 / 2);
      const float any = t / 32 == 1 ? 1e6f : 0.0f;
      EXPECT_EQ(out[b * 64 + t], static_cast<float>((t + 1) % 64) + 1000.0f * warp_sum + any + 1e7f) << b << " " << t;
    }
  }
  auto bad = reinterpret_cast<HostEntry>(dlsym(lib->handle, "diverge_host"));
  ASSERT_NE(bad, nullptr);
  EXPECT_THROW(bad(args, 1, 32, 0), std::logic_error);
}

}  // namespace
}  // namespace tessera::kir
