#include "codegen/kernel/cpu/kernel_store.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "codegen/kernel/cpu/emitter_fingerprint.h"
#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/kernel_text.h"

namespace tessera::kir {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

KernelStore::KernelStore() : disk_(std::make_shared<const KernelDiskCache>()) {}

CpuKernelCompiler& KernelStore::compiler() const {
  std::call_once(compiler_made_, [this] { compiler_ = std::make_unique<CpuKernelCompiler>(); });
  return *compiler_;
}

void KernelStore::configure(const std::string& cache_dir, const std::string& dump_dir, DumpPtx dump_ptx) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_dir != disk_->dir()) disk_ = std::make_shared<const KernelDiskCache>(cache_dir);
  dump_dir_ = dump_dir;
  dump_ptx_ = std::move(dump_ptx);
}

std::string KernelStore::identity(const Kernel& k) const {
  return "emitter=" TESSERA_CPU_EMITTER_FINGERPRINT " " + compiler().host_identity() + "\n" + print(k);
}

std::shared_ptr<const StoredKernel> KernelStore::get(Kernel kernel, const std::string& note) {
  auto kp = std::make_shared<const Kernel>(std::move(kernel));
  const Kernel& k = *kp;
  const std::string id = identity(k);
  std::string dump_dir;
  std::shared_ptr<const KernelDiskCache> disk;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = kernels_.find(id); it != kernels_.end()) return it->second;
    dump_dir = dump_dir_;
    disk = disk_;
  }
  // The symbol: one name per identity (each object has a JITDylib of its
  // own, so equal names in two objects do not clash).
  const std::string symbol = "tessera_kernel_" + KernelDiskCache::hash_hex(id);
  auto made = std::make_shared<StoredKernel>();
  made->kernel = std::move(kp);
  made->name = k.name + "-" + KernelDiskCache::hash_hex(id);
  const auto t0 = std::chrono::steady_clock::now();
  std::string llvm_ir;
  if (std::optional<std::string> obj = disk->load("kernel", id)) {
    try {
      made->fn = compiler().load(*obj, symbol);
      made->from_disk = true;
    } catch (const std::exception&) {
      // An object LLVM will not link (a bad file that passed the checksum):
      // compiled again below and overwritten.
    }
  }
  if (!made->fn) {
    KernelObject o = compiler().compile_object(k, symbol, !dump_dir.empty());
    made->fn = compiler().load(o.bytes, symbol);
    disk->store("kernel", id, o.bytes);
    llvm_ir = std::move(o.llvm_ir);
  } else if (!dump_dir.empty()) {
    llvm_ir = compiler().llvm_ir(k);
  }
  made->ms = ms_since(t0);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = kernels_.emplace(id, std::move(made));
  if (inserted) {
    if (it->second->from_disk) {
      ++stats_.from_disk;
      stats_.load_ms += it->second->ms;
    } else {
      ++stats_.compiled;
      stats_.compile_ms.push_back(it->second->ms);
    }
    if (!dump_dir.empty()) dump(id, k, note, llvm_ir);
  }
  return it->second;
}

void KernelStore::dump(const std::string& id, const Kernel& k, const std::string& note, const std::string& llvm_ir) {
  std::error_code ec;
  std::filesystem::create_directories(dump_dir_, ec);
  const std::string base = dump_dir_ + "/kernel-" + k.name + "-" + KernelDiskCache::hash_hex(id);
  std::string head;
  for (size_t pos = 0; pos < note.size();) {
    const size_t nl = note.find('\n', pos);
    head += "// " + note.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
    pos = nl == std::string::npos ? note.size() : nl + 1;
  }
  dump_error_.write(base + ".kir", head + print(k));
  dump_error_.write(base + ".ll", llvm_ir);
  // The CUDA C++ the GPU backend makes of the same kernel (every param a
  // pointer here; a GPU launch passes the region's script scalars by value).
  try {
    const CudaKernelSource cuda = emit_cuda_kernel(k, "region");
    dump_error_.write(base + ".cu", head + cuda.source);
    if (dump_ptx_) dump_error_.write(base + ".ptx", dump_ptx_(cuda));
  } catch (const std::exception& e) {
    dump_error_.write(base + ".cu", head + "// the CUDA emitter refused this kernel: " + e.what() + "\n");
  }
}

std::string KernelStore::dump_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dump_error_.error();
}

std::optional<std::string> KernelStore::load_note(const std::string& kind, const std::string& identity) {
  std::shared_ptr<const KernelDiskCache> disk;
  {
    std::lock_guard<std::mutex> lock(mu_);
    disk = disk_;
  }
  return disk->load(kind, compiler().host_identity() + "\n" + identity);
}

void KernelStore::store_note(const std::string& kind, const std::string& identity, const std::string& text) {
  std::shared_ptr<const KernelDiskCache> disk;
  {
    std::lock_guard<std::mutex> lock(mu_);
    disk = disk_;
  }
  disk->store(kind, compiler().host_identity() + "\n" + identity, text);
}

KernelStore::Stats KernelStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.disk = disk_->counters();
  s.cache_dir = disk_->dir();
  return s;
}

}  // namespace tessera::kir
