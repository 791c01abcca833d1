// The GPU target (runtime/kernels/gpu_target.h) in a kernel runtime, over a
// fake device (memory with a capacity, kernels that write a known value,
// copies that can fail) and over the host emulation: a call runs on the
// device once its kernel is built, its output stays there until read, a
// device that cannot give the elements back is a runtime error, running out
// of device memory at any step of a call is the script's `out of memory`
// and leaves no block allocated, and settled shapes get a K3 kernel, tuned
// by the device's timings and kept for the next run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "runtime/device/device_error.h"
#include "runtime/device/emulated_backend.h"
#include "runtime/kernels/gpu_target.h"
#include "vm/tensor/f32_view.h"
#include "vm/core/error.h"

namespace tessera::kernels {
namespace {

using device::DeviceAllocator;
using device::DeviceError;
using device::DevicePtr;
using device::LaunchableKernel;

constexpr const char* kScale = "%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\noutputs %2\n";

class FakeBackend : public device::DeviceBackend {
 public:
  explicit FakeBackend(size_t capacity) : memory_(capacity), alloc_(memory_) {}
  std::string describe() const override { return "fake"; }
  std::string arch() const override { return "fake"; }
  DeviceAllocator& allocator() override { return alloc_; }
  void upload(DevicePtr to, const void* from, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  }
  void download(void* to, DevicePtr from, size_t bytes) override {
    if (fail_downloads) throw DeviceError("cuMemcpyDtoHAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access)");
    std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  }
  std::string image_kind() const override { return "fake"; }
  std::string image_identity(const kir::CudaKernelSource& src) const override { return "fake\n" + src.source; }
  std::string compile(const kir::CudaKernelSource& src) override {
    ++built;
    return src.source;
  }
  // Every kernel fills the output (the last param) with 7.
  std::shared_ptr<LaunchableKernel> load(const kir::CudaKernelSource& src, const std::string&) override {
    struct Fill : LaunchableKernel {
      Fill(const kir::CudaKernelSource& src, FakeBackend& b) : LaunchableKernel(src), backend(b) {}
      void launch(int64_t, std::vector<void*>& args) override {
        ++backend.launches;
        if (!backend.fill) return;
        float* out = *static_cast<float**>(args[2]);
        const int64_t n = *static_cast<int64_t*>(args[3]);
        for (int64_t i = 0; i < n; ++i) out[i] = 7.0f;
        backend.last_threads = source().threads;
      }
      FakeBackend& backend;
    };
    return std::make_shared<Fill>(src, *this);
  }
  // The time of a kernel: `cost` of its block size (the last one launched).
  double time_ms(const std::function<void()>& work) override {
    work();
    return cost ? cost(last_threads) : 1.0;
  }
  // Products on the host from the call the target makes (device pointers
  // are host pointers here), in f32 and rounded once, as cuBLASLt with its
  // epilogue; each call is kept for the tests to read.
  void matmul(const device::GemmDesc& d) override {
    products.push_back(d);
    const size_t size = dtype_size(d.dtype);
    auto at = [&](DevicePtr p, int64_t i) {
      float f;
      to_f32(d.dtype, reinterpret_cast<const char*>(p) + static_cast<size_t>(i) * size, &f, 1);
      return f;
    };
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j) {
          float acc = 0;
          for (int64_t p = 0; p < d.k; ++p)
            acc += at(d.a, b * d.stride_a + i * d.k + p) * at(d.b, b * d.stride_b + p * d.n + j);
          if (d.epilogue != device::GemmEpilogue::None) acc += at(d.bias, j);
          if (d.epilogue == device::GemmEpilogue::ReluBias && acc < 0) acc = 0;
          from_f32(d.dtype, &acc, reinterpret_cast<char*>(d.c) + static_cast<size_t>(b * d.stride_c + i * d.n + j) * size, 1);
        }
  }
  std::string compiler() const override { return "fake"; }

