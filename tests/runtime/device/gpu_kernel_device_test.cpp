// GpuKernelDevice over a fake backend (memory with a capacity, kernels that
// write a known value, copies that can fail): a call runs on the device once
// its kernel is built, its output stays there until read, a device that
// cannot give the elements back is a runtime error, running out of device
// memory refuses the region without leaking its blocks, and settled shapes
// get a K3 kernel, tuned by the fake's timings and kept for the next run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "runtime/device/gpu_kernel_device.h"
#include "vm/core/error.h"

namespace tessera::device {
namespace {

constexpr const char* kScale = "%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\noutputs %2\n";

class FakeBackend : public DeviceBackend {
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
  // Every kernel fills the output (the last param) with 7.
  std::shared_ptr<LaunchableKernel> build(const kir::CudaKernelSource& src) override {
    ++built;
    struct Fill : LaunchableKernel {
      Fill(const kir::CudaKernelSource& src, FakeBackend& b) : LaunchableKernel(src), backend(b) {}
      void launch(int64_t, std::vector<void*>& args) override {
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
  void matmul_f32(int64_t, int64_t, int64_t, int64_t, DevicePtr, int64_t, DevicePtr, int64_t, DevicePtr, int64_t) override {
    throw DeviceError("no products here");
  }
  BuildStats build_stats() const override { return {built, 0, 0, "fake"}; }

  struct Memory : DeviceMemoryBackend {
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
  int last_threads = 0;
  std::function<double(int)> cost;
};

// Kernels built before the call goes on; K3 after `specialize` calls.
GpuKernelDevice::Options now(int specialize = 16, std::string tune_cache_dir = {}) {
  GpuKernelDevice::Options o;
  o.background = false;
  o.specialize = specialize;
  o.tune_cache_dir = std::move(tune_cache_dir);
  return o;
}

Value ones(int64_t n) {
  Value v = make_tensor(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) v.as_tensor()->set_f(i, 1.0);
  return v;
}

TEST(GpuKernelDevice, ACallRunsOnTheDeviceAndItsOutputStaysThereUntilRead) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  auto dev = std::make_shared<GpuKernelDevice>(backend, now());
  const Region r = parse_region(kScale);
  std::shared_ptr<void> site;
  const std::vector<Value> in = {ones(100), Value::number(2.0)};
  std::optional<Value> out = dev->run(r, site, in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->as_tensor()->device_copy, nullptr);
  EXPECT_EQ(out->as_tensor()->get_f(99), 7.0);  // the fake kernel's value, copied back
  EXPECT_EQ(out->as_tensor()->device_copy, nullptr);
  // Fed back, an output still on the device is not uploaded.
  std::optional<Value> again = dev->run(r, site, std::vector<Value>{dev->run(r, site, in).value(), Value::number(2.0)});
  ASSERT_TRUE(again.has_value());
  const auto s = dev->stats();
  EXPECT_EQ(s.launches, 3u);
  EXPECT_EQ(s.resident_inputs, 2u);  // the host's input, uploaded by the first call, and the fed-back output
  EXPECT_EQ(s.uploads, 1u);
  EXPECT_EQ(s.downloads, 1u);
  EXPECT_EQ(backend->built, 1u);
}

// A host tensor a call uploaded keeps the device's block as a mirror: the
// host reads it without a download, and its first access drops the mirror
// (it may be a write), so the next call uploads it again.
TEST(GpuKernelDevice, AnUploadedHostTensorIsMirroredUntilTheHostTouchesIt) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  auto dev = std::make_shared<GpuKernelDevice>(backend, now());
  const Region r = parse_region(kScale);
  std::shared_ptr<void> site;
  const Value w = ones(100);
  ASSERT_TRUE(dev->run(r, site, std::vector<Value>{w, Value::number(2.0)}));
  ASSERT_NE(w.as_tensor()->device_copy, nullptr);
  const size_t in_use = backend->allocator().stats().in_use_bytes;
  ASSERT_TRUE(dev->run(r, site, std::vector<Value>{w, Value::number(2.0)}));
  EXPECT_EQ(dev->stats().uploads, 1u);
  w.as_tensor()->set_f(5, 3.0);  // the host writes it
  EXPECT_EQ(w.as_tensor()->device_copy, nullptr);
  EXPECT_EQ(w.as_tensor()->get_f(5), 3.0);
  EXPECT_EQ(dev->stats().downloads, 0u);  // the host's buffer was current
  EXPECT_LT(backend->allocator().stats().in_use_bytes, in_use);  // the mirror's block went back
  ASSERT_TRUE(dev->run(r, site, std::vector<Value>{w, Value::number(2.0)}));
  EXPECT_EQ(dev->stats().uploads, 2u);
}

// Settled shapes get a K3 kernel (dims constant) after `specialize` calls;
// a dim that keeps changing stays a parameter of it; K2 serves other shapes.
TEST(GpuKernelDevice, SettledShapesGetAK3Kernel) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  auto dev = std::make_shared<GpuKernelDevice>(backend, now(4));
  const Region r = parse_region(kScale);
  std::shared_ptr<void> site;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(dev->run(r, site, std::vector<Value>{ones(100), Value::number(2.0)}));
  auto s = dev->stats();
  EXPECT_EQ(backend->built, 11u);   // K2, then K3 for [100]: the tuner's 10 variants (5 tiles x 2 block sizes)
  EXPECT_EQ(s.k3_tuned, 1u);
  EXPECT_EQ(s.variants_timed, 10u);
  EXPECT_EQ(s.k2_launches, 4u);     // the calls that settled the shape
  EXPECT_EQ(s.k3_launches, 6u);
  // Another length: K2 again (the K3 kernel's dim is a constant 100).
  ASSERT_TRUE(dev->run(r, site, std::vector<Value>{ones(50), Value::number(2.0)}));
  EXPECT_EQ(dev->stats().k2_launches, 5u);
  // A length that changes every call is dynamic: no kernel for each of them.
  for (int n = 60; n < 80; ++n) ASSERT_TRUE(dev->run(r, site, std::vector<Value>{ones(n), Value::number(2.0)}));
  EXPECT_EQ(backend->built, 11u);
  EXPECT_NE(dev->report().find("K2 25, K3 6"), std::string::npos) << dev->report();
}

// The variants of a K3 kernel are timed on the device (here: the fake's
// cost of a block size); the fastest serves the calls and is kept in the
// cache, so the next run with the same shapes builds only it, timing nothing.
TEST(GpuKernelDevice, TheFastestVariantIsKeptAndALaterRunBuildsOnlyIt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-gpu-device-tune-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const Region r = parse_region(kScale);
  for (int run = 0; run < 2; ++run) {
    auto backend = std::make_shared<FakeBackend>(1 << 20);
    backend->cost = [](int threads) { return threads == 128 ? 1.0 : 2.0; };
    auto dev = std::make_shared<GpuKernelDevice>(backend, now(3, dir.string()));
    std::shared_ptr<void> site;
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(dev->run(r, site, std::vector<Value>{ones(300), Value::number(2.0)}));
    const auto s = dev->stats();
    EXPECT_EQ(s.k3_launches, 3u);
    EXPECT_EQ(backend->last_threads, 128);  // the calls after the tuning run the fastest
    if (run == 0) {
      EXPECT_EQ(s.k3_tuned, 1u);
      EXPECT_EQ(s.variants_timed, 10u);
      EXPECT_EQ(backend->built, 11u);
      EXPECT_NE(dev->report().find("gpu tuning: 1 K3 kernels tuned (10 variants timed"), std::string::npos)
          << dev->report();
    } else {
      EXPECT_EQ(s.k3_tuned, 0u);
      EXPECT_EQ(s.k3_kept, 1u);
      EXPECT_EQ(s.variants_timed, 0u);
      EXPECT_EQ(backend->built, 2u);  // K2 and the kept variant
    }
  }
  const kir::KernelDiskCache notes(dir.string());
  const std::optional<GpuVariant> kept = kept_gpu_variant(r, {300}, "fake", notes);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->threads, 128);
  EXPECT_FALSE(kept_gpu_variant(r, {301}, "fake", notes).has_value());
  std::filesystem::remove_all(dir);
}

TEST(GpuKernelDevice, ADeviceThatCannotGiveElementsBackIsARuntimeError) {
  auto backend = std::make_shared<FakeBackend>(1 << 20);
  auto dev = std::make_shared<GpuKernelDevice>(backend, now());
  const Region r = parse_region(kScale);
  std::shared_ptr<void> site;
  std::optional<Value> out = dev->run(r, site, std::vector<Value>{ones(10), Value::number(2.0)});
  ASSERT_TRUE(out.has_value());
  backend->fail_downloads = true;
  try {
    out->as_tensor()->get_f(0);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << e.what();
  }
}

TEST(GpuKernelDevice, OutOfDeviceMemoryRefusesTheRegionWithoutLeaking) {
  auto backend = std::make_shared<FakeBackend>(3000);  // room for the input, not for the output too
  auto dev = std::make_shared<GpuKernelDevice>(backend, now());
  const Region r = parse_region(kScale);
  std::shared_ptr<void> site;
  EXPECT_FALSE(dev->run(r, site, std::vector<Value>{ones(500), Value::number(2.0)}).has_value());
  EXPECT_EQ(backend->allocator().stats().in_use_bytes, 0u);
  const auto s = dev->stats();
  EXPECT_EQ(s.refused, 1u);
  EXPECT_NE(s.first_refusal.find("device out of memory"), std::string::npos) << s.first_refusal;
  // Refused for good: later calls go to the CPU at once.
  EXPECT_FALSE(dev->run(r, site, std::vector<Value>{ones(500), Value::number(2.0)}).has_value());
  EXPECT_EQ(dev->stats().refused, 2u);
}

}  // namespace
}  // namespace tessera::device
