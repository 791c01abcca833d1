// NVRTC compiles CUDA C++ to cubin and PTX without a GPU: these tests run
// wherever the CUDA toolkit is installed and skip (saying why) elsewhere.
#include "runtime/device/nvrtc_library.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

#include "runtime/device/ptxas_report.h"

// Built without the CUDA headers, device_selection_test checks that NVRTC
// says so; there is nothing else to test.
#ifndef TESSERA_NO_CUDA_HEADERS

namespace tessera::device {
namespace {

constexpr const char* kAxpy = R"(extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

#define SKIP_WITHOUT_NVRTC(lib) \
  if (!(lib).available()) GTEST_SKIP() << "NVRTC not available: " << (lib).why_unavailable()

TEST(NvrtcLibrary, ReportsAVersionAndTheArchitecturesItTargets) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  EXPECT_GE(nvrtc.version().first, 11);
  const std::vector<int>& archs = nvrtc.supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
}

TEST(NvrtcLibrary, CompilesToCubinForEachArchitectureWithoutSpills) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  for (const std::string arch : {"sm_80", "sm_90", "sm_90a"}) {
    SCOPED_TRACE(arch);
    NvrtcOutput out = nvrtc.compile(kAxpy, "axpy.cu", {}, {"-arch=" + arch, "-Xptxas=-v"});
    ASSERT_TRUE(out.ok) << out.log;
    EXPECT_GT(out.cubin.size(), 64u);
    EXPECT_EQ(out.cubin.substr(0, 4), "\x7f" "ELF");  // a cubin is an ELF file
    EXPECT_TRUE(out.ptx.empty());
    EXPECT_GT(out.ms, 0.0);
    EXPECT_NE(out.log.find("for '" + arch + "'"), std::string::npos) << out.log;
    std::optional<PtxasReport> report = parse_ptxas_report(out.log, "axpy");
    ASSERT_TRUE(report.has_value()) << out.log;
    EXPECT_GT(report->registers, 0);
    EXPECT_EQ(report->spill_stores, 0);
    EXPECT_EQ(report->spill_loads, 0);
    EXPECT_EQ(report->shared_bytes, 0);
  }
}

// A kernel no other test compiles: with the NVIDIA driver present, NVRTC
// writes no ptxas lines for a program it compiled before in the process
// (seen on an H200 with NVRTC 13.0; docs/gpu.md), and axpy for sm_90 is.
constexpr const char* kScale = R"(extern "C" __global__ void scale(float a, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}
)";

TEST(NvrtcLibrary, LongFormOfThePtxasOptionWorksToo) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  NvrtcOutput out = nvrtc.compile(kScale, "scale.cu", {}, {"-arch=sm_90", "--ptxas-options=-v"});
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(parse_ptxas_report(out.log, "scale").has_value()) << out.log;
}

TEST(NvrtcLibrary, AVirtualArchitectureGivesPtx) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  NvrtcOutput out = nvrtc.compile(kAxpy, "axpy.cu", {}, {"-arch=compute_90"});
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(out.cubin.empty());
  EXPECT_NE(out.ptx.find(".target sm_90"), std::string::npos) << out.ptx.substr(0, 400);
  EXPECT_NE(out.ptx.find(".entry axpy"), std::string::npos);
  EXPECT_EQ(out.ptx.find('\0'), std::string::npos);  // the terminating NUL is not part of it
}

TEST(NvrtcLibrary, InMemoryHeadersAreIncluded) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  const std::string source =
      "#include \"scale.h\"\n"
      "extern \"C\" __global__ void scaled(float* y) { y[threadIdx.x] *= kScale; }\n";
  NvrtcOutput out = nvrtc.compile(source, "scaled.cu", {{"scale.h", "constexpr float kScale = 3.0f;\n"}},
                                  {"-arch=compute_80"});
  ASSERT_TRUE(out.ok) << out.log;
  // The constant came from the header: 3.0f is 0x40400000.
  EXPECT_NE(out.ptx.find("0f40400000"), std::string::npos) << out.ptx;
  // Without the header the same source does not compile.
  NvrtcOutput missing = nvrtc.compile(source, "scaled.cu", {}, {"-arch=compute_80"});
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.log.find("scale.h"), std::string::npos) << missing.log;
}

TEST(NvrtcLibrary, ASyntaxErrorIsALogNotAnException) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  const std::string source = "extern \"C\" __global__ void k(float* y) {\n  y[0] = 1.0f\n}\n";
  NvrtcOutput out = nvrtc.compile(source, "bad_kernel.cu", {}, {"-arch=sm_90"});
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.cubin.empty());
  EXPECT_TRUE(out.ptx.empty());
  // NVRTC cites the line where it noticed the missing ';' (the closing brace).
  EXPECT_NE(out.log.find("bad_kernel.cu(3): error"), std::string::npos) << out.log;
}

TEST(NvrtcLibrary, ARejectedOptionIsALogNotAnException) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  NvrtcOutput out = nvrtc.compile(kAxpy, "axpy.cu", {}, {"--no-such-option"});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("--no-such-option"), std::string::npos) << out.log;
}

TEST(NvrtcLibrary, ThreadsCompileAtTheSameTime) {
  const NvrtcLibrary& nvrtc = NvrtcLibrary::get();
  SKIP_WITHOUT_NVRTC(nvrtc);
  NvrtcOutput a, b;
  std::thread t1([&] { a = nvrtc.compile(kAxpy, "a.cu", {}, {"-arch=sm_80", "-Xptxas=-v"}); });
  std::thread t2([&] { b = nvrtc.compile(kAxpy, "b.cu", {}, {"-arch=sm_90", "-Xptxas=-v"}); });
  t1.join();
  t2.join();
  ASSERT_TRUE(a.ok) << a.log;
  ASSERT_TRUE(b.ok) << b.log;
  EXPECT_NE(a.log.find("for 'sm_80'"), std::string::npos) << a.log;
  EXPECT_NE(b.log.find("for 'sm_90'"), std::string::npos) << b.log;
}

TEST(NvrtcLibrary, MissingLibraryIsUnavailableAndCompileThrows) {
  NvrtcLibrary nvrtc("/nonexistent/tessera-test/libnvrtc.so.13");
  EXPECT_FALSE(nvrtc.available());
  EXPECT_NE(nvrtc.why_unavailable().find("/nonexistent/tessera-test/libnvrtc.so.13 not found"), std::string::npos)
      << nvrtc.why_unavailable();
  EXPECT_NE(nvrtc.why_unavailable().find("TESSERA_NVRTC_LIBRARY"), std::string::npos) << nvrtc.why_unavailable();
  EXPECT_EQ(nvrtc.version(), (std::pair<int, int>{0, 0}));
  EXPECT_TRUE(nvrtc.supported_archs().empty());
  try {
    nvrtc.compile(kAxpy, "axpy.cu", {}, {"-arch=sm_90"});
    FAIL() << "compile did not throw";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC is not available: "), std::string::npos) << e.what();
  }
}

TEST(NvrtcLibrary, ALibraryWithoutNvrtcsSymbolsIsUnavailable) {
  // libdl / libc are loadable but are no NVRTC.
  NvrtcLibrary nvrtc("libc.so.6");
  EXPECT_FALSE(nvrtc.available());
  EXPECT_NE(nvrtc.why_unavailable().find("libc.so.6 has no nvrtcVersion"), std::string::npos)
      << nvrtc.why_unavailable();
}

}  // namespace
}  // namespace tessera::device

#endif  // TESSERA_NO_CUDA_HEADERS
