// NVTX ranges (vm/core/nvtx_ranges.h). NVTX decides once per process
// whether a tool listens, so the two cases are two runs: NvtxWithoutTool in
// the plain environment (no library loaded, nothing named), NvtxWithTool
// with NVTX_INJECTION64_PATH naming the test double (tests/vm/core/
// nvtx_test_double.cpp) and TESSERA_NVTX_TEST_LOG its log, as ctest's
// vm/core/nvtx_ranges_with_tool runs it. Each skips in the other's run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "vm/core/nvtx_ranges.h"

namespace tessera {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "push 123 copy" -> "push copy": the thread's id varies.
std::string without_tid(const std::string& l) {
  if (l.rfind("push ", 0) != 0 && l.rfind("pop ", 0) != 0) return l;
  const size_t a = l.find(' '), b = l.find(' ', a + 1);
  return l.substr(0, a) + (b == std::string::npos ? "" : l.substr(b));
}

TEST(NvtxRanges, PhaseNamesAreTheFixedFive) {
  EXPECT_EQ(nvtx::phase_name(nvtx::Phase::Copy), "copy");
  EXPECT_EQ(nvtx::phase_name(nvtx::Phase::Mma), "mma");
  EXPECT_EQ(nvtx::phase_name(nvtx::Phase::Reduce), "reduce");
  EXPECT_EQ(nvtx::phase_name(nvtx::Phase::Comm), "comm");
  EXPECT_EQ(nvtx::phase_name(nvtx::Phase::Host), "host");
}

TEST(NvtxWithoutTool, NothingIsLoadedAndNoNameIsMade) {
  if (std::getenv("NVTX_INJECTION64_PATH")) GTEST_SKIP() << "a tool is attached in this run";
  // The double would write here if NVTX had loaded it some other way.
  const std::string log = testing::TempDir() + "nvtx_without_tool.log";
  std::remove(log.c_str());
  setenv("TESSERA_NVTX_TEST_LOG", log.c_str(), 1);
  EXPECT_FALSE(nvtx::attached());
  int named = 0;
  {
    const nvtx::Range phase(nvtx::Phase::Copy);
    const nvtx::Range call([&] {
      ++named;
      return std::string("kernel k0");
    });
  }
  EXPECT_EQ(named, 0);
  EXPECT_EQ(read_file("/proc/self/maps").find("nvtx_test_double"), std::string::npos);
  EXPECT_FALSE(std::ifstream(log).good());
}

TEST(NvtxWithTool, RangesReachTheToolInOrder) {
  const char* tool = std::getenv("NVTX_INJECTION64_PATH");
  const char* log = std::getenv("TESSERA_NVTX_TEST_LOG");
  if (!tool || !log) GTEST_SKIP() << "no tool in this run (ctest's vm/core/nvtx_ranges_with_tool attaches one)";
  std::remove(log);  // NVTX loads the tool, which opens the log, at the first range
  ASSERT_TRUE(nvtx::attached());
  EXPECT_NE(read_file("/proc/self/maps").find("nvtx_test_double"), std::string::npos);
  {
    const nvtx::Range call([] { return std::string("trace 3 (x.tsb:12)"); });
    const nvtx::Range copy(nvtx::Phase::Copy);
    const nvtx::Range skipped(nvtx::Phase::Host, false);
  }
  { const nvtx::Range mma(nvtx::Phase::Mma); }
  std::vector<std::string> got;
  for (const std::string& l : lines(read_file(log))) got.push_back(without_tid(l));
  const std::vector<std::string> want = {"init",          "domain Tessera", "string copy", "string mma",
                                         "string reduce", "string comm",    "string host", "push trace 3 (x.tsb:12)",
                                         "push copy",     "pop",            "pop",         "push mma",
                                         "pop"};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace tessera
