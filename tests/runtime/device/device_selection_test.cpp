// Device selection: what --device=auto|cpu|gpu chooses, and why, with the
// process's libraries and with ones the test points at (the toolkit's stub
// driver, a missing NVRTC).
#include "runtime/device/device_selection.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/device/cuda_driver.h"
#include "runtime/device/nvrtc_library.h"
#ifndef TESSERA_NO_CUDA_HEADERS
#include "runtime/device/gpu_device.h"
#endif

namespace tessera::device {
namespace {

constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

// Libraries that fail the test when select_device asks for them.
DeviceLibraries untouchable() {
  return {[]() -> const CudaDriver& {
            ADD_FAILURE() << "select_device asked for the CUDA driver";
            return CudaDriver::get();
          },
          []() -> const NvrtcLibrary& {
            ADD_FAILURE() << "select_device asked for NVRTC";
            return NvrtcLibrary::get();
          }};
}

TEST(DeviceChoice, NamesRoundTripThroughTheTable) {
  EXPECT_EQ(device_choice_names(), (std::vector<std::string>{"auto", "cpu", "gpu"}));
  for (const std::string& name : device_choice_names()) {
    std::optional<DeviceChoice> choice = parse_device_choice(name);
    ASSERT_TRUE(choice.has_value()) << name;
    EXPECT_EQ(device_choice_name(*choice), name);
  }
  EXPECT_EQ(parse_device_choice("gpu"), DeviceChoice::Gpu);
  EXPECT_FALSE(parse_device_choice("GPU").has_value());
  EXPECT_FALSE(parse_device_choice("cuda").has_value());
  EXPECT_FALSE(parse_device_choice("").has_value());
  const std::string help = describe_device_choices();
  EXPECT_NE(help.find("  auto "), std::string::npos) << help;
  EXPECT_NE(help.find("  gpu "), std::string::npos) << help;
}

TEST(DeviceSelection, ArchitectureNames) {
  EXPECT_EQ(gpu_arch(8, 0), "sm_80");
  EXPECT_EQ(gpu_arch(8, 6), "sm_86");
  EXPECT_EQ(gpu_arch(8, 9), "sm_89");
  EXPECT_EQ(gpu_arch(9, 0), "sm_90a");
  EXPECT_EQ(gpu_arch(10, 0), "sm_100");
  EXPECT_EQ(gpu_arch(12, 0), "sm_120");
}

TEST(DeviceSelection, CpuNeverAsksForTheDriver) {
  DeviceSelection sel = select_device(DeviceChoice::Cpu, untouchable());
  EXPECT_FALSE(sel.gpu);
  EXPECT_EQ(sel.name, "cpu");
  EXPECT_EQ(sel.reason, "--device=cpu");
  EXPECT_EQ(sel.gpu_device, nullptr);
  EXPECT_EQ(sel.describe(), "cpu (--device=cpu)");
}

TEST(DeviceSelection, WithoutAGpuAutoChoosesTheCpuAndSaysWhy) {
  const CudaDriver& driver = CudaDriver::get();
  if (driver.available()) GTEST_SKIP() << "this machine has a usable CUDA driver (" << driver.library() << ")";
  DeviceSelection sel = select_device(DeviceChoice::Auto);
  EXPECT_FALSE(sel.gpu);
  EXPECT_EQ(sel.reason, driver.why_unavailable());
  EXPECT_FALSE(sel.reason.empty());
  EXPECT_EQ(sel.describe().rfind("cpu (auto: ", 0), 0u) << sel.describe();
}

TEST(DeviceSelection, WithoutAGpuGpuIsAnError) {
  const CudaDriver& driver = CudaDriver::get();
  if (driver.available()) GTEST_SKIP() << "this machine has a usable CUDA driver (" << driver.library() << ")";
  try {
    select_device(DeviceChoice::Gpu);
    FAIL() << "select_device(Gpu) did not throw";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "--device=gpu: no usable GPU: " + driver.why_unavailable());
  }
}

#ifdef TESSERA_NO_CUDA_HEADERS
TEST(DeviceSelection, WithoutTheCudaHeadersNothingIsAvailable) {
  EXPECT_FALSE(CudaDriver::get().available());
  EXPECT_NE(CudaDriver::get().why_unavailable().find("without the CUDA headers"), std::string::npos);
  EXPECT_FALSE(NvrtcLibrary::get().available());
  EXPECT_NE(NvrtcLibrary::get().why_unavailable().find("without the CUDA headers"), std::string::npos);
  EXPECT_THROW(select_device(DeviceChoice::Gpu), DeviceError);
}
#else
TEST(DeviceSelection, AutoFallsBackToTheCpuWithTheStubDriversReason) {
  if (!std::filesystem::exists(kStub)) GTEST_SKIP() << kStub << " is absent (no CUDA toolkit here)";
  CudaDriver stub(kStub);
  bool asked_for_nvrtc = false;
  DeviceLibraries libraries{[&]() -> const CudaDriver& { return stub; },
                            [&]() -> const NvrtcLibrary& {
                              asked_for_nvrtc = true;
                              return NvrtcLibrary::get();
                            }};
  DeviceSelection sel = select_device(DeviceChoice::Auto, libraries);
  EXPECT_FALSE(sel.gpu);
  EXPECT_EQ(sel.name, "cpu");
  EXPECT_EQ(sel.reason, stub.why_unavailable());
  EXPECT_EQ(sel.describe(), "cpu (auto: " + stub.why_unavailable() + ")");
  EXPECT_FALSE(asked_for_nvrtc);  // no GPU, so no kernels to compile
}

TEST(DeviceSelection, GpuWithTheStubDriverThrowsWithTheReason) {
  if (!std::filesystem::exists(kStub)) GTEST_SKIP() << kStub << " is absent (no CUDA toolkit here)";
  CudaDriver stub(kStub);
  DeviceLibraries libraries{[&]() -> const CudaDriver& { return stub; },
                            []() -> const NvrtcLibrary& { return NvrtcLibrary::get(); }};
  try {
    select_device(DeviceChoice::Gpu, libraries);
    FAIL() << "select_device(Gpu) did not throw";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "--device=gpu: no usable GPU: " + stub.why_unavailable());
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << e.what();
  }
}

