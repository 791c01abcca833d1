// The generated kernels on a real GPU: every kernel of the test cases
// (tests/codegen/kernel/cuda_test_cases.h), K2 and K3 for every input set,
// compiled by NVRTC for the device's architecture, loaded with the driver,
// its inputs uploaded into blocks of the caching allocator, its outputs
// poisoned, launched on the runtime's stream, read back and compared with
// the interpreter's kernels (tolerances of cuda_test_launch.h). Skips, saying
// why, where there is no usable GPU (the host emulation test runs the same
// kernels there).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "runtime/device/cuda_kernel_compiler.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/gpu_stream.h"
#include "tests/codegen/kernel/cuda_test_launch.h"

namespace tessera::device {
namespace {

TEST(CudaDevice, EveryKernelKindComputesWhatTheInterpreterComputes) {
  const DeviceSelection sel = select_device(DeviceChoice::Auto);
  if (!sel.gpu) GTEST_SKIP() << "no usable GPU: " << sel.reason;
  GpuStream stream(*sel.gpu_device);
  CudaMemory memory(stream);
  DeviceAllocator alloc(memory);
  const CudaKernelCompiler compiler;
  int launched = 0;
  for (const kir::testing::CudaCase& c : kir::testing::cuda_cases()) {
    for (size_t set = 0; set < c.inputs.size(); ++set) {
      const auto sym = bind_symbols(c.region, c.inputs[set]);
      ASSERT_TRUE(sym.has_value()) << c.name;
      for (bool k3 : {false, true}) {
        const std::string what = c.name + " set " + std::to_string(set) + (k3 ? " K3" : " K2");
        const kir::Kernel k = kir::testing::lower_case(c, c.name, k3 ? &*sym : nullptr);
        const kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "tsr_" + c.name, kir::cuda_target_for(c.region));
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
        ++launched;
      }
    }
  }
  EXPECT_GT(launched, 0);
  // The blocks went back to the cache and were reused by later kernels.
  EXPECT_GT(alloc.stats().reuses, 0u);
  EXPECT_EQ(alloc.stats().in_use_bytes, 0u);
}

}  // namespace
}  // namespace tessera::device
