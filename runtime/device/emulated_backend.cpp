#include "runtime/device/emulated_backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/device/device_error.h"

namespace tessera::device {

namespace {

using HostEntry = void (*)(void* const*, long long, int, long long);

// Names each build's directory, across every backend of the process: dlopen
// hands back a library already loaded from the same path.
std::atomic<uint64_t> builds{0};

class EmulatedKernel : public LaunchableKernel {
 public:
  // The library stays loaded (never dlclosed): a site may launch its kernel until the process ends.
  EmulatedKernel(kir::CudaKernelSource src, HostEntry fn) : LaunchableKernel(std::move(src)), fn_(fn) {}
  void launch(int64_t blocks, std::vector<void*>& args) override {
    if (blocks > 0) fn_(args.data(), blocks, source().threads, source().shared_bytes);
  }

 private:
  HostEntry fn_;
};

}  // namespace

class EmulatedBackend::HostMemory : public DeviceMemoryBackend {
 public:
  DevicePtr allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    return reinterpret_cast<DevicePtr>(p);
  }
  void release(DevicePtr p) override { std::free(reinterpret_cast<void*>(p)); }
  void synchronize() override {}
};

EmulatedBackend::EmulatedBackend() : memory_(std::make_unique<HostMemory>()) {
  alloc_ = std::make_unique<DeviceAllocator>(*memory_);
  const char* cxx = std::getenv("TESSERA_EMULATION_CXX");
  cxx_ = cxx && *cxx ? cxx : "c++";
}

EmulatedBackend::~EmulatedBackend() = default;

std::string EmulatedBackend::describe() const {
  return "host emulation of a GPU (TESSERA_GPU_EMULATION=1: generated CUDA C++ compiled by " + cxx_ +
         " and run on the CPU, for testing)";
}

void EmulatedBackend::upload(DevicePtr to, const void* from, size_t bytes) {
  if (bytes) std::memcpy(reinterpret_cast<void*>(to), from, bytes);
}

void EmulatedBackend::download(void* to, DevicePtr from, size_t bytes) {
  if (bytes) std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
}

std::shared_ptr<LaunchableKernel> EmulatedBackend::build(const kir::CudaKernelSource& src) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path dir = fs::temp_directory_path() / ("tessera-gpu-emulation-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(builds.fetch_add(1)));
  fs::create_directories(dir);
  std::ofstream(dir / "tessera_cuda.h") << kir::cuda_wrapper_header();
  std::ofstream(dir / "tessera_cuda_host.h") << kir::cuda_host_prelude();
  std::ofstream(dir / "kernel.cpp") << src.source;
  const std::string so = (dir / "kernel.so").string(), log = (dir / "compile.log").string();
  const std::string cmd = cxx_ + " -std=c++17 -O1 -w -fPIC -shared -DTSR_HOST_EMULATION -I" + dir.string() + " " +
                          (dir / "kernel.cpp").string() + " -o " + so + " -lboost_context > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string error;
  void* handle = nullptr;
  HostEntry fn = nullptr;
  if (rc != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    error = "the host compiler refused kernel " + src.entry + " (" + cmd + "):\n" + text.str();
  } else if (!(handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL))) {
    error = std::string("dlopen of the emulated kernel: ") + dlerror();
  } else if (!(fn = reinterpret_cast<HostEntry>(dlsym(handle, (src.entry + "_host").c_str())))) {
    error = "the emulated kernel has no " + src.entry + "_host";
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!error.empty()) throw DeviceError(error);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++built_;
    build_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return std::make_shared<EmulatedKernel>(src, fn);
}

void EmulatedBackend::matmul_f32(int64_t, int64_t, int64_t, int64_t, DevicePtr, int64_t, DevicePtr, int64_t, DevicePtr,
                                 int64_t) {
  throw DeviceError("the emulation computes products on the host (host_memory)");
}

DeviceBackend::BuildStats EmulatedBackend::build_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  BuildStats b;
  b.built = built_;
  b.build_ms = build_ms_;
  b.compiler = cxx_ + " (host emulation)";
  return b;
}

}  // namespace tessera::device
