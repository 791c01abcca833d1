// cuBLASLt: loaded with dlopen (no GPU needed for that), a missing library
// said clearly; on a GPU, row-major f32 products (plain, batched, a batch
// broadcast of B, an empty inner dim) against the interpreter's matmul, and
// a fused region's product by cuBLASLt followed by its generated epilogue.
#include <gtest/gtest.h>

#include <cstring>

#include "codegen/kernel/cuda/cuda_region.h"
#include "runtime/device/cublaslt.h"
#include "runtime/device/cuda_kernel_compiler.h"
#include "runtime/device/device_selection.h"
#include "tests/codegen/kernel/cuda_test_launch.h"

namespace tessera::device {
namespace {

TEST(CublasLt, LoadsWithoutAGpuOrSaysWhyNot) {
  const CublasLt missing(std::vector<std::string>{"/nonexistent/libcublasLt.so.13"});
  EXPECT_FALSE(missing.available());
  EXPECT_NE(missing.why_unavailable().find("/nonexistent/libcublasLt.so.13 not found"), std::string::npos)
      << missing.why_unavailable();
  const CublasLt& lib = CublasLt::get();
  if (!lib.available()) GTEST_SKIP() << "cuBLASLt is not installed: " << lib.why_unavailable();
  EXPECT_GE(lib.version(), 110000u);
}

// A GPU, its stream and allocator, or a skip with the reason.
struct Gpu {
  DeviceSelection sel = select_device(DeviceChoice::Auto);
  std::unique_ptr<GpuStream> stream;
  std::unique_ptr<CudaMemory> memory;
  std::unique_ptr<DeviceAllocator> alloc;
  Gpu() {
    if (!sel.gpu) return;
    stream = std::make_unique<GpuStream>(*sel.gpu_device);
    memory = std::make_unique<CudaMemory>(*stream);
    alloc = std::make_unique<DeviceAllocator>(*memory);
  }
  DevicePtr put(const Value& v) {
    const TensorObj& t = *v.as_tensor();
    const DevicePtr p = alloc->allocate(t.nbytes());
    stream->upload(p, t.data(), t.nbytes());
    return p;
  }
};

TEST(CublasLt, RowMajorProductsEqualTheInterpreters) {
  Gpu g;
  if (!g.sel.gpu) GTEST_SKIP() << "no usable GPU: " << g.sel.reason;
  if (!CublasLt::get().available()) GTEST_SKIP() << "cuBLASLt is not installed: " << CublasLt::get().why_unavailable();
  GpuGemm gemm(CublasLt::get(), *g.stream, *g.alloc);
  struct Shape3 { int64_t batch, m, k, n; bool broadcast_b; };
  for (const Shape3 s : {Shape3{1, 40, 24, 56, false}, Shape3{1, 3, 1000, 5, false}, Shape3{3, 8, 16, 16, true},
                         Shape3{2, 7, 33, 9, false}, Shape3{1, 5, 0, 4, false}}) {
    const Value a = kir::testing::wave_tensor(DType::F32, s.batch > 1 ? Shape{s.batch, s.m, s.k} : Shape{s.m, s.k}, 1.0f, 0.1f);
    const Value b = kir::testing::wave_tensor(
        DType::F32, s.batch > 1 && !s.broadcast_b ? Shape{s.batch, s.k, s.n} : Shape{s.k, s.n}, 0.5f, 0.7f);
    const Value want = call_op(OpId::MatMul, std::vector<Value>{a, b});
    Value got = make_tensor(DType::F32, want.as_tensor()->shape);
    const DevicePtr da = g.put(a), db = g.put(b), dc = g.alloc->allocate(got.as_tensor()->nbytes());
    gemm.run(s.batch, s.m, s.n, s.k, da, s.m * s.k, db, s.broadcast_b ? 0 : s.k * s.n, dc, s.m * s.n);
    g.stream->download(got.as_tensor()->data(), dc, got.as_tensor()->nbytes());
    kir::testing::expect_close(got, want, "product " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n));
    for (DevicePtr p : {da, db, dc}) g.alloc->free(p);
  }
}

// gelu(x @ w + b): the product by cuBLASLt, the epilogue by the generated kernel.
TEST(CublasLt, AFusedRegionsProductThenItsEpilogue) {
  Gpu g;
  if (!g.sel.gpu) GTEST_SKIP() << "no usable GPU: " << g.sel.reason;
  if (!CublasLt::get().available()) GTEST_SKIP() << "cuBLASLt is not installed: " << CublasLt::get().why_unavailable();
  GpuGemm gemm(CublasLt::get(), *g.stream, *g.alloc);
  const CudaKernelCompiler compiler;
  for (const kir::testing::CudaCase& c : kir::testing::cuda_cases()) {
    if (c.name != "matmul_bias_gelu") continue;
    const kir::Kernel k = kir::testing::lower_case(c, c.name, nullptr);
    const kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "tsr_epilogue", kir::cuda_target_for(c.region));
    const CudaCompiled bin = compiler.compile(src, g.sel.arch);
    ASSERT_TRUE(bin.ok) << bin.log;
    const GpuModule module(*g.sel.gpu_device, bin.cubin, src.entry, src.shared_bytes);
    for (size_t set = 0; set < c.inputs.size(); ++set) {
      kir::testing::CaseLaunch launch(c, set, k, src);  // params: x, w, b, the product, the output
      const Value& x = launch.values[0];
      const int64_t m = x.as_tensor()->shape[0], kk = x.as_tensor()->shape[1], n = launch.values[1].as_tensor()->shape[1];
      std::vector<DevicePtr> blocks;
      for (size_t i = 0; i < launch.values.size(); ++i) {
        TensorObj& t = *launch.values[i].as_tensor();
        blocks.push_back(i == 3 || launch.output[i] ? g.alloc->allocate(t.nbytes()) : g.put(launch.values[i]));
        launch.ptrs[i] = reinterpret_cast<void*>(blocks.back());
      }
      gemm.run(1, m, n, kk, blocks[0], 0, blocks[1], 0, blocks[3], 0);
      module.launch(*g.stream, launch.programs, src.threads, launch.args);
      TensorObj& out = *launch.values.back().as_tensor();
      g.stream->download(out.data(), blocks.back(), out.nbytes());
      for (DevicePtr p : blocks) g.alloc->free(p);
      kir::testing::expect_close(launch.values.back(), run_region_reference(c.region, c.inputs[set]).at(0),
                                 "matmul epilogue set " + std::to_string(set));
    }
  }
}

}  // namespace
}  // namespace tessera::device
