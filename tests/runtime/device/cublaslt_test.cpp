// cuBLASLt: loaded with dlopen (no GPU needed for that), a missing library
// said clearly; on a GPU, row-major products of f32, f16 and bf16 (plain,
// batched, a batch broadcast of B, an empty inner dim) against the
// interpreter's matmul (f32 accumulation, rounded once), f32 with TF32
// within TF32's error, the bias and relu(bias) epilogues against the
// interpreter's add and relu (NaN kept, as the interpreter's relu keeps it),
// and a fused region's product by cuBLASLt followed by its generated
// epilogue.
#include <gtest/gtest.h>

#include <cmath>
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

// A GPU with cuBLASLt and a GpuGemm on its stream, or a skip with the reason.
class CublasLtOnAGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!g.sel.gpu) GTEST_SKIP() << "no usable GPU: " << g.sel.reason;
    if (!CublasLt::get().available()) GTEST_SKIP() << "cuBLASLt is not installed: " << CublasLt::get().why_unavailable();
    gemm = std::make_unique<GpuGemm>(CublasLt::get(), *g.stream, *g.alloc);
  }
  Gpu g;
  std::unique_ptr<GpuGemm> gemm;
};

struct Shape3 {
  int64_t batch, m, k, n;
  bool broadcast_b;
};
constexpr Shape3 kShapes[] = {{1, 40, 24, 56, false}, {1, 3, 1000, 5, false}, {3, 8, 16, 16, true},
                              {2, 7, 33, 9, false},   {1, 5, 0, 4, false}};

// The operands of shape `s` as the interpreter's tensors of `dt`.
std::pair<Value, Value> operands(DType dt, const Shape3& s) {
  return {kir::testing::wave_tensor(dt, s.batch > 1 ? Shape{s.batch, s.m, s.k} : Shape{s.m, s.k}, 1.0f, 0.1f),
          kir::testing::wave_tensor(dt, s.batch > 1 && !s.broadcast_b ? Shape{s.batch, s.k, s.n} : Shape{s.k, s.n}, 0.5f,
                                    0.7f)};
}

// gemm.run of a and b (and a bias with an epilogue), the result read back.
Value product_on_gpu(Gpu& g, GpuGemm& gemm, const Shape3& s, const Value& a, const Value& b, GemmDesc d,
                     const Value* bias = nullptr) {
  Value got = make_tensor(a.as_tensor()->dtype, call_op(OpId::MatMul, std::vector<Value>{a, b}).as_tensor()->shape);
  d.batch = s.batch, d.m = s.m, d.n = s.n, d.k = s.k;
  d.dtype = a.as_tensor()->dtype;
  d.a = g.put(a), d.b = g.put(b), d.c = g.alloc->allocate(got.as_tensor()->nbytes());
  d.stride_a = s.m * s.k, d.stride_b = s.broadcast_b ? 0 : s.k * s.n, d.stride_c = s.m * s.n;
  if (bias) d.bias = g.put(*bias);
  gemm.run(d);
  g.stream->download(got.as_tensor()->data(), d.c, got.as_tensor()->nbytes());
  for (DevicePtr p : {d.a, d.b, d.c, d.bias})
    if (p) g.alloc->free(p);
  return got;
}

std::string shape_name(const Shape3& s) {
  return std::to_string(s.batch) + "x" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

// f32 exactly (no TF32 unless asked); f16 and bf16 with f32 accumulation,
// rounded once to their type, as the interpreter (widened for sgemm).
TEST_F(CublasLtOnAGpu, RowMajorProductsOfEachFloatTypeEqualTheInterpreters) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (const Shape3& s : kShapes) {
      const auto [a, b] = operands(dt, s);
      const Value want = call_op(OpId::MatMul, std::vector<Value>{a, b});
      ASSERT_EQ(want.as_tensor()->dtype, dt);
      kir::testing::expect_close(product_on_gpu(g, *gemm, s, a, b, GemmDesc{}), want,
                                 std::string("product ") + dtype_name(dt) + " " + shape_name(s));
    }
}

