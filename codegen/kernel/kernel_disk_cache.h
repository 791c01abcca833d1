// The persistent kernel cache: compiled kernels and tuning results kept on
// disk between runs, so that a second run of a program compiles nothing
// (docs/tensor-jit.md, "Kernel cache").
//
// An entry is one file, <dir>/<kind>-<hash>.bin, named by a hash of its
// identity: everything its contents depend on (the kernel IR's text, the
// emitter's version, the CPU model and features, LLVM's version), which the
// caller spells out as one string. The file holds a header, the identity
// itself (compared in full on every load: a hash collision reads as a miss)
// and the payload with its length and checksum. A file that is missing,
// truncated, of another format version, of another identity or whose
// checksum does not match is a miss: the caller rebuilds the entry and
// stores it again, replacing the bad file. Writes go to a temporary file in
// the same directory that is renamed over the entry, so two processes that
// share the directory each see either no entry or a whole one.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::kir {

class KernelDiskCache {
 public:
  // `dir` empty: the cache is off (every load misses, stores do nothing).
  explicit KernelDiskCache(std::string dir = {}) : dir_(std::move(dir)) {}

  // $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera
  // (empty when none of them can be formed).
  static std::string default_dir();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The payload stored for (kind, identity), or nullopt (a miss; a bad
  // file counts as corrupt as well). Never throws.
  std::optional<std::string> load(std::string_view kind, std::string_view identity) const;
  // Writes the entry atomically; false (and nothing left behind) when the
  // directory cannot be made or written: the cache then only costs time.
  bool store(std::string_view kind, std::string_view identity, std::string_view payload) const;

  // The entry's file (for tests and --dump).
  std::string path(std::string_view kind, std::string_view identity) const;

  // 64-bit FNV-1a, printed as 16 hex digits: a stable hash for file names.
  static std::string hash_hex(std::string_view s);

  struct Counters {
    uint64_t hits = 0, misses = 0, corrupt = 0, writes = 0, write_failures = 0;
  };
  Counters counters() const;

 private:
  std::string dir_;
  // Loads and stores may come from the VM's thread and the background
  // compiler at once.
  mutable std::atomic<uint64_t> hits_{0}, misses_{0}, corrupt_{0}, writes_{0}, write_failures_{0};
};

}  // namespace tessera::kir
