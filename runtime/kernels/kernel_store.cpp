#include "runtime/kernels/kernel_store.h"

#include <chrono>

namespace tessera::kernels {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

KernelStore::KernelStore(const std::string& cache_dir) : disk_(std::make_shared<const kir::KernelDiskCache>(cache_dir)) {}

void KernelStore::configure(const std::string& cache_dir) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_dir != disk_->dir()) disk_ = std::make_shared<const kir::KernelDiskCache>(cache_dir);
}

std::shared_ptr<const kir::KernelDiskCache> KernelStore::disk() const {
  std::lock_guard<std::mutex> lock(mu_);
  return disk_;
}

std::shared_ptr<const StoredKernel> KernelStore::get(const std::string& target, const std::string& identity,
                                                     const std::string& name, const KernelRecipe& recipe) {
  const std::string key = target + "\n" + identity;
  std::shared_ptr<const kir::KernelDiskCache> disk;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = kernels_.find(key); it != kernels_.end()) {
      ++stats_[target].from_memory;
      return it->second;
    }
    disk = disk_;
  }
  auto made = std::make_shared<StoredKernel>();
  made->name = name + "-" + kir::KernelDiskCache::hash_hex(identity);
  const auto t0 = std::chrono::steady_clock::now();
  if (std::optional<std::string> image = disk->load(recipe.kind, key)) {
    try {
      made->loaded = recipe.load ? recipe.load(*image) : nullptr;
      made->image = std::move(*image);
      made->from_disk = true;
    } catch (const std::exception&) {
      // An image that will not load (a bad file that passed the checksum):
      // compiled again below and overwritten.
    }
  }
  if (!made->from_disk) {
    try {
      made->image = recipe.compile();
      made->loaded = recipe.load ? recipe.load(made->image) : nullptr;
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_[target].failures;
      throw;
    }
    disk->store(recipe.kind, key, made->image);
  }
  made->ms = ms_since(t0);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = kernels_.emplace(key, std::move(made));
  if (inserted) {
    TargetStats& s = stats_[target];
    if (it->second->from_disk) {
      ++s.from_disk;
      s.load_ms += it->second->ms;
    } else {
      ++s.compiled;
      s.compile_ms.push_back(it->second->ms);
    }
  }
  return it->second;
}

std::optional<std::string> KernelStore::load_note(const std::string& kind, const std::string& identity) const {
  return disk()->load(kind, identity);
}

void KernelStore::store_note(const std::string& kind, const std::string& identity, const std::string& text) const {
  disk()->store(kind, identity, text);
}

KernelStore::Stats KernelStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s;
  s.targets = stats_;
  s.disk = disk_->counters();
  s.cache_dir = disk_->dir();
  return s;
}

KernelStore::TargetStats KernelStore::stats(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stats_.find(target);
  return it == stats_.end() ? TargetStats{} : it->second;
}

}  // namespace tessera::kernels
