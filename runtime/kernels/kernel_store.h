// KernelStore: where one VM's kernels come from, for every target (Triton's
// cache): looked up by (target, identity) among the kernels this VM already
// has, else in the persistent kernel cache (kernel_disk_cache.h: the
// target's image, an object file or a cubin), else compiled by the target
// and its image written to the cache. The target also loads an image (links
// the CPU's object) once; what it made is kept with the kernel. Small notes
// (the tuner's choices) are kept in the same cache. Thread-safe: the VM's
// thread and the background compiler share it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/kernel_disk_cache.h"

namespace tessera::kernels {

// How a target makes a kernel the store has not got.
struct KernelRecipe {
  std::string kind;  // the disk cache's kind of entry ("object", "cubin", "emulated")
  // The image; throws when the target refuses the kernel.
  std::function<std::string()> compile;
  // What the target makes of an image, kept with the kernel (the CPU's
  // linked function); empty: nothing. Throws for an image that will not
  // load (a damaged cache entry: compiled again).
  std::function<std::shared_ptr<const void>(const std::string& image)> load;
};

struct StoredKernel {
  std::string name;   // "region-HASH": its --dump files' and the event log's name
  std::string image;  // what the cache keeps
  std::shared_ptr<const void> loaded;
  bool from_disk = false;  // from the persistent cache, not compiled
  double ms = 0;           // compiling (or reading and loading) it
  // Whether a site has reported it (kernel.compiled): once per kernel,
  // though several sites share it.
  mutable std::atomic<bool> reported{false};
  mutable std::atomic<bool> dumped{false};  // its --dump files were written
};

class KernelStore {
 public:
  // `cache_dir` empty: no persistent cache.
  explicit KernelStore(const std::string& cache_dir = {});
  void configure(const std::string& cache_dir);

  // The kernel of `target` ("cpu", "cuda", ...) with this identity (the
  // whole input of its compile: kernel text, compiler, architecture);
  // `name` prefixes it ("region"). Throws what the recipe throws.
  std::shared_ptr<const StoredKernel> get(const std::string& target, const std::string& identity,
                                          const std::string& name, const KernelRecipe& recipe);

  std::optional<std::string> load_note(const std::string& kind, const std::string& identity) const;
  void store_note(const std::string& kind, const std::string& identity, const std::string& text) const;

  struct TargetStats {
    uint64_t compiled = 0, from_disk = 0, from_memory = 0, failures = 0;
    std::vector<double> compile_ms;  // one per compiled kernel
    double load_ms = 0;              // reading and loading kernels from the disk cache
  };
  struct Stats {
    std::map<std::string, TargetStats> targets;
    kir::KernelDiskCache::Counters disk;
    std::string cache_dir;  // empty: the cache is off
  };
  Stats stats() const;
  TargetStats stats(const std::string& target) const;

 private:
  std::shared_ptr<const kir::KernelDiskCache> disk() const;

  mutable std::mutex mu_;
  std::shared_ptr<const kir::KernelDiskCache> disk_;  // replaced by configure, in use elsewhere
  // By target and identity; kept for the VM's life (traces hold their kernels' code).
  std::unordered_map<std::string, std::shared_ptr<const StoredKernel>> kernels_;
  std::map<std::string, TargetStats> stats_;
};

}  // namespace tessera::kernels
