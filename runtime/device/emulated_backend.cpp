#include "runtime/device/emulated_backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <vector>
#include <fstream>
#include <sstream>

#include "runtime/device/device_error.h"
#include "runtime/device/emulated_stream.h"

namespace tessera::device {

struct EmulatedBackend::Order {
  std::mutex mu;
  uint64_t launches = 0;
  EmulatedStream kernels;
  std::vector<std::unique_ptr<EmulatedStream>> others;
  Order() {
    kernels.kernels = true;
    kernels.launches = &launches;
  }
  // A DeviceFault where the kernels' stream touches memory (device
  // addresses [begin, end)) that work on another stream uses and that the
  // kernels' stream has not waited for.
  void check_touch(const std::string& what, uint64_t begin, uint64_t end) {
    for (const auto& s : others)
      for (uint64_t i = s->n_uses > EmulatedStream::kUses ? s->n_uses - EmulatedStream::kUses : 0; i < s->n_uses; ++i) {
        const EmulatedStream::Use& u = s->uses[i % EmulatedStream::kUses];
        if (u.work > s->work_waited_by_kernels && begin < u.end && u.begin < end)
          throw DeviceFault(what + " before the kernels' stream waited for the work on another stream that uses its "
                            "memory (the host emulation's check of stream order: on a GPU it could read that work's "
                            "output before it is written, or overwrite its input)");
      }
  }
  // Counts a launch of a kernel given the device addresses `pointers`.
  void launched(const std::string& entry, const std::vector<uint64_t>& pointers) {
    std::lock_guard<std::mutex> lock(mu);
    ++launches;
    for (uint64_t p : pointers) check_touch("kernel " + entry + " was launched", p, p + 1);
    for (const auto& s : others)
      if (s->work > s->work_waited_by_kernels) ++s->overlapped_launches;
  }
  void copied(const char* what, uint64_t p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    check_touch(std::string("a copy ") + what + " the device", p, p + (bytes ? bytes : 1));
  }
};

namespace {

using HostEntry = void (*)(void* const*, long long, int, long long);
// ENTRY_encode_map, which the emitter adds to a kernel that takes tensor maps.
using MapEncoder = int (*)(void*, const void*, unsigned, unsigned long long, unsigned long long, unsigned long long,
                           unsigned, unsigned);

// Names each build's and load's directory, across every backend of the
// process: dlopen hands back a library already loaded from the same path.
std::atomic<uint64_t> builds{0};

std::filesystem::path fresh_dir(const char* what) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tessera-gpu-emulation-" + std::to_string(::getpid()) + "-" + what +
                                                    "-" + std::to_string(builds.fetch_add(1)));
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kFlags = "-std=c++17 -O1 -w -fPIC -shared -DTSR_HOST_EMULATION";

class EmulatedKernel : public LaunchableKernel {
 public:
  // The library stays loaded (never dlclosed): a site may launch its kernel until the process ends.
  EmulatedKernel(kir::CudaKernelSource src, HostEntry fn, MapEncoder encode,
                 std::shared_ptr<const std::atomic<EmulatedKernelHook>> hook, std::shared_ptr<EmulatedBackend::Order> order)
      : LaunchableKernel(std::move(src)), fn_(fn), encode_(encode), hook_(std::move(hook)), order_(std::move(order)) {}
  // A misuse the emulation catches (a barrier some threads skip, an
  // address outside shared memory, a wait that never completes) is a
  // kernel that would fault or hang on a GPU. TESSERA_TEST_GPU_FAULT=1
  // makes every launch fault, for the tests of crash capture.
  void launch(int64_t blocks, std::vector<void*>& args) override {
    if (test_fault_) throw DeviceFault("kernel " + source().entry + ": an illegal memory access (TESSERA_TEST_GPU_FAULT=1, a test switch)");
    order_->launched(source().entry, pointers(args));
    const EmulatedKernelHook hook = hook_->load(std::memory_order_acquire);
    const uint64_t start = hook ? steady_ns() : 0;
    try {
      if (blocks > 0) fn_(args.data(), blocks, source().threads, source().shared_bytes);
    } catch (const std::logic_error& e) {
      throw DeviceFault("kernel " + source().entry + " faulted on the host emulation: " + e.what());
    }
    if (hook && blocks > 0) {
      const int32_t grid[3] = {static_cast<int32_t>(blocks), 1, 1}, block[3] = {source().threads, 1, 1};
      hook(source().entry.c_str(), grid, block, 0, static_cast<int32_t>(source().shared_bytes), start, steady_ns());
    }
  }
  bool encode_tensor_map(const kir::TensorMapRequest& rq, kir::TensorMapBytes& m) const override {
    const unsigned elem = rq.elem == kir::Elem::F16 || rq.elem == kir::Elem::BF16 ? 2 : 4;
    return encode_ && encode_(m.bytes, reinterpret_cast<const void*>(rq.base), elem, rq.cols, rq.rows, rq.row_bytes,
                              rq.box_cols, rq.box_rows) != 0;
  }

