// The kernel runtime's store over the persistent cache (runtime/kernels/
// kernel_store.h), with the CPU target's kernels: a second store over the
// same directory links what the first compiled instead of compiling; a
// corrupt object is rebuilt and replaced; a refused compile is counted;
// --dump writes each kernel's files. The tuner (kernel_tuner.h): the
// variant text, the fastest of the variants that could run, the kept choice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/kernel/cpu/cpu_launch.h"
#include "runtime/kernels/cpu_target.h"
#include "runtime/kernels/kernel_store.h"
#include "runtime/kernels/kernel_tuner.h"
#include "tests/support/tensor_values.h"
#include "tests/support/test_files.h"

namespace tessera::kernels {
namespace {

namespace fs = std::filesystem;

using testing::read_file;
using testing::TempDir;
using testing::tensor_bytes;

constexpr const char* kRegion =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = exp(%2) : f32[s0, s1]\noutputs %3\n";

Value ramp(Shape shape, float step) {
  return testing::f32_tensor(std::move(shape), [&](int64_t i) { return step * static_cast<double>(i % 97); });
}

// The K2 kernel of kRegion, run and compared with the interpreter's kernels.
std::shared_ptr<const TargetKernel> k2_runs_right(CpuTarget& cpu) {
  const Region r = parse_region(kRegion);
  std::shared_ptr<const TargetKernel> k = cpu.compile(r, {}, KernelVariant{});
  const std::vector<Value> in = {ramp({7, 33}, 0.01f), ramp({33}, 0.03f)};
  std::string why;
  std::optional<Value> out = cpu.launch(r, *k, in, {7, 33}, nullptr, why);
  EXPECT_TRUE(out.has_value());
  if (out) {
    EXPECT_EQ(tensor_bytes(*out), tensor_bytes(run_region_reference(r, in)[0]));
  }
  return k;
}

TEST(KernelStore, ASecondStoreOverTheCacheCompilesNothing) {
  TempDir dir;
  {
    KernelStore store(dir.path());
    CpuTarget cpu(store);
    k2_runs_right(cpu);
    EXPECT_EQ(store.stats("cpu").compiled, 1u);
    k2_runs_right(cpu);  // the same kernel again: the store's, not even the disk's
    EXPECT_EQ(store.stats("cpu").compiled, 1u);
    EXPECT_EQ(store.stats("cpu").from_memory, 1u);
    EXPECT_EQ(store.stats().disk.hits, 0u);
  }
  KernelStore second(dir.path());  // as a second run of the program would
  CpuTarget cpu(second);
  EXPECT_TRUE(k2_runs_right(cpu)->stored->from_disk);
  EXPECT_EQ(second.stats("cpu").compiled, 0u);
  EXPECT_EQ(second.stats("cpu").from_disk, 1u);
  EXPECT_EQ(second.stats().disk.hits, 1u);
}

TEST(KernelStore, ACorruptObjectIsRebuiltAndReplaced) {
  TempDir dir;
  {
    KernelStore store(dir.path());
    CpuTarget cpu(store);
    k2_runs_right(cpu);
  }
  for (const auto& e : fs::directory_iterator(dir.path())) {  // flip bytes in the middle of every entry
    std::string s = read_file(e.path().string());
    for (size_t i = s.size() / 2; i < s.size() / 2 + 16; ++i) s[i] = static_cast<char>(~s[i]);
    testing::write_file(e.path().string(), s);
  }
  {
    KernelStore store(dir.path());
    CpuTarget cpu(store);
    EXPECT_FALSE(k2_runs_right(cpu)->stored->from_disk);
    EXPECT_EQ(store.stats("cpu").compiled, 1u);
    EXPECT_EQ(store.stats().disk.corrupt, 1u);
  }
  KernelStore third(dir.path());  // the rebuilt entry is whole again
  CpuTarget cpu(third);
  EXPECT_TRUE(k2_runs_right(cpu)->stored->from_disk);
}

TEST(KernelStore, TargetsAreKeptApartAndARefusedCompileIsCounted) {
  KernelStore store;
  int compiles = 0;
  KernelRecipe ok{"test", [&] { return std::string("image ") + std::to_string(++compiles); }, {}};
  auto a = store.get("cpu", "same identity", "k", ok);
  auto b = store.get("gpu", "same identity", "k", ok);
  EXPECT_NE(a, b);
  EXPECT_EQ(store.get("cpu", "same identity", "k", ok), a);
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(a->name, "k-" + kir::KernelDiskCache::hash_hex("same identity"));
  KernelRecipe refused{"test", []() -> std::string { throw std::runtime_error("no"); }, {}};
  EXPECT_THROW(store.get("gpu", "other", "k", refused), std::runtime_error);
  EXPECT_EQ(store.stats("gpu").failures, 1u);
  EXPECT_EQ(store.stats("gpu").compiled, 1u);
}

TEST(CpuTarget, DumpWritesKernelIrLlvmIrCudaAndPtx) {
  TempDir dir;
  KernelStore store;
  CpuTarget cpu(store);
  cpu.set_dump_dir(dir.path());
  k2_runs_right(cpu);
  k2_runs_right(cpu);  // once per kernel
  int kir = 0, ll = 0, cu = 0, ptx = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string text = read_file(e.path().string());
    if (e.path().extension() == ".kir") {
      ++kir;
      EXPECT_NE(text.find("// %3 = exp(%2) : f32[s0, s1]"), std::string::npos) << text;
      EXPECT_NE(text.find("kernel @region"), std::string::npos) << text;
    } else if (e.path().extension() == ".ll") {
      ++ll;
      EXPECT_NE(text.find("define"), std::string::npos);
    } else if (e.path().extension() == ".cu") {
      ++cu;
      EXPECT_NE(text.find("TSR_KERNEL void TSR_BOUNDS("), std::string::npos) << text;
      EXPECT_NE(text.find("tsr_expf("), std::string::npos) << text;
    } else if (e.path().extension() == ".ptx") {
      ++ptx;  // NVRTC's PTX, or a line saying why there is none
      EXPECT_TRUE(text.find(".entry") != std::string::npos || text.rfind("// ", 0) == 0) << text;
    }
  }
  EXPECT_EQ(kir, 1);
  EXPECT_EQ(ll, 1);
  EXPECT_EQ(cu, 1);
  EXPECT_EQ(ptx, 1);
  EXPECT_EQ(cpu.dump_error(), "");
}

TEST(KernelVariant, TextRoundTripsAndBadTextIsRefused) {
  for (const KernelVariant& v : {KernelVariant{}, KernelVariant{4096, kir::kEveryCore, true}, KernelVariant{512, 128, false},
                                 KernelVariant{1024, 256, false, 64}})
    EXPECT_EQ(KernelVariant::parse(v.str()), v) << v.str();
  // An attention variant names its rows; a note without them (an older
  // cache's) still reads.
  EXPECT_EQ(KernelVariant({1024, 128, false, 32}).str(), "tile=1024 threads=128 flat=0 rows=32");
  EXPECT_EQ(KernelVariant::parse("tile=1024 threads=128 flat=0"), KernelVariant({1024, 128, false, 0}));
  EXPECT_EQ(KernelVariant::parse("tile=1024 threads=128 flat=0 rows=0"), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=1024 threads=128 flat=0 rows=20"), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=1024 threads=128 flat=0 rows="), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=0 threads=1 flat=0"), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=64 threads=1"), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=64 threads=2048 flat=0"), std::nullopt);
  EXPECT_EQ(KernelVariant::parse("tile=64 threads=1 flat=0 and more"), std::nullopt);
}

