// The persistent kernel cache (kernel_disk_cache.h) and the kernel store
// over it (kernel_store.h): entries round-trip; missing, truncated, altered
// and foreign entries are misses, never trusted; a second store over the
// same directory links what the first compiled instead of compiling; a
// corrupt object is rebuilt and replaced. And the K3 tuner's choice is kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/cpu/kernel_store.h"
#include "codegen/kernel/cpu/kernel_tuner.h"
#include "codegen/kernel/cpu/region_kernel.h"

namespace tessera::kir {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "tessera-kcache-XXXXXX").string();
    path_ = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(KernelDiskCache, EntriesRoundTripAndLeaveNoTemporaryFiles) {
  TempDir dir;
  KernelDiskCache cache(dir.path() + "/sub");  // made on the first store
  EXPECT_EQ(cache.load("kernel", "id-1"), std::nullopt);
  const std::string payload("obj\0with\nbytes", 14);
  ASSERT_TRUE(cache.store("kernel", "id-1", payload));
  EXPECT_EQ(cache.load("kernel", "id-1"), payload);
  EXPECT_EQ(cache.load("tuning", "id-1"), std::nullopt);  // kinds are apart
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() + "/sub")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
  }
  EXPECT_EQ(files, 1);
  const KernelDiskCache::Counters c = cache.counters();
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.misses, 2u);
  EXPECT_EQ(c.writes, 1u);
  EXPECT_EQ(c.corrupt, 0u);
}

TEST(KernelDiskCache, DamagedOrForeignEntriesAreMisses) {
  TempDir dir;
  KernelDiskCache cache(dir.path());
  const std::string payload(3000, 'x');
  ASSERT_TRUE(cache.store("kernel", "id", payload));
  const std::string file = cache.path("kernel", "id");
  const std::string good = read(file);
  const std::vector<std::string> bad = {
      good.substr(0, good.size() / 2),                                   // truncated
      good.substr(0, good.size() - 1),                                   // the checksum's newline lost
      "",                                                                // empty
      std::string(good).replace(good.size() / 2, 1, "y"),               // a payload byte changed
      std::string(good).replace(0, 7, "TESSERA"),                       // another format
      "garbage\n",
  };
  for (const std::string& b : bad) {
    write(file, b);
    EXPECT_EQ(cache.load("kernel", "id"), std::nullopt) << b.substr(0, 40);
  }
  EXPECT_EQ(cache.counters().corrupt, bad.size());
  // Another identity's entry at this identity's name (a hash collision): a miss.
  ASSERT_TRUE(cache.store("kernel", "other", payload));
  fs::copy_file(cache.path("kernel", "other"), file, fs::copy_options::overwrite_existing);
  EXPECT_EQ(cache.load("kernel", "id"), std::nullopt);
  // Rebuilt: stored again over the bad file, and good again.
  ASSERT_TRUE(cache.store("kernel", "id", payload));
  EXPECT_EQ(cache.load("kernel", "id"), payload);
}

TEST(KernelDiskCache, OffCacheNeitherReadsNorWrites) {
  KernelDiskCache cache;
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.store("kernel", "id", "x"));
  EXPECT_EQ(cache.load("kernel", "id"), std::nullopt);
}

TEST(KernelDiskCache, UnwritableDirectoryOnlyFailsTheStore) {
  KernelDiskCache cache("/proc/tessera-no-such-dir");
  EXPECT_FALSE(cache.store("kernel", "id", "x"));
  EXPECT_EQ(cache.counters().write_failures, 1u);
}

constexpr const char* kRegion =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = exp(%2) : f32[s0, s1]\noutputs %3\n";

Value ramp(Shape shape, float step) {
  Value v = make_tensor(DType::F32, std::move(shape));
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, step * static_cast<double>(i % 97));
  return v;
}