  struct Memory : device::DeviceMemoryBackend {
    explicit Memory(size_t cap) : cap(cap) {}
    DevicePtr allocate(size_t bytes) override {
      if (used + bytes > cap) return 0;
      used += bytes;
      void* p = std::malloc(bytes);
      sizes[p] = bytes;
      return reinterpret_cast<DevicePtr>(p);
    }
    void release(DevicePtr p) override {
      used -= sizes.at(reinterpret_cast<void*>(p));
      sizes.erase(reinterpret_cast<void*>(p));
      std::free(reinterpret_cast<void*>(p));
    }
    void synchronize() override {}
    size_t cap, used = 0;
    std::map<void*, size_t> sizes;
  };
  Memory memory_;
  DeviceAllocator alloc_;
  uint64_t built = 0;
  bool fail_downloads = false;
  bool fill = true;  // kernels write 7s (false: they only count, for regions whose output is not their third param)
  uint64_t launches = 0;
  std::vector<device::GemmDesc> products;
  int last_threads = 0;
  std::function<double(int)> cost;
};

// A VM's kernel runtime with the GPU target over `backend`: kernels built
// before the call goes on; K3 after `specialize` calls.
struct Runtime {
  explicit Runtime(std::shared_ptr<device::DeviceBackend> b, int specialize = 16, std::string cache_dir = {},
                   GpuTarget::Options options = {})
      : backend(std::move(b)) {
    KernelRuntimeConfig c;
    c.specialize = specialize;
    c.background = false;
    c.cache_dir = std::move(cache_dir);
    rt.configure(c);
    gpu = std::make_shared<GpuTarget>(backend, rt.store(), options);
    rt.set_device(gpu);
  }
  std::optional<Value> run(const std::vector<Value>& in) { return rt.run(region, in); }
  const TargetCounters& counters() const { return rt.counters("gpu"); }
  std::string report() const { return gpu->report(rt); }

  std::shared_ptr<device::DeviceBackend> backend;
  KernelRuntime rt;
  std::shared_ptr<GpuTarget> gpu;
  std::shared_ptr<const Region> region = std::make_shared<const Region>(parse_region(kScale));
};

Value ones(int64_t n) {
  Value v = make_tensor(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) v.as_tensor()->set_f(i, 1.0);
  return v;
}

TEST(GpuTarget, ACallRunsOnTheDeviceAndItsOutputStaysThereUntilRead) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  Runtime g(backend);
  const std::vector<Value> in = {ones(100), Value::number(2.0)};
  std::optional<Value> out = g.run(in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->as_tensor()->device_copy, nullptr);
  EXPECT_EQ(out->as_tensor()->get_f(99), 7.0);  // the fake kernel's value, copied back
  EXPECT_EQ(out->as_tensor()->device_copy, nullptr);
  // Fed back, an output still on the device is not uploaded.
  ASSERT_TRUE(g.run(std::vector<Value>{g.run(in).value(), Value::number(2.0)}));
  const GpuTarget::Traffic t = g.gpu->traffic();
  EXPECT_EQ(g.counters().k2_runs.load(), 3u);
  EXPECT_EQ(t.resident_inputs, 2u);  // the host's input, uploaded by the first call, and the fed-back output
  EXPECT_EQ(t.uploads, 1u);
  EXPECT_EQ(t.downloads, 1u);
  EXPECT_EQ(backend->built, 1u);
  EXPECT_EQ(g.rt.stats().k2_runs, 0u);  // nothing ran on the CPU
}