TEST(CpuTarget, VariantsStartWithK2sAndTryShortGridsOnEveryCore) {
  KernelStore store;
  CpuTarget cpu(store);
  const Region r = parse_region(kRegion);
  const std::vector<KernelVariant> c = cpu.variants(r, {300, 40}, {300, 40});  // short rows: flat layouts
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], KernelVariant{});
  EXPECT_TRUE(std::any_of(c.begin(), c.end(), [](const KernelVariant& v) { return v.flat; }));
  for (size_t i = 1; i < c.size(); ++i) {
    if (!c[i].flat) {
      EXPECT_LE(c[i].tile, 48) << c[i].str();  // row-wise tiles no longer than the row (40 -> 48)
    }
  }
  // A short grid (flat tiles of 1024 over 300 x 40: 12 programs) is also
  // tried on every core; K2's (300 rows: the launcher's every core) is not.
  EXPECT_NE(std::find(c.begin(), c.end(), KernelVariant{1024, kir::kEveryCore, true}), c.end());
  EXPECT_EQ(std::find(c.begin(), c.end(), KernelVariant{1024, kir::kEveryCore, false}), c.end());
}

TEST(KernelTuner, TheFastestThatRanIsChosenAndNoneIsAnError) {
  const std::vector<KernelVariant> v = {{256, 128, false}, {512, 128, false}, {1024, 256, false}};
  int calls = 0;
  const TuneOutcome o = KernelTuner::fastest(
      v,
      [&](size_t i) -> double {
        ++calls;
        if (i == 1) throw std::runtime_error("too many registers");
        return i == 2 ? 1.0 : 3.0;
      },
      TimingPlan{3, 3, 0});
  EXPECT_EQ(o.best, v[2]);
  EXPECT_EQ(o.timings_ms.size(), 2u);
  ASSERT_EQ(o.refused.size(), 1u);
  EXPECT_EQ(o.refused[0].second, "too many registers");
  EXPECT_EQ(calls, 7);  // three rounds of the two that run, one try of the refused
  EXPECT_THROW(KernelTuner::fastest(
                   v, [](size_t) -> double { throw std::runtime_error("no"); }, TimingPlan{}),
               std::runtime_error);
}

TEST(KernelTuner, AChoiceIsKeptPerArchitectureRegionAndDims) {
  TempDir dir;
  KernelStore store(dir.path());
  const KernelTuner tuner(store);
  const Region r = parse_region(kRegion);
  EXPECT_FALSE(tuner.kept("sm_90a", r, {300, 40}));
  tuner.keep("sm_90a", r, {300, 40}, KernelVariant{2048, 128, true});
  EXPECT_EQ(tuner.kept("sm_90a", r, {300, 40}), (KernelVariant{2048, 128, true}));
  EXPECT_FALSE(tuner.kept("sm_80", r, {300, 40}));
  EXPECT_FALSE(tuner.kept("sm_90a", r, {301, 40}));
  EXPECT_FALSE(tuner.kept("sm_90a", r, {std::nullopt, 40}));
}

}  // namespace
}  // namespace tessera::kernels