 private:
  // The device addresses the launch's arguments name (for the check of stream order).
  std::vector<uint64_t> pointers(const std::vector<void*>& args) const {
    std::vector<uint64_t> out;
    const auto& kinds = source().args;
    for (size_t k = 0; k < kinds.size() && k < args.size(); ++k)
      if (kinds[k].kind == kir::CudaArgKind::Pointer) out.push_back(*static_cast<const uint64_t*>(args[k]));
    return out;
  }

  HostEntry fn_;
  const bool test_fault_ = [] {
    const char* v = std::getenv("TESSERA_TEST_GPU_FAULT");
    return v && std::string(v) == "1";
  }();
  static uint64_t steady_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  MapEncoder encode_;  // the library's (the emulation's encoding); null: its kernel takes no maps
  std::shared_ptr<const std::atomic<EmulatedKernelHook>> hook_;  // the backend's
  std::shared_ptr<EmulatedBackend::Order> order_;                // the backend's
};

}  // namespace

class EmulatedBackend::HostMemory : public DeviceMemoryBackend {
 public:
  explicit HostMemory(size_t cap) : cap_(cap) {}
  DevicePtr allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (cap_ && used_ + bytes > cap_) return 0;  // out of device memory
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) return 0;
    used_ += bytes;
    sizes_[reinterpret_cast<DevicePtr>(p)] = bytes;
    return reinterpret_cast<DevicePtr>(p);
  }
  void release(DevicePtr p) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = sizes_.find(p); it != sizes_.end()) {
      used_ -= it->second;
      sizes_.erase(it);
    }
    std::free(reinterpret_cast<void*>(p));
  }
  void synchronize() override {}

 private:
  std::mutex mu_;
  size_t cap_, used_ = 0;
  std::unordered_map<DevicePtr, size_t> sizes_;
};

namespace {

size_t cap_from_environment() {
  const char* cap = std::getenv("TESSERA_GPU_EMULATION_MEMORY");
  return cap && *cap ? static_cast<size_t>(std::strtoull(cap, nullptr, 10)) : 0;
}

}  // namespace

EmulatedBackend::EmulatedBackend(size_t memory_cap)
    : memory_(std::make_unique<HostMemory>(memory_cap ? memory_cap : cap_from_environment())),
      order_(std::make_shared<Order>()) {
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
  order_->copied("to", to, bytes);
  if (bytes) std::memcpy(reinterpret_cast<void*>(to), from, bytes);
}

void EmulatedBackend::download(void* to, DevicePtr from, size_t bytes) {
  // TESSERA_TEST_GPU_FAULT=download:N: the Nth download (and every one
  // after) faults, as a GPU reports a kernel's fault at the next copy that
  // waits for it: the tests of a fault surfacing where a compiled trace
  // reads a tensor's elements.
  static const long fault_at = [] {
    const char* v = std::getenv("TESSERA_TEST_GPU_FAULT");
    return v && std::strncmp(v, "download:", 9) == 0 ? std::atol(v + 9) : 0L;
  }();
  static std::atomic<long> downloads{0};
  if (fault_at > 0 && ++downloads >= fault_at)
    throw DeviceFault("a copy to the host: an illegal memory access (TESSERA_TEST_GPU_FAULT=download:" +
                      std::to_string(fault_at) + ", a test switch)");
  before_host_wait();  // a GPU's copy to the host waits for the kernels' stream
  order_->copied("from", from, bytes);
  if (bytes) std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
}

std::string EmulatedBackend::image_identity(const kir::CudaKernelSource& src) const {
  return "emulated " + cxx_ + " " + kFlags + "\n" + kir::cuda_wrapper_header() + "\n" + kir::cuda_host_prelude() + "\n" +
         src.source;
}

