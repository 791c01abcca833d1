// GpuCrashCapture (runtime/kernels/gpu_crash_capture.h): a crash directory
// with what a faulting call ran, and the recent launches a target keeps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/kernel/cuda/cuda_region.h"
#include "codegen/kernel/lower_region.h"
#include "runtime/kernels/gpu_crash_capture.h"

namespace tessera::kernels {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RecentLaunches, KeepsTheLastSixteenOldestFirst) {
  RecentLaunches r;
  for (int i = 0; i < 20; ++i) r.add("launch " + std::to_string(i));
  const std::vector<std::string> l = r.lines();
  ASSERT_EQ(l.size(), RecentLaunches::kKept);
  EXPECT_EQ(l.front(), "launch 4");
  EXPECT_EQ(l.back(), "launch 19");
}

// A region's kernel, lowered and emitted as the GPU target does, written to
// a crash directory under $TESSERA_CRASH_DIR: every file, the message naming it.
TEST(GpuCrashCapture, WritesTheRegionKernelsAndLaunch) {
  Region r;
  const int n = r.new_symbol();
  const int x = r.add_tensor_input(DType::F32, {n});
  r.outputs = {*r.add(OpId::Tanh, {x})};
  const kir::Kernel k = kir::lower_region(r, "region", {});
  const kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "tsr_region", kir::cuda_target_for(r));
  GpuCrashReport c;
  c.error = "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)";
  c.device = "a test GPU";
  c.region = &r;
  c.kernels.push_back({"region", &k, &src, {3, 1, 1}});
  c.variant = "tile=1024 threads=256";
  c.tier = "K3";
  c.dims = {3000};
  c.inputs = {"f32 [3000]"};
  c.recent = {"tsr_region K3: 3 blocks", "tsr_region K3: 3 blocks"};
  c.events = {"[jit 1.000] kernel.compiled tier=K2", "[jit 2.000] kernel.promoted dims=[3000]"};
  const fs::path root = fs::temp_directory_path() / ("tessera-crash-unit-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ::setenv("TESSERA_CRASH_DIR", root.c_str(), 1);
  const std::string msg = gpu_crash_message("a kernel faulted", c);
  ::unsetenv("TESSERA_CRASH_DIR");
  EXPECT_EQ(msg.rfind("a kernel faulted: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS", 0), 0u) << msg;
  ASSERT_NE(msg.find(root.string()), std::string::npos) << msg;
  fs::path dir;
  for (const auto& e : fs::directory_iterator(root)) dir = e.path();
  EXPECT_EQ(read(dir / "error.txt"), c.error + "\n");
  EXPECT_EQ(read(dir / "region.txt"), r.str() + "\n");
  EXPECT_EQ(read(dir / "region.cu"), src.source);
  EXPECT_NE(read(dir / "region.kir").find("@region"), std::string::npos);
  const std::string launch = read(dir / "launch.json");
  for (const char* want : {"\"device\": \"a test GPU\"", "\"tier\": \"K3\"", "\"entry\": \"tsr_region\"", "\"kind\": \"dim\"",
                           "\"f32 [3000]\""})
    EXPECT_NE(launch.find(want), std::string::npos) << want << "\n" << launch;
  EXPECT_EQ(read(dir / "recent-launches.txt"), "tsr_region K3: 3 blocks\ntsr_region K3: 3 blocks\n");
  EXPECT_EQ(read(dir / "recent-events.txt"), "[jit 1.000] kernel.compiled tier=K2\n[jit 2.000] kernel.promoted dims=[3000]\n");
  fs::remove_all(root);
}

// Where the directory cannot be made, the message says why instead.
TEST(GpuCrashCapture, AnUnwritableDirectoryIsSaidInTheMessage) {
  GpuCrashReport c;
  c.error = "a fault";
  ::setenv("TESSERA_CRASH_DIR", "/proc/tessera-no-such-place", 1);
  const std::string msg = gpu_crash_message("a kernel faulted", c);
  ::unsetenv("TESSERA_CRASH_DIR");
  EXPECT_NE(msg.find("(no crash capture: "), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera::kernels