// A host tensor a call uploaded keeps the device's block as a mirror: the
// host reads it without a download, and its first access drops the mirror
// (it may be a write), so the next call uploads it again.
TEST(GpuTarget, AnUploadedHostTensorIsMirroredUntilTheHostTouchesIt) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  Runtime g(backend);
  const Value w = ones(100);
  ASSERT_TRUE(g.run(std::vector<Value>{w, Value::number(2.0)}));
  ASSERT_NE(w.as_tensor()->device_copy, nullptr);
  const size_t in_use = backend->allocator().stats().in_use_bytes;
  ASSERT_TRUE(g.run(std::vector<Value>{w, Value::number(2.0)}));
  EXPECT_EQ(g.gpu->traffic().uploads, 1u);
  w.as_tensor()->set_f(5, 3.0);  // the host writes it
  EXPECT_EQ(w.as_tensor()->device_copy, nullptr);
  EXPECT_EQ(w.as_tensor()->get_f(5), 3.0);
  EXPECT_EQ(g.gpu->traffic().downloads, 0u);  // the host's buffer was current
  EXPECT_LT(backend->allocator().stats().in_use_bytes, in_use);  // the mirror's block went back
  ASSERT_TRUE(g.run(std::vector<Value>{w, Value::number(2.0)}));
  EXPECT_EQ(g.gpu->traffic().uploads, 2u);
}

// Settled shapes get a K3 kernel (dims constant) after `specialize` calls;
// a dim that keeps changing stays a parameter of it; K2 serves other shapes.
TEST(GpuTarget, SettledShapesGetAK3Kernel) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  Runtime g(backend, 4);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(g.run(std::vector<Value>{ones(100), Value::number(2.0)}));
  EXPECT_EQ(backend->built, 11u);  // K2, then K3 for [100]: the tuner's 10 variants (5 tiles x 2 block sizes)
  EXPECT_EQ(g.counters().k3_tuned.load(), 1u);
  EXPECT_EQ(g.counters().variants_timed.load(), 10u);
  EXPECT_EQ(g.counters().k2_runs.load(), 4u);  // the calls that settled the shape
  EXPECT_EQ(g.counters().k3_runs.load(), 6u);
  // Another length: K2 again (the K3 kernel's dim is a constant 100).
  ASSERT_TRUE(g.run(std::vector<Value>{ones(50), Value::number(2.0)}));
  EXPECT_EQ(g.counters().k2_runs.load(), 5u);
  // A length that changes every call is dynamic: no kernel for each of them.
  for (int n = 60; n < 80; ++n) ASSERT_TRUE(g.run(std::vector<Value>{ones(n), Value::number(2.0)}));
  EXPECT_EQ(backend->built, 11u);
  EXPECT_NE(g.report().find("K2 25, K3 6"), std::string::npos) << g.report();
}

// The variants of a K3 kernel are timed on the device (here: the fake's
// cost of a block size); the fastest serves the calls and is kept in the
// cache, so the next run with the same shapes builds only it (here: reads
// K2 and it from the cache), timing nothing.
TEST(GpuTarget, TheFastestVariantIsKeptAndALaterRunBuildsOnlyIt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-gpu-target-tune-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (int run = 0; run < 2; ++run) {
    auto backend = std::make_shared<FakeBackend>(1 << 20);
    backend->cost = [](int threads) { return threads == 128 ? 1.0 : 2.0; };
    Runtime g(backend, 3, dir.string());
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(g.run(std::vector<Value>{ones(300), Value::number(2.0)}));
    EXPECT_EQ(g.counters().k3_runs.load(), 3u);
    EXPECT_EQ(backend->last_threads, 128);  // the calls after the tuning run the fastest
    const KernelStore::TargetStats s = g.rt.store().stats("gpu");
    if (run == 0) {
      EXPECT_EQ(g.counters().k3_tuned.load(), 1u);
      EXPECT_EQ(g.counters().variants_timed.load(), 10u);
      EXPECT_EQ(backend->built, 11u);
      EXPECT_NE(g.report().find("gpu tuning: 1 K3 kernels tuned (10 variants timed"), std::string::npos) << g.report();
    } else {
      EXPECT_EQ(g.counters().k3_tuned.load(), 0u);
      EXPECT_EQ(g.counters().k3_kept.load(), 1u);
      EXPECT_EQ(g.counters().variants_timed.load(), 0u);
      EXPECT_EQ(backend->built, 0u);
      EXPECT_EQ(s.from_disk, 2u);  // K2 and the kept variant
    }
  }
  const KernelStore notes(dir.string());
  const KernelTuner tuner(notes);
  const Region r = parse_region(kScale);
  const std::optional<KernelVariant> kept = tuner.kept("fake", r, {300});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->threads, 128);
  EXPECT_FALSE(tuner.kept("fake", r, {301}).has_value());
  std::filesystem::remove_all(dir);
}

