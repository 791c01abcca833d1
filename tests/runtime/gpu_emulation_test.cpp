// The JIT's fused calls on a GPU, end to end, on the host emulation of one
// (TESSERA_GPU_EMULATION=1 with --device=gpu: runtime/device/
// emulated_backend.h): the programs print what the interpreter prints, the
// calls run on the device once their kernels are built, a chain of fused
// calls keeps its tensors on the device (nothing uploaded but the host's
// inputs, each once until the host writes it), the host's reads copy
// elements back, and a region the device
// cannot run is counted with its reason and runs on the CPU; settled shapes
// get a K3 kernel; half-precision linear layers run as products with their
// bias epilogue.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
  // What the VM's GPU target did.
  struct Stats {
    uint64_t launches = 0, k3_launches = 0, refused = 0, built = 0;
    kernels::GpuTarget::Traffic traffic;
    std::string first_refusal;
  };
  Stats stats() const {
    const kernels::KernelRuntime& k = rt_->kernels();
    const kernels::TargetCounters& c = k.counters("gpu");
    Stats s;
    s.launches = c.k2_runs + c.k3_runs;
    s.k3_launches = c.k3_runs;
    s.refused = c.refused;
    s.built = k.store().stats("gpu").compiled + k.store().stats("gpu").from_disk;
    s.traffic = gpu().traffic();
    s.first_refusal = k.first_failure("gpu");
    return s;
  }
  std::string report() const { return gpu().report(rt_->kernels()); }

 private:
  const kernels::GpuTarget& gpu() const {
    auto d = rt_->kernels().installed_device();
    EXPECT_NE(d, nullptr);
    return *std::static_pointer_cast<kernels::GpuTarget>(d);
  }
  std::unique_ptr<HotspotObserver> rt_;
};