TEST(DeviceSelection, AMissingNvrtcMakesTheGpuUnusable) {
  const CudaDriver& driver = CudaDriver::get();
  if (!driver.available()) GTEST_SKIP() << "no usable CUDA driver: " << driver.why_unavailable();
  NvrtcLibrary missing("/nonexistent/libnvrtc.so.13");
  DeviceLibraries libraries{[&]() -> const CudaDriver& { return driver; },
                            [&]() -> const NvrtcLibrary& { return missing; }};
  DeviceSelection sel = select_device(DeviceChoice::Auto, libraries);
  EXPECT_FALSE(sel.gpu);
  EXPECT_NE(sel.reason.find("cannot be compiled: /nonexistent/libnvrtc.so.13 not found"), std::string::npos)
      << sel.reason;
}

TEST(DeviceSelection, ARealGpuIsSelectedWithItsArchitecture) {
  const CudaDriver& driver = CudaDriver::get();
  if (!driver.available()) GTEST_SKIP() << "no usable CUDA driver: " << driver.why_unavailable();
  if (!NvrtcLibrary::get().available()) GTEST_SKIP() << "no NVRTC: " << NvrtcLibrary::get().why_unavailable();
  DeviceSelection sel = select_device(DeviceChoice::Gpu);
  ASSERT_TRUE(sel.gpu) << sel.reason;
  EXPECT_NE(sel.name, "cpu");
  EXPECT_GE(sel.sm_major, 7);
  EXPECT_EQ(sel.arch, gpu_arch(sel.sm_major, sel.sm_minor));
  EXPECT_GT(sel.memory_bytes, 0u);
  ASSERT_NE(sel.gpu_device, nullptr);
  // The primary context is retained on first use, once.
  CUcontext context = sel.gpu_device->context();
  EXPECT_NE(context, nullptr);
  EXPECT_EQ(sel.gpu_device->context(), context);
  sel.gpu_device->make_current();
  // A kernel NVRTC compiled for this GPU loads into that context.
  NvrtcOutput out = NvrtcLibrary::get().compile("extern \"C\" __global__ void nop() {}\n", "nop.cu", {},
                                                {"-arch=" + sel.arch});
  ASSERT_TRUE(out.ok) << out.log;
  CUmodule module = nullptr;
  driver.check(driver.cuModuleLoadData(&module, out.cubin.data()), "cuModuleLoadData");
  CUfunction fn = nullptr;
  driver.check(driver.cuModuleGetFunction(&fn, module, "nop"), "cuModuleGetFunction");
  driver.check(driver.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "cuLaunchKernel");
  driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  driver.check(driver.cuModuleUnload(module), "cuModuleUnload");
  // Auto picks the same GPU.
  EXPECT_EQ(select_device(DeviceChoice::Auto).name, sel.name);
}
#endif

}  // namespace
}  // namespace tessera::device