TEST(GpuTarget, ADeviceThatCannotGiveElementsBackIsARuntimeError) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  Runtime g(backend);
  std::optional<Value> out = g.run(std::vector<Value>{ones(10), Value::number(2.0)});
  ASSERT_TRUE(out.has_value());
  backend->fail_downloads = true;
  try {
    out->as_tensor()->get_f(0);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << e.what();
  }
}

// Out of device memory when an input is uploaded, or when the output's
// block is allocated after the inputs': the script's error, no block left.
TEST(GpuTarget, OutOfDeviceMemoryAtAnyStepIsOutOfMemoryAndLeavesNoBlock) {
  for (size_t cap : {size_t{1000}, size_t{3000}}) {  // no room for the input; room for it, not the output
    auto backend = std::make_shared<FakeBackend>(cap);
    Runtime g(backend);
    try {
      g.run(std::vector<Value>{ones(500), Value::number(2.0)});
      FAIL() << "no error with " << cap << " bytes";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()), "out of memory");
    }
    EXPECT_EQ(backend->allocator().stats().in_use_bytes, 0u) << cap;
  }
}

// The same on the host emulation with a small device-memory cap
// (TESSERA_GPU_EMULATION_MEMORY): a real kernel, built by the host compiler.
TEST(GpuTarget, OutOfMemoryOnTheEmulationLeavesNoBlock) {
  auto backend = std::make_shared<device::EmulatedBackend>(6000);
  Runtime g(backend);
  // 4000 bytes in, 4096 out: the output's block does not fit.
  try {
    g.run(std::vector<Value>{ones(1000), Value::number(2.0)});
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "out of memory");
  }
  EXPECT_EQ(backend->allocator().stats().in_use_bytes, 0u);
  // A call that fits runs on the device, right.
  std::optional<Value> out = g.run(std::vector<Value>{ones(100), Value::number(2.0)});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->as_tensor()->get_f(99), 2.0);
  EXPECT_EQ(g.counters().k2_runs.load(), 1u);
}

// relu(x @ w + b): x [8, 16] of `dt`, w [16, n] of `w_dt` (default `dt`),
// b [n] of the product's dtype.
std::shared_ptr<const Region> linear_relu(DType dt, std::optional<DType> w_dt = std::nullopt) {
  Region r;
  const int m = r.new_symbol(8), k = r.new_symbol(16), n = r.new_symbol(24);
  const int x = r.add_tensor_input(dt, {m, k});
  const int w = r.add_tensor_input(w_dt.value_or(dt), {k, n});
  const int b = r.add_tensor_input(promote_dtypes(dt, w_dt.value_or(dt)), {n});
  r.outputs = {*r.add(OpId::Relu, {*r.add(OpId::Add, {*r.add(OpId::MatMul, {x, w}), b})})};
  return std::make_shared<const Region>(std::move(r));
}

// Small integers: every sum is exact in f16 and bf16, so the device's one
// rounding and the interpreter's two give the same bits.
Value ints(DType dt, Shape shape, int64_t mod, int64_t shift) {
  Value v = make_tensor(dt, shape);
  for (int64_t i = 0; i < v.as_tensor()->numel; ++i) v.as_tensor()->set_f(i, static_cast<double>(i * 7 % mod - shift));
  return v;
}

