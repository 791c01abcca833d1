// CudaDriver on machines without a usable driver: every way of not having
// one is a state with a reason, never a crash or an exception.
#include "runtime/device/cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

// Built without the CUDA headers, device_selection_test checks that the
// driver says so; there is nothing else to test.
#ifndef TESSERA_NO_CUDA_HEADERS

namespace tessera::device {
namespace {

constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CudaDriver, MissingLibraryIsUnavailableAndNamesTheFile) {
  CudaDriver driver("/nonexistent/tessera-test/libcuda.so.1");
  EXPECT_FALSE(driver.available());
  EXPECT_NE(driver.why_unavailable().find("/nonexistent/tessera-test/libcuda.so.1 not found"), std::string::npos)
      << driver.why_unavailable();
  EXPECT_NE(driver.why_unavailable().find("no NVIDIA driver"), std::string::npos) << driver.why_unavailable();
  EXPECT_EQ(driver.library(), "");
  EXPECT_EQ(driver.version(), 0);
}

TEST(CudaDriver, AFileThatIsNotALibraryCannotBeLoaded) {
  // This very test's source exists but is no ELF file: "could not be loaded",
  // not "not found".
  const std::string path = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/runtime/device/cuda_driver_test.cpp";
  CudaDriver driver(path);
  EXPECT_FALSE(driver.available());
  EXPECT_NE(driver.why_unavailable().find(path + " could not be loaded (dlopen: "), std::string::npos)
      << driver.why_unavailable();
}

TEST(CudaDriver, TheToolkitsStubLibraryIsRecognized) {
  if (!std::filesystem::exists(kStub)) GTEST_SKIP() << kStub << " is absent (no CUDA toolkit here)";
  CudaDriver driver(kStub);
  EXPECT_FALSE(driver.available());
  EXPECT_EQ(driver.library(), kStub);
  EXPECT_NE(driver.why_unavailable().find("stub library"), std::string::npos) << driver.why_unavailable();
  EXPECT_NE(driver.why_unavailable().find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << driver.why_unavailable();
}

TEST(CudaDriver, LaterCandidatesAreTriedWhenTheFirstIsMissing) {
  if (!std::filesystem::exists(kStub)) GTEST_SKIP() << kStub << " is absent (no CUDA toolkit here)";
  CudaDriver driver(std::vector<std::string>{"/nonexistent/libcuda.so.1", kStub});
  EXPECT_EQ(driver.library(), kStub);
  EXPECT_NE(driver.why_unavailable().find("stub library"), std::string::npos) << driver.why_unavailable();
}

TEST(CudaDriver, EnvironmentVariableReplacesTheDefaultNames) {
  {
    ScopedEnv env("TESSERA_CUDA_DRIVER", "/opt/x/libcuda.so");
    EXPECT_EQ(CudaDriver::default_candidates(), std::vector<std::string>{"/opt/x/libcuda.so"});
  }
  ScopedEnv env("TESSERA_CUDA_DRIVER", nullptr);
  EXPECT_EQ(CudaDriver::default_candidates(), (std::vector<std::string>{"libcuda.so.1", "libcuda.so"}));
}

TEST(CudaDriver, VersionText) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12020), "12.2");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
}

TEST(CudaDriver, CheckThrowsDeviceErrorNamingTheCall) {
  const CudaDriver& driver = CudaDriver::get();
  EXPECT_NO_THROW(driver.check(CUDA_SUCCESS, "cuInit"));
  try {
    driver.check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(4096 bytes)");
    FAIL() << "check did not throw";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cuMemAlloc(4096 bytes): ", 0), 0u) << what;
    // A working driver names the error; one that cannot gives its number.
    if (driver.available()) EXPECT_NE(what.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << what;
    else EXPECT_NE(what.find("CUresult 2"), std::string::npos) << what;
  }
}

TEST(CudaDriver, ARealDriverResolvesEveryEntryPoint) {
  const CudaDriver& driver = CudaDriver::get();
  if (!driver.available()) GTEST_SKIP() << "no usable CUDA driver: " << driver.why_unavailable();
  EXPECT_GE(driver.version(), 11030);
#define CUDA_FN(name, pfn, version) EXPECT_NE(driver.name, nullptr) << #name;
#define CUDA_FN_OPT(name, pfn, needs)         \
  if (driver.version() >= (needs)) {          \
    EXPECT_NE(driver.name, nullptr) << #name; \
  }
#include "runtime/device/cuda_driver_api.def"
#undef CUDA_FN_OPT
#undef CUDA_FN
  int count = 0;
  driver.check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount");
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace tessera::device

#endif  // TESSERA_NO_CUDA_HEADERS
