// The GPU kernel store: a kernel compiled once per process, a warm
// persistent cache that loads without compiling (and a damaged entry that is
// compiled again), compiles on the background thread. Needs NVRTC, not a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "codegen/kernel/cuda/cuda_region.h"
#include "runtime/device/gpu_kernel_store.h"
#include "tests/codegen/kernel/cuda_test_cases.h"

namespace tessera::device {
namespace {

namespace fs = std::filesystem;

kir::CudaKernelSource chain_source() {
  const kir::testing::CudaCase c = std::move(kir::testing::cuda_cases().front());
  return kir::emit_cuda_kernel(kir::testing::lower_case(c, c.name, nullptr), "tsr_chain", kir::cuda_target_for(c.region));
}

class GpuKernelStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!NvrtcLibrary::get().available()) GTEST_SKIP() << "NVRTC is not available: " << NvrtcLibrary::get().why_unavailable();
    dir_ = fs::temp_directory_path() / ("tessera-gpu-store-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  CudaKernelCompiler compiler_;
};

TEST_F(GpuKernelStoreTest, AWarmCacheLoadsWithoutCompiling) {
  const kir::CudaKernelSource src = chain_source();
  std::string image;
  {
    GpuKernelStore cold(compiler_, "sm_90a", dir_.string());
    auto k = cold.get(src);
    image = k->image;
    EXPECT_FALSE(k->from_disk);
    EXPECT_TRUE(k->report.has_value());
    EXPECT_EQ(cold.get(src), k);  // the process's copy
    const auto s = cold.stats();
    EXPECT_EQ(s.compiled, 1u);
    EXPECT_EQ(s.from_memory, 1u);
    EXPECT_EQ(s.disk.writes, 1u);
  }
  GpuKernelStore warm(compiler_, "sm_90a", dir_.string());
  auto k = warm.get(src);
  EXPECT_TRUE(k->from_disk);
  EXPECT_EQ(k->image, image);
  EXPECT_EQ(warm.stats().compiled, 0u);
  EXPECT_EQ(warm.stats().from_disk, 1u);
  // Another architecture is another entry.
  GpuKernelStore other(compiler_, "sm_80", dir_.string());
  EXPECT_FALSE(other.get(src)->from_disk);
}

TEST_F(GpuKernelStoreTest, ADamagedEntryIsCompiledAgain) {
  const kir::CudaKernelSource src = chain_source();
  GpuKernelStore(compiler_, "sm_90", dir_.string()).get(src);
  for (const auto& f : fs::directory_iterator(dir_)) {
    std::fstream io(f.path(), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(fs::file_size(f.path()) - 10));
    io.write("XXXX", 4);
  }
  GpuKernelStore again(compiler_, "sm_90", dir_.string());
  EXPECT_FALSE(again.get(src)->from_disk);
  EXPECT_EQ(again.stats().disk.corrupt, 1u);
  EXPECT_EQ(again.stats().compiled, 1u);
}

TEST_F(GpuKernelStoreTest, BackgroundCompiles) {
  GpuKernelStore store(compiler_, "sm_90a", "");
  auto ok = store.request(chain_source());
  kir::CudaKernelSource bad = chain_source();
  bad.entry = "tsr_bad";
  bad.source += "\nthis is not C++;\n";
  auto refused = store.request(bad);
  store.drain();
  ASSERT_TRUE(ok->ready());
  ASSERT_NE(ok->kernel(), nullptr);
  EXPECT_FALSE(ok->kernel()->image.empty());
  ASSERT_TRUE(refused->ready());
  EXPECT_EQ(refused->kernel(), nullptr);
  EXPECT_NE(refused->error().find("NVRTC refused kernel tsr_bad"), std::string::npos) << refused->error();
  EXPECT_EQ(store.stats().failures, 1u);
}

}  // namespace
}  // namespace tessera::device
