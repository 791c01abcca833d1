// GPU K3 tuning with a fake timer: the variants tried, the fastest chosen,
// variants that cannot be built skipped, the choice kept in the kernel cache
// for these shapes and this architecture only, a damaged note re-tuned.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/device/gpu_kernel_tuner.h"

namespace tessera::device {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMulAdd =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = mul(%0, %1) : f32[s0, s1]\noutputs %2\n";
constexpr const char* kRowSum =
    "%0 = input : f32[s0, s1]\n%1 = sum(%0, axis=1) : f32[s0]\noutputs %1\n";

class GpuKernelTunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera-gpu-tune-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(GpuVariant, TextRoundTripsAndBadTextIsRefused) {
  const GpuVariant v{2048, 128, true};
  EXPECT_EQ(GpuVariant::parse(v.str()), v);
  for (const char* bad : {"", "tile=0 threads=128 flat=0", "tile=64 threads=100 flat=0", "tile=64 threads=128 flat=2",
                          "tile=64 threads=128 flat=0 more"})
    EXPECT_FALSE(GpuVariant::parse(bad).has_value()) << bad;
  const kir::RegionLowering opt = v.lowering({8, 9});
  EXPECT_EQ(opt.tile, 2048);
  EXPECT_TRUE(opt.flat);
  EXPECT_EQ(opt.symbol_values, (std::vector<std::optional<int64_t>>{8, 9}));
}

TEST(GpuVariant, CandidatesPerKernelKind) {
  const auto ew = gpu_variants(parse_region(kMulAdd), {100, 100});
  EXPECT_EQ(ew.size(), 20u);  // 5 tiles x 2 block sizes x rows or flat
  const auto rows = gpu_variants(parse_region(kRowSum), {100, 100});
  ASSERT_EQ(rows.size(), 2u);  // one tile and layout, two block sizes
  for (const GpuVariant& v : rows) EXPECT_FALSE(v.flat);
}

TEST_F(GpuKernelTunerTest, TheFastestIsChosenAndKeptForTheseShapes) {
  const Region r = parse_region(kMulAdd);
  const kir::KernelDiskCache cache(dir_.string());
  int timed = 0;
  auto timer = [&](const GpuVariant& v) {
    ++timed;
    if (v.tile == 4096 && v.threads == 128) throw std::runtime_error("a tile too large per thread");
    return v == GpuVariant{2048, 256, true} ? 1.0 : 2.0 + static_cast<double>(v.tile) / 1000;
  };
  const GpuTuneOutcome first = tune_gpu_region(r, {4096, 4096}, "sm_90a", cache, timer);
  EXPECT_EQ(first.best, (GpuVariant{2048, 256, true}));
  EXPECT_EQ(first.timings_ms.size(), 18u);
  ASSERT_EQ(first.refused.size(), 2u);
  EXPECT_NE(first.refused[0].second.find("too large"), std::string::npos);
  EXPECT_EQ(timed, 20);
  // The next run with these shapes: from the cache, nothing timed.
  const GpuTuneOutcome again = tune_gpu_region(r, {4096, 4096}, "sm_90a", cache, timer);
  EXPECT_EQ(again.best, first.best);
  EXPECT_TRUE(again.timings_ms.empty());
  EXPECT_EQ(timed, 20);
  // Other shapes, another architecture: tuned again.
  tune_gpu_region(r, {4096, 512}, "sm_90a", cache, timer);
  tune_gpu_region(r, {4096, 4096}, "sm_80", cache, timer);
  EXPECT_EQ(timed, 60);
}

TEST_F(GpuKernelTunerTest, ADamagedNoteIsTunedAgainAndNothingBuildableIsAnError) {
  const Region r = parse_region(kRowSum);
  const kir::KernelDiskCache cache(dir_.string());
  int timed = 0;
  auto timer = [&](const GpuVariant& v) { return ++timed, static_cast<double>(v.threads); };
  EXPECT_EQ(tune_gpu_region(r, {64, 1000}, "sm_90a", cache, timer).best.threads, 128);
  for (const auto& f : fs::directory_iterator(dir_)) fs::resize_file(f.path(), fs::file_size(f.path()) / 2);
  EXPECT_EQ(tune_gpu_region(r, {64, 1000}, "sm_90a", cache, timer).timings_ms.size(), 2u);
  EXPECT_EQ(timed, 4);
  auto refuse = [](const GpuVariant&) -> double { throw std::runtime_error("the emitter refused it"); };
  try {
    tune_gpu_region(r, {64, 2000}, "sm_90a", cache, refuse);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the emitter refused it"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::device
