// The JIT's fused calls on a GPU, end to end, on the host emulation of one
// (TESSERA_GPU_EMULATION=1 with --device=gpu: runtime/device/
// emulated_backend.h): the programs print what the interpreter prints, the
// calls run on the device once their kernels are built, a chain of fused
// calls keeps its tensors on the device (nothing uploaded but the host's
// inputs, each once until the host writes it), the host's reads copy
// elements back, and a region the device
// cannot run is counted with its reason and runs on the CPU; settled shapes
// get a K3 kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/kernel/cpu/kernel_calls.h"
#include "runtime/device/emulated_backend.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

std::string program(const std::string& name) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/runtime/programs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

// Runs `source` with the interpreter and with the JIT on the emulated GPU,
// and expects the same status and output.
class EmulatedGpu {
 public:
  explicit EmulatedGpu(const std::string& source) {
    ::setenv("TESSERA_GPU_EMULATION", "1", 1);
    const testing::Outcome ref = testing::run_script(source, nullptr, true);
    JitParams params;
    params.set("async=0");  // kernels built before the call goes on: the same calls on the device every run
    params.set("kcache=0");
    rt_ = std::make_unique<HotspotObserver>(params);
    rt_->set_device(device::select_device(device::DeviceChoice::Gpu));
    const testing::Outcome jit = testing::run_script(source, rt_.get(), true);
    ::unsetenv("TESSERA_GPU_EMULATION");
    EXPECT_EQ(jit.status, ref.status);
    EXPECT_EQ(jit.out, ref.out);
    EXPECT_EQ(jit.err, ref.err);
  }
  // The device the runtime installed (for as long as this object lives).
  device::GpuKernelDevice::Stats stats() const { return gpu().stats(); }
  std::string report() const { return gpu().report(); }

 private:
  const device::GpuKernelDevice& gpu() const {
    auto d = kir::KernelCalls::process().device();
    EXPECT_NE(d, nullptr);
    return *std::static_pointer_cast<device::GpuKernelDevice>(d);
  }
  std::unique_ptr<HotspotObserver> rt_;
};

TEST(GpuEmulation, AChainOfFusedCallsStaysOnTheDevice) {
  const std::string src = program("gpu_chain.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.launches, 10u) << g.report();
  EXPECT_GT(s.k3_launches, 0u) << g.report();  // the shape settles: a K3 kernel
  EXPECT_GT(s.resident_inputs, 10u) << g.report();  // y, from the call before
  EXPECT_GE(s.downloads, 2u) << g.report();         // the reads of y[7] and y[299]
  EXPECT_LT(s.downloads, s.launches) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
  EXPECT_GE(s.builds.built, 1u);
  EXPECT_NE(g.report().find("fused calls on the device"), std::string::npos);
}

// A host tensor read by every call is uploaded once and kept as a mirror;
// the host's writes to it (in the compiled loop) drop the mirror, and the
// next call uploads what was written: the output is the interpreter's.
TEST(GpuEmulation, AHostTensorIsUploadedOnceUntilTheHostWritesIt) {
  const EmulatedGpu g(program("gpu_host_writes.tsb"));
  const auto s = g.stats();
  EXPECT_GT(s.launches, 100u) << g.report();
  // x once, w once and again after each of its four writes (a call on the
  // CPU while a kernel was built uploads nothing).
  EXPECT_LE(s.uploads, 6u) << g.report();
  EXPECT_GE(s.uploads, 2u) << g.report();
  EXPECT_GE(s.resident_inputs, 2 * s.launches - s.uploads) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

TEST(GpuEmulation, RowKernelsProductsAndAttentionAgreeWithTheInterpreter) {
  const std::string src = program("gpu_rows_products_attention.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.launches, 0u) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

TEST(GpuEmulation, ARegionTheDeviceCannotRunIsCountedWithItsReason) {
  const std::string src = program("gpu_wide_attention.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.refused, 0u) << g.report();
  EXPECT_NE(s.first_refusal.find("value dim of 80"), std::string::npos) << s.first_refusal;
  EXPECT_NE(g.report().find("refused, the first because: attention with a value dim of 80"),
            std::string::npos)
      << g.report();
}

}  // namespace
}  // namespace tessera