// A leading product on a device whose memory is not the host's (a GPU's
// path): f16 and bf16 products reach the device as they are, with f32
// accumulation, and relu(x @ w + b) is one product with cuBLASLt's
// RELU_BIAS epilogue reading the bias input's block; the region's kernel
// does not run; the output is the interpreter's.
TEST(GpuTarget, HalfProductsWithABiasAndReluRunAsOneProduct) {
  for (DType dt : {DType::F16, DType::BF16, DType::F32}) {
    auto backend = std::make_shared<FakeBackend>(1 << 20);
    Runtime g(backend, 2);
    g.region = linear_relu(dt);
    EXPECT_EQ(g.gpu->refuses(*g.region), "");
    const std::vector<Value> in = {ints(dt, {8, 16}, 7, 3), ints(dt, {16, 24}, 5, 2), ints(dt, {24}, 9, 4)};
    const Value want = run_region_reference(*g.region, in).at(0);
    for (int call = 0; call < 4; ++call) {  // K2, then the K3 kernel (one variant: nothing to time)
      std::optional<Value> got = g.run(in);
      ASSERT_TRUE(got) << g.report();
      ASSERT_EQ(got->as_tensor()->nbytes(), want.as_tensor()->nbytes());
      EXPECT_EQ(std::memcmp(got->as_tensor()->data(), want.as_tensor()->data(), want.as_tensor()->nbytes()), 0)
          << dtype_name(dt) << " call " << call;
    }
    ASSERT_EQ(backend->products.size(), 4u);
    const device::GemmDesc& d = backend->products.back();
    EXPECT_EQ(d.dtype, dt);
    EXPECT_EQ(d.epilogue, device::GemmEpilogue::ReluBias);
    EXPECT_EQ(std::make_tuple(d.batch, d.m, d.n, d.k), std::make_tuple(int64_t{1}, int64_t{8}, int64_t{24}, int64_t{16}));
    EXPECT_NE(d.bias, 0u);
    EXPECT_FALSE(d.tf32);  // the parameter's default
    EXPECT_EQ(backend->launches, 0u);  // no region kernel ran
    EXPECT_EQ(g.gpu->traffic().product_epilogues, 4u);
    EXPECT_EQ(g.counters().k3_runs.load(), 2u) << g.report();
    EXPECT_EQ(g.counters().variants_timed.load(), 0u) << g.report();
    EXPECT_NE(g.report().find("gpu products: 4 calls' bias (and relu) computed with their matrix product"), std::string::npos)
        << g.report();
  }
}

// TF32 is asked of f32 products only with Options::tf32 (the JIT parameter
// tf32); an empty inner dim is zeros by the product, then the region's kernel.
TEST(GpuTarget, Tf32IsAskedOnlyWhenSetAndAnEmptyInnerDimRunsTheKernel) {
  for (bool tf32 : {false, true}) {
    auto backend = std::make_shared<FakeBackend>(1 << 20);
    GpuTarget::Options opt;
    opt.tf32 = tf32;
    Runtime g(backend, 16, {}, opt);
    g.region = linear_relu(DType::F32);
    ASSERT_TRUE(g.run(std::vector<Value>{ints(DType::F32, {8, 16}, 7, 3), ints(DType::F32, {16, 24}, 5, 2),
                                         ints(DType::F32, {24}, 9, 4)}));
    ASSERT_EQ(backend->products.size(), 1u);
    EXPECT_EQ(backend->products[0].tf32, tf32);
  }
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  backend->fill = false;
  Runtime g(backend);
  g.region = linear_relu(DType::F16);
  ASSERT_TRUE(g.run(std::vector<Value>{make_tensor(DType::F16, {8, 0}), make_tensor(DType::F16, {0, 24}),
                                       ints(DType::F16, {24}, 9, 4)}));
  ASSERT_EQ(backend->products.size(), 1u);
  EXPECT_EQ(backend->products[0].epilogue, device::GemmEpilogue::None);
  EXPECT_EQ(backend->launches, 1u);
}