std::string EmulatedBackend::compile(const kir::CudaKernelSource& src) {
  namespace fs = std::filesystem;
  const fs::path dir = fresh_dir("build");
  std::ofstream(dir / "tessera_cuda.h") << kir::cuda_wrapper_header();
  std::ofstream(dir / "tessera_cuda_host.h") << kir::cuda_host_prelude();
  std::ofstream(dir / "kernel.cpp") << src.source;
  const std::string so = (dir / "kernel.so").string(), log = (dir / "compile.log").string();
  const std::string cmd = cxx_ + " " + kFlags + " -I" + dir.string() + " " + (dir / "kernel.cpp").string() + " -o " +
                          so + " -lboost_context > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string image = rc == 0 ? read_file(so) : std::string();
  const std::string error = rc != 0 ? "the host compiler refused kernel " + src.entry + " (" + cmd + "):\n" + read_file(log)
                                    : std::string();
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!error.empty()) throw DeviceError(error);
  return image;
}

std::shared_ptr<LaunchableKernel> EmulatedBackend::load(const kir::CudaKernelSource& src, const std::string& image) {
  namespace fs = std::filesystem;
  const fs::path dir = fresh_dir("load");
  const std::string so = (dir / "kernel.so").string();
  std::ofstream(so, std::ios::binary) << image;
  std::string error;
  void* handle = nullptr;
  HostEntry fn = nullptr;
  if (!(handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL))) {
    error = std::string("dlopen of the emulated kernel: ") + dlerror();
  } else if (!(fn = reinterpret_cast<HostEntry>(dlsym(handle, (src.entry + "_host").c_str())))) {
    error = "the emulated kernel has no " + src.entry + "_host";
  }
  MapEncoder encode = nullptr;
  if (error.empty() && std::any_of(src.args.begin(), src.args.end(),
                                   [](const kir::CudaArg& a) { return a.kind == kir::CudaArgKind::TensorMap; }) &&
      !(encode = reinterpret_cast<MapEncoder>(dlsym(handle, (src.entry + "_encode_map").c_str()))))
    error = "the emulated kernel takes tensor maps and has no " + src.entry + "_encode_map";
  std::error_code ec;
  fs::remove_all(dir, ec);  // the library stays mapped
  if (!error.empty()) throw DeviceError(error);
  return std::make_shared<EmulatedKernel>(src, fn, encode, hook_, order_);
}

void* EmulatedBackend::create_stream() {
  std::lock_guard<std::mutex> lock(order_->mu);
  EmulatedStream* s = order_->others.emplace_back(std::make_unique<EmulatedStream>()).get();
  s->launches = &order_->launches;
  return s;
}

void* EmulatedBackend::record_event(void* stream) {
  std::lock_guard<std::mutex> lock(order_->mu);
  auto* s = stream ? static_cast<EmulatedStream*>(stream) : &order_->kernels;
  auto* e = new EmulatedEvent();
  e->stream = s;
  e->launches = order_->launches;
  e->work = s->work;
  e->never = s->stalled;
  return e;
}

bool EmulatedBackend::event_done(void* event) { return !static_cast<const EmulatedEvent*>(event)->never; }

void EmulatedBackend::stream_wait(void* stream, void* event) {
  std::lock_guard<std::mutex> lock(order_->mu);
  auto* s = stream ? static_cast<EmulatedStream*>(stream) : &order_->kernels;
  const auto* e = static_cast<const EmulatedEvent*>(event);
  ++s->waits;
  s->waited_launches = e->launches;
  s->waited_kernels = e->stream == &order_->kernels;
  if (s == &order_->kernels && e->stream != s)
    e->stream->work_waited_by_kernels = std::max(e->stream->work_waited_by_kernels, e->work);
}

void EmulatedBackend::destroy_event(void* event) { delete static_cast<EmulatedEvent*>(event); }

void EmulatedBackend::set_emulated_kernel_hook(EmulatedKernelHook hook) { hook_->store(hook, std::memory_order_release); }

DeviceBackend::Limits EmulatedBackend::limits() const {
  // The emulation runs no faster than the host, but its kernels are
  // reported against a GPU's peaks (an H100 SXM's, from NVIDIA's data
  // sheet) so that the roofline view and its warnings are tested as a GPU
  // run shows them.
  Limits l;
  l.dram_gb_s = 3350;
  l.fp32_gflop_s = 66900;
  l.tensor_gflop_s = 989000;
  l.sms = 132;
  l.max_threads_per_sm = 2048;
  l.max_blocks_per_sm = 32;
  l.registers_per_sm = 65536;
  l.shared_bytes_per_sm = 228 * 1024;
  l.source = "an H100 SXM's data sheet (the host emulation stands in for a GPU)";
  return l;
}

void EmulatedBackend::matmul(const GemmDesc&) {
  throw DeviceError("the emulation computes products on the host (host_memory)");
}

}  // namespace tessera::device