std::vector<uint8_t> bytes(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

// Runs the stored kernel of kRegion and compares with the interpreter's kernels.
void expect_runs_right(const std::shared_ptr<const StoredKernel>& k) {
  const Region r = parse_region(kRegion);
  const std::vector<Value> in = {ramp({7, 33}, 0.01f), ramp({33}, 0.03f)};
  const CpuRegionKernel rk(r, k->kernel, k->fn);
  auto out = rk.run(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(bytes((*out)[0]), bytes(run_region_reference(r, in)[0]));
}

TEST(KernelStore, SecondStoreOverTheCacheCompilesNothing) {
  TempDir dir;
  const Region r = parse_region(kRegion);
  {
    KernelStore first;
    first.configure(dir.path(), "");
    expect_runs_right(first.get(lower_region(r, "region")));
    EXPECT_EQ(first.stats().compiled, 1u);
    // The same kernel again: this process's, not even the disk's.
    first.get(lower_region(r, "region"));
    EXPECT_EQ(first.stats().compiled, 1u);
    EXPECT_EQ(first.stats().disk.hits, 0u);
  }
  KernelStore second;  // as a second run of the program would
  second.configure(dir.path(), "");
  auto k = second.get(lower_region(r, "region"));
  EXPECT_TRUE(k->from_disk);
  expect_runs_right(k);
  const KernelStore::Stats s = second.stats();
  EXPECT_EQ(s.compiled, 0u);
  EXPECT_EQ(s.from_disk, 1u);
  EXPECT_EQ(s.disk.hits, 1u);
}

TEST(KernelStore, CorruptObjectIsRebuiltAndReplaced) {
  TempDir dir;
  const Region r = parse_region(kRegion);
  {
    KernelStore first;
    first.configure(dir.path(), "");
    first.get(lower_region(r, "region"));
  }
  // Damage every entry: flip bytes in the middle of the object.
  for (const auto& e : fs::directory_iterator(dir.path())) {
    std::string s = read(e.path().string());
    for (size_t i = s.size() / 2; i < s.size() / 2 + 16; ++i) s[i] = static_cast<char>(~s[i]);
    write(e.path().string(), s);
  }
  {
    KernelStore second;
    second.configure(dir.path(), "");
    auto k = second.get(lower_region(r, "region"));
    EXPECT_FALSE(k->from_disk);
    expect_runs_right(k);
    EXPECT_EQ(second.stats().compiled, 1u);
    EXPECT_EQ(second.stats().disk.corrupt, 1u);
  }
  KernelStore third;  // the rebuilt entry is whole again
  third.configure(dir.path(), "");
  EXPECT_TRUE(third.get(lower_region(r, "region"))->from_disk);
  EXPECT_EQ(third.stats().compiled, 0u);
}

TEST(KernelStore, DumpWritesKernelIrLlvmIrCudaAndPtx) {
  TempDir dir;
  KernelStore store;
  int ptx_asked = 0;
  store.configure("", dir.path(), [&](const CudaKernelSource& src) {
    ++ptx_asked;
    return "// the PTX of " + src.entry + "\n";
  });
  const Region r = parse_region(kRegion);
  store.get(lower_region(r, "region"), r.str());
  int kir = 0, ll = 0, cu = 0, ptx = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string text = read(e.path().string());
    if (e.path().extension() == ".kir") {
      ++kir;
      EXPECT_NE(text.find("// %3 = exp(%2) : f32[s0, s1]"), std::string::npos) << text;
      EXPECT_NE(text.find("kernel @region"), std::string::npos) << text;
    } else if (e.path().extension() == ".ll") {
      ++ll;
      EXPECT_NE(text.find("define"), std::string::npos);
    } else if (e.path().extension() == ".cu") {
      ++cu;
      EXPECT_NE(text.find("// %3 = exp(%2) : f32[s0, s1]"), std::string::npos) << text;
      EXPECT_NE(text.find("TSR_KERNEL void TSR_BOUNDS("), std::string::npos) << text;
      EXPECT_NE(text.find("tsr_expf("), std::string::npos) << text;
    } else if (e.path().extension() == ".ptx") {
      ++ptx;
      EXPECT_EQ(text, "// the PTX of region\n");
    }
  }
  EXPECT_EQ(kir, 1);
  EXPECT_EQ(ll, 1);
  EXPECT_EQ(cu, 1);
  EXPECT_EQ(ptx, 1);
  EXPECT_EQ(ptx_asked, 1);
}

TEST(KernelTuner, CandidatesStartWithK2sChoiceAndTheChoiceIsKept) {
  TempDir dir;
  const Region r = parse_region(kRegion);
  const std::vector<int64_t> sym = {300, 40};  // short rows: flat layouts are tried
  const std::vector<TuneChoice> c = tune_candidates(r, sym);
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], TuneChoice{});
  bool flat = false;
  for (const TuneChoice& t : c) flat |= t.flat;
  EXPECT_TRUE(flat);
  // Row-wise tiles no longer than the row (40, rounded up to 48), but K2's.
  for (size_t i = 1; i < c.size(); ++i) {
    if (!c[i].flat) {
      EXPECT_LE(c[i].tile, 48) << c[i].str();
    }
  }
  // A short grid (flat tiles of 1024 over 300 x 40: 12 programs) is also
  // tried on every core; K2's (300 rows: the launcher's every core) is not.
  EXPECT_NE(std::find(c.begin(), c.end(), TuneChoice{1024, kEveryCore, true}), c.end());
  EXPECT_EQ(std::find(c.begin(), c.end(), TuneChoice{1024, kEveryCore, false}), c.end());
  const std::vector<std::optional<int64_t>> spec = {300, 40};
  KernelStore store;
  store.configure(dir.path(), "");
  const TuneOutcome first = tune_region(r, spec, sym, store);
  EXPECT_EQ(first.timings_us.size(), c.size());
  const TuneOutcome again = tune_region(r, spec, sym, store);
  EXPECT_TRUE(again.timings_us.empty());  // read back, not measured
  EXPECT_EQ(again.best, first.best);
  EXPECT_EQ(TuneChoice::parse(first.best.str()), first.best);
  EXPECT_EQ(TuneChoice::parse("tile=0 threads=1 flat=0"), std::nullopt);
  EXPECT_EQ(TuneChoice::parse("tile=64 threads=1"), std::nullopt);
}

}  // namespace
}  // namespace tessera::kir