// The interpreter promotes mixed operands (f16 by f32 is f32); cuBLASLt
// multiplies operands of one type: refused on a GPU, with the fix.
TEST(GpuTarget, MixedProductOperandsAreRefusedWithTheirReason) {
  Runtime g(std::make_shared<FakeBackend>(1 << 20));
  EXPECT_EQ(g.gpu->refuses(*linear_relu(DType::F16, DType::BF16)),
            "a matrix product of f16 by bf16 on the GPU is not built (cuBLASLt takes operands of one type: cast one to "
            "the other's dtype first)");
  EXPECT_EQ(g.gpu->refuses(*linear_relu(DType::BF16)), "");
}

// Hopper's variant of tensor-core attention (wgmma, 64 query rows, 256
// threads) is offered where the device has warpgroup products (the host
// emulation; a GPU of sm_90a) and nowhere else, and run on its own (not
// only timed) it computes what the interpreter computes within the
// half-precision tolerance: f16 attention with a consumer fused into its
// write, at a head dim of 64 and 128.
TEST(GpuTarget, AttentionOnWarpgroupProductsWhereTheDeviceHasThem) {
  for (int64_t d : {64, 128}) {
    Region r;
    const int b = r.new_symbol(2), sq = r.new_symbol(70), hd = r.new_symbol(d), sk = r.new_symbol(90);
    const int q = r.add_tensor_input(DType::F16, {b, sq, hd});
    const int k = r.add_tensor_input(DType::F16, {b, sk, hd});
    const int v = r.add_tensor_input(DType::F16, {b, sk, hd});
    RegionAttrs at;
    at.causal = d == 128;
    r.outputs = {*r.add(OpId::Mul, {*r.add(OpId::Attention, {q, k, v}, at), r.add_scalar_input(ScalarKind::Float)})};
    std::vector<Value> in = {ints(DType::F16, {2, 70, d}, 9, 4), ints(DType::F16, {2, 90, d}, 7, 3),
                             ints(DType::F16, {2, 90, d}, 11, 5), Value::number(0.5)};
    for (Value& x : in)  // small values: scores of a few units
      if (x.is_tensor())
        for (int64_t i = 0; i < x.as_tensor()->numel; ++i) x.as_tensor()->set_f(i, x.as_tensor()->get_f(i) / 8.0);
    const auto sym = bind_symbols(r, in);
    ASSERT_TRUE(sym.has_value());
    const DimSpec spec(sym->begin(), sym->end());
    Runtime g(std::make_shared<device::EmulatedBackend>());
    const std::vector<KernelVariant> variants = g.gpu->variants(r, spec, *sym);
    auto wg = std::find_if(variants.begin(), variants.end(), [](const KernelVariant& x) { return x.wgmma; });
    ASSERT_NE(wg, variants.end());
    EXPECT_EQ(wg->rows, 64);
    EXPECT_EQ(wg->threads, 256);
    EXPECT_EQ(KernelVariant::parse(wg->str()), *wg);
    Runtime fake(std::make_shared<FakeBackend>(1 << 20));
    for (const KernelVariant& x : fake.gpu->variants(r, spec, *sym)) EXPECT_FALSE(x.wgmma) << x.str();
    const std::shared_ptr<const TargetKernel> kernel = g.gpu->compile(r, spec, *wg);
    std::string why;
    const std::optional<Value> out = g.gpu->launch(r, *kernel, in, *sym, nullptr, why);
    ASSERT_TRUE(out.has_value()) << why;
    const Value want = run_region_reference(r, in).at(0);
    const TensorObj& got = *out->as_tensor();
    double worst = 0;
    for (int64_t i = 0; i < got.numel; ++i)
      worst = std::max(worst, std::fabs(got.get_f(i) - want.as_tensor()->get_f(i)) / (1.0 + std::fabs(want.as_tensor()->get_f(i))));
    EXPECT_LE(worst, 2e-3) << "head dim " << d;
  }
}

}  // namespace
}  // namespace tessera::kernels
