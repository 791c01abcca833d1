// The persistent kernel cache (kernel_disk_cache.h): entries round-trip;
// missing, truncated, altered and foreign entries are misses, never
// trusted. (The kernel runtime's store over it: tests/runtime/kernels.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "codegen/kernel/kernel_disk_cache.h"
#include "tests/support/test_files.h"


namespace tessera::kir {
namespace {

namespace fs = std::filesystem;

using testing::read_file;
using testing::TempDir;
using testing::write_file;

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
  const std::string good = read_file(file);
  const std::vector<std::string> bad = {
      good.substr(0, good.size() / 2),                                   // truncated
      good.substr(0, good.size() - 1),                                   // the checksum's newline lost
      "",                                                                // empty
      std::string(good).replace(good.size() / 2, 1, "y"),               // a payload byte changed
      std::string(good).replace(0, 7, "TESSERA"),                       // another format
      "garbage\n",
  };
  for (const std::string& b : bad) {
    write_file(file, b);
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

}  // namespace
}  // namespace tessera::kir