TEST(GpuEmulation, AChainOfFusedCallsStaysOnTheDevice) {
  const std::string src = program("gpu_chain.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.launches, 10u) << g.report();
  EXPECT_GT(s.k3_launches, 0u) << g.report();  // the shape settles: a K3 kernel
  EXPECT_GT(s.traffic.resident_inputs, 10u) << g.report();  // y, from the call before
  EXPECT_GE(s.traffic.downloads, 2u) << g.report();         // the reads of y[7] and y[299]
  EXPECT_LT(s.traffic.downloads, s.launches) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
  EXPECT_GE(s.built, 1u);
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
  EXPECT_LE(s.traffic.uploads, 6u) << g.report();
  EXPECT_GE(s.traffic.uploads, 2u) << g.report();
  EXPECT_GE(s.traffic.resident_inputs, 2 * s.launches - s.traffic.uploads) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

TEST(GpuEmulation, RowKernelsProductsAndAttentionAgreeWithTheInterpreter) {
  const std::string src = program("gpu_rows_products_attention.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.launches, 0u) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

// f16 and bf16 linear layers (relu(x @ w + b) and x @ w + b), which a GPU
// refused before products of half precision ran on cuBLASLt: every call on
// the device, each one product with its bias epilogue (gemm_epilogue.h; the
// emulation computes it with the interpreter's kernels), none refused, the
// interpreter's output.
TEST(GpuEmulation, HalfPrecisionLinearLayersRunAsProductsWithTheirBiasEpilogue) {
  const EmulatedGpu g(program("gpu_half_linear.tsb"));
  const auto s = g.stats();
  EXPECT_GT(s.launches, 100u) << g.report();
  EXPECT_EQ(s.traffic.product_epilogues, s.launches) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
  EXPECT_NE(g.report().find(", 0 refused)"), std::string::npos) << g.report();
}

// f16 and bf16 attention (head dims 64, 80, 128; causal and not) runs on
// the device's tensor-core kernel, K2 and then tuned K3, within the
// half-precision tolerance of the f32 attention (the program checks it and
// prints the same as the interpreter), nothing refused.
TEST(GpuEmulation, HalfPrecisionAttentionRunsOnTheTensorCoreKernel) {
  const EmulatedGpu g(program("gpu_half_attention.tsb"));
  const auto s = g.stats();
  EXPECT_GT(s.launches, 100u) << g.report();
  EXPECT_GT(s.k3_launches, 0u) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

// Attention whose shapes settle (K3) and then change twice: the calls of
// each new shape run on K2 again (more K2 calls than one phase's before
// its K3), and the results stay within the tolerance (the program checks).
TEST(GpuEmulation, AttentionWhoseShapesChangeGoesBackToK2) {
  const EmulatedGpu g(program("gpu_attention_shapes.tsb"));
  const auto s = g.stats();
  EXPECT_GE(s.launches, 200u) << g.report();
  EXPECT_GT(s.k3_launches, 0u) << g.report();
  EXPECT_GT(s.launches - s.k3_launches, 32u) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

TEST(GpuEmulation, ARegionTheDeviceCannotRunIsCountedWithItsReason) {
  const std::string src = program("gpu_mixed_product.tsb");
  const EmulatedGpu g(src);
  const auto s = g.stats();
  EXPECT_GT(s.refused, 0u) << g.report();
  EXPECT_NE(s.first_refusal.find("a matrix product of f16 by f32"), std::string::npos) << s.first_refusal;
  EXPECT_NE(g.report().find("refused, the first because: a matrix product of f16 by f32"), std::string::npos)
      << g.report();
}

// Grouped-query attention (8 query heads over 2 key/value heads), f32 and
// f16, runs on the device's attention kernel, which reads head h / 4.
TEST(GpuEmulation, GroupedQueryAttentionRunsOnTheDevice) {
  const EmulatedGpu g(program("gpu_grouped_attention.tsb"));
  const auto s = g.stats();
  EXPECT_GT(s.launches, 100u) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
}

// Attention followed by elementwise consumers (a scale, a bias along the
// value dim, gelu, a per-query gate, a cast), in a loop inside another:
// every call is the attention kernel alone, which computes the consumers
// on its output tile (lower_region.h: attention_writes_outputs), f32, f16
// and bf16, causal and not, within tolerance of the interpreter's f32
// attention with the same epilogue (the program checks).
TEST(GpuEmulation, AttentionConsumersAreFusedIntoItsWrite) {
  const EmulatedGpu g(program("gpu_attention_epilogue.tsb"));
  const auto s = g.stats();
  EXPECT_GT(s.launches, 100u) << g.report();
  EXPECT_GT(s.k3_launches, 0u) << g.report();
  EXPECT_EQ(s.traffic.attention_epilogues, s.launches) << g.report();
  EXPECT_EQ(s.refused, 0u) << g.report();
  EXPECT_NE(g.report().find("calls computed by their attention kernel alone"), std::string::npos) << g.report();
}

// A kernel that faults on the device (TESSERA_TEST_GPU_FAULT=1 makes every
// launch on the emulation fault) is the script's runtime error, not a
// fallback to the CPU: the message names the crash capture, whose
// directory has the region, the kernel's IR and CUDA C++, the launch and
// the recent launches.
TEST(GpuEmulation, AKernelThatFaultsIsARuntimeErrorWithACrashCapture) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tessera-crash-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ::setenv("TESSERA_GPU_EMULATION", "1", 1);
  ::setenv("TESSERA_TEST_GPU_FAULT", "1", 1);
  ::setenv("TESSERA_CRASH_DIR", root.c_str(), 1);
  JitParams params;
  params.set("async=0");
  params.set("kcache=0");
  HotspotObserver rt(params);
  rt.set_device(device::select_device(device::DeviceChoice::Gpu));
  const testing::Outcome o = testing::run_script(program("gpu_chain.tsb"), &rt, true);
  ::unsetenv("TESSERA_TEST_GPU_FAULT");
  ::unsetenv("TESSERA_CRASH_DIR");
  ::unsetenv("TESSERA_GPU_EMULATION");
  EXPECT_EQ(o.status, RunStatus::RuntimeError);
  EXPECT_NE(o.err.find("a kernel of a fused call faulted on the GPU"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("TESSERA_TEST_GPU_FAULT"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(root.string()), std::string::npos) << o.err;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  ASSERT_EQ(dirs.size(), 1u);
  for (const char* f :
       {"error.txt", "region.txt", "region.kir", "region.cu", "launch.json", "recent-launches.txt", "recent-events.txt"})
    EXPECT_TRUE(fs::is_regular_file(dirs[0] / f)) << f;
  std::ifstream launch(dirs[0] / "launch.json");
  std::stringstream text;
  text << launch.rdbuf();
  for (const char* key : {"\"device\"", "\"entry\"", "\"threads\"", "\"grid\"", "\"inputs\"", "\"dims\""})
    EXPECT_NE(text.str().find(key), std::string::npos) << key << "\n" << text.str();
  std::ifstream recent(dirs[0] / "recent-launches.txt");
  std::string first;
  EXPECT_TRUE(std::getline(recent, first));
  EXPECT_NE(first.find("blocks"), std::string::npos) << first;
  // The JIT's last events: the K2 kernel the faulting call ran was compiled.
  std::ifstream events(dirs[0] / "recent-events.txt");
  std::stringstream event_text;
  event_text << events.rdbuf();
  EXPECT_NE(event_text.str().find("kernel.compiled"), std::string::npos) << event_text.str();
  fs::remove_all(root);
}

}  // namespace
}  // namespace tessera