// TF32 rounds each operand to 10 bits of mantissa (a relative error of at
// most 2^-11 each): every element is within 2^-9 of the sum of |a||b| it
// adds up, of the exact f32 product.
TEST_F(CublasLtOnAGpu, Tf32ProductsAreWithinTf32sError) {
  for (const Shape3& s : kShapes) {
    const auto [a, b] = operands(DType::F32, s);
    GemmDesc d;
    d.tf32 = true;
    const Value got = product_on_gpu(g, *gemm, s, a, b, d);
    const Value want = call_op(OpId::MatMul, std::vector<Value>{a, b});
    const Value bound = call_op(OpId::MatMul, std::vector<Value>{call_op(OpId::Abs, std::vector<Value>{a}),
                                                                 call_op(OpId::Abs, std::vector<Value>{b})});
    int bad = 0;
    for (int64_t i = 0; i < want.as_tensor()->numel; ++i) {
      const double diff = std::fabs(got.as_tensor()->get_f(i) - want.as_tensor()->get_f(i));
      if (diff > std::ldexp(bound.as_tensor()->get_f(i), -9) + 1e-6 && bad++ < 5)
        ADD_FAILURE() << "tf32 " << shape_name(s) << ": element " << i << " is " << got.as_tensor()->get_f(i) << ", want "
                      << want.as_tensor()->get_f(i) << " within " << std::ldexp(bound.as_tensor()->get_f(i), -9);
    }
  }
}

// C = A B + bias and relu(A B + bias), the bias along C's last dim (one for
// every batch entry), against the interpreter's add and relu. A NaN in the
// bias makes its column NaN: the interpreter's relu keeps NaN (cuBLASLt's
// documentation does not say what its ReLU does with one; if this fails
// there, drop ReluBias from runtime/kernels/gemm_epilogue.cpp).
TEST_F(CublasLtOnAGpu, BiasAndReluBiasEpiloguesEqualTheInterpretersAddAndRelu) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    for (const GemmEpilogue epi : {GemmEpilogue::Bias, GemmEpilogue::ReluBias})
      for (const Shape3& s : kShapes) {
        if (s.k == 0) continue;  // cuBLASLt takes no empty inner dim; GpuGemm refuses an epilogue there
        const auto [a, b] = operands(dt, s);
        Value bias = kir::testing::wave_tensor(dt, {s.n}, 2.0f, 0.3f);
        bias.as_tensor()->set_f(s.n - 1, std::nan(""));
        GemmDesc d;
        d.epilogue = epi;
        const Value got = product_on_gpu(g, *gemm, s, a, b, d, &bias);
        Value want = call_op(OpId::Add, std::vector<Value>{call_op(OpId::MatMul, std::vector<Value>{a, b}), bias});
        if (epi == GemmEpilogue::ReluBias) want = call_op(OpId::Relu, std::vector<Value>{want});
        kir::testing::expect_close(got, want,
                                   std::string(gemm_epilogue_name(epi)) + " " + dtype_name(dt) + " " + shape_name(s));
      }
}

// An epilogue with an empty inner dim is the caller's to compute.
TEST_F(CublasLtOnAGpu, AnEpilogueWithAnEmptyInnerDimIsRefused) {
  GemmDesc d;
  d.m = 2, d.n = 3, d.k = 0;
  d.epilogue = GemmEpilogue::Bias;
  EXPECT_THROW(gemm->run(d), DeviceError);
}

// gelu(x @ w + b): the product by cuBLASLt, the epilogue by the generated kernel.
TEST_F(CublasLtOnAGpu, AFusedRegionsProductThenItsEpilogue) {
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
      GemmDesc d;
      d.m = m, d.n = n, d.k = kk;
      d.a = blocks[0], d.b = blocks[1], d.c = blocks[3];
      gemm->run(d);
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
