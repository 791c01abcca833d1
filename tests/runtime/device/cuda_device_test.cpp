// The generated kernels on a real GPU: every kernel of the test cases
// (tests/codegen/kernel/cuda_test_cases.h), K2 and K3 for every input set,
// compiled by NVRTC for the device's architecture, loaded with the driver,
// its inputs uploaded into blocks of the caching allocator, its outputs
// poisoned, launched on the runtime's stream, read back and compared with
// the interpreter's kernels (tolerances of cuda_test_launch.h). Skips, saying
// why, where there is no usable GPU (the host emulation test runs the same
// kernels there). Then every K3 variant of the attention cases that the
// GPU's tuner may choose, the wgmma one on sm_90a included.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/cuda_backend.h"
#include "runtime/device/cuda_kernel_compiler.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/gpu_stream.h"
#include "tests/runtime/device/attention_variant_kernel.h"
#include "tests/codegen/kernel/cuda_test_launch.h"

namespace tessera::device {
namespace {

// The device, its stream and the caching allocator the kernels' blocks come from.
struct Device {
  explicit Device(const DeviceSelection& sel) : sel(sel), stream(*sel.gpu_device), memory(stream), alloc(memory) {}
  const DeviceSelection& sel;
  GpuStream stream;
  CudaMemory memory;
  DeviceAllocator alloc;
  const CudaKernelCompiler compiler;

  // Compiles `src` (kernel `k` of case c) for the device, runs it on input
  // set `set` with its outputs poisoned, and compares them with the
  // interpreter's.
  void expect_matches_the_interpreter(const kir::testing::CudaCase& c, size_t set, const kir::Kernel& k,
                                      const kir::CudaKernelSource& src, const std::string& what) {
    const CudaCompiled bin = compiler.compile(src, sel.arch);
    ASSERT_TRUE(bin.ok) << what << "\n" << bin.log;
    const GpuModule module(*sel.gpu_device, bin.cubin.empty() ? bin.ptx : bin.cubin, src.entry, src.shared_bytes);
    kir::testing::CaseLaunch launch(c, set, k, src);
    std::vector<DevicePtr> blocks(launch.values.size(), 0);
    for (size_t i = 0; i < launch.values.size(); ++i) {
      if (!launch.values[i].is_tensor()) continue;
      TensorObj& t = *launch.values[i].as_tensor();
      blocks[i] = alloc.allocate(t.nbytes());
      if (launch.output[i]) std::memset(t.data(), 0xff, t.nbytes());  // poison: every element must be written
      stream.upload(blocks[i], t.data(), t.nbytes());
      launch.ptrs[i] = reinterpret_cast<void*>(blocks[i]);
    }
    launch.encode_args(src, [&](const kir::TensorMapRequest& rq, kir::TensorMapBytes& m) {
      return encode_tensor_map(sel.gpu_device->driver(), rq, m);
    });
    module.launch(stream, launch.programs, src.threads, launch.args);
    for (size_t i = 0; i < launch.values.size(); ++i) {
      if (!blocks[i]) continue;
      if (launch.output[i]) stream.download(launch.values[i].as_tensor()->data(), blocks[i], launch.values[i].as_tensor()->nbytes());
      alloc.free(blocks[i]);
    }
    const std::vector<Value> want = run_region_reference(c.region, c.inputs[set]);
    const std::vector<Value> got = launch.outputs();
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) kir::testing::expect_close(got[o], want[o], what + " output " + std::to_string(o));
  }
};

TEST(CudaDevice, EveryKernelKindComputesWhatTheInterpreterComputes) {
  const DeviceSelection sel = select_device(DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  Device dev(sel);
  int launched = 0;
  for (const kir::testing::CudaCase& c : kir::testing::cuda_cases()) {
    for (size_t set = 0; set < c.inputs.size(); ++set) {
      const auto sym = bind_symbols(c.region, c.inputs[set]);
      ASSERT_TRUE(sym.has_value()) << c.name;
      for (bool k3 : {false, true}) {
        const std::string what = c.name + " set " + std::to_string(set) + (k3 ? " K3" : " K2");
        const kir::Kernel k = kir::testing::lower_case(c, c.name, k3 ? &*sym : nullptr);
        const kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "tsr_" + c.name, kir::cuda_target_for(c.region));
        dev.expect_matches_the_interpreter(c, set, k, src, what);
        ++launched;
      }
    }
  }
  EXPECT_GT(launched, 0);
  // The blocks went back to the cache and were reused by later kernels.
  EXPECT_GT(dev.alloc.stats().reuses, 0u);
  EXPECT_EQ(dev.alloc.stats().in_use_bytes, 0u);
}

// Every K3 variant the GPU's tuner may choose for the attention cases
// (kernels::gpu_variants for this device: on sm_90a the wgmma one too),
// at each case's last input set, on the device against the interpreter: a variant
// the tuner keeps because it is fastest computes what the others compute.
TEST(CudaDevice, EveryAttentionVariantComputesWhatTheInterpreterComputes) {
  const DeviceSelection sel = select_device(DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  Device dev(sel);
  int launched = 0;
  for (const kir::testing::CudaCase& c : kir::testing::cuda_cases()) {
    if (!c.attention) continue;
    {
      const size_t set = c.inputs.size() - 1;  // the widest dims (head dims 128 and 256 on the tensor cores)
      const auto sym = bind_symbols(c.region, c.inputs[set]);
      ASSERT_TRUE(sym.has_value()) << c.name;
      const kernels::DimSpec spec(sym->begin(), sym->end());
      for (const kernels::KernelVariant& v : kernels::gpu_variants(c.region, spec, sel.arch == "sm_90a")) {
        const auto built = testing::attention_variant_kernel(c, spec, v);
        if (!built) continue;
        const auto& [k, src] = *built;
        dev.expect_matches_the_interpreter(c, set, k, src, c.name + " set " + std::to_string(set) + " K3 " + v.str());
        ++launched;
      }
    }
  }
  EXPECT_GT(launched, 0);
  EXPECT_EQ(dev.alloc.stats().in_use_bytes, 0u);
}

}  // namespace
}  // namespace tessera::device
