#include "codegen/kernel/kernel_disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::kir {

namespace {

// The file format's first line; a new format gets a new number, and old
// files then read as misses.
constexpr std::string_view kMagic = "tessera-kernel-cache 1\n";

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The entry: magic, "<identity length>\n", identity, "<payload length>\n",
// payload, "<payload checksum>\n".
std::string encode(std::string_view identity, std::string_view payload) {
  std::string out(kMagic);
  out += std::to_string(identity.size()) + "\n";
  out += identity;
  out += std::to_string(payload.size()) + "\n";
  out += payload;
  out += KernelDiskCache::hash_hex(payload) + "\n";
  return out;
}

// Reads a "<decimal>\n" field at `pos`; nullopt on anything else.
std::optional<size_t> length_at(std::string_view s, size_t& pos) {
  const size_t nl = s.find('\n', pos);
  if (nl == std::string_view::npos || nl == pos || nl - pos > 19) return std::nullopt;
  size_t v = 0;
  for (size_t i = pos; i < nl; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<size_t>(s[i] - '0');
  }
  pos = nl + 1;
  return v;
}

// The payload of a well-formed entry of this identity, else nullopt.
std::optional<std::string> decode(std::string_view s, std::string_view identity) {
  if (s.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  size_t pos = kMagic.size();
  auto id_len = length_at(s, pos);
  if (!id_len || *id_len > s.size() - pos || s.substr(pos, *id_len) != identity) return std::nullopt;
  pos += *id_len;
  auto len = length_at(s, pos);
  if (!len || *len > s.size() - pos) return std::nullopt;
  std::string_view payload = s.substr(pos, *len);
  pos += *len;
  if (s.substr(pos) != KernelDiskCache::hash_hex(payload) + "\n") return std::nullopt;
  return std::string(payload);
}

}  // namespace

std::string KernelDiskCache::default_dir() {
  if (const char* d = std::getenv("TESSERA_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessera";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessera";
  return {};
}

std::string KernelDiskCache::hash_hex(std::string_view s) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(s)));
  return buf;
}

std::string KernelDiskCache::path(std::string_view kind, std::string_view identity) const {
  return dir_ + "/" + std::string(kind) + "-" + hash_hex(identity) + ".bin";
}

std::optional<std::string> KernelDiskCache::load(std::string_view kind, std::string_view identity) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(path(kind, identity), std::ios::binary);
  if (!in) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  std::optional<std::string> payload = decode(buf.str(), identity);
  if (!payload) {
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  return payload;
}

bool KernelDiskCache::store(std::string_view kind, std::string_view identity, std::string_view payload) const {
  if (!enabled()) return false;
  auto fail = [&] {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return fail();
  const std::string target = path(kind, identity);
  // mkstemp: a name of this process's own, in the target's directory (a
  // rename across file systems would not be atomic).
  std::string tmp = target + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return fail();
  ::fchmod(fd, 0644);  // mkstemp's 0600 would keep the entry from other users of a shared cache
  const std::string data = encode(identity, payload);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  // No fsync: after a power loss an entry may be empty or partial, which
  // reads as corrupt and is rebuilt; processes see whole files either way.
  const bool written = done == data.size();
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), target.c_str()) != 0) {
    std::remove(tmp.c_str());
    return fail();
  }
  writes_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

KernelDiskCache::Counters KernelDiskCache::counters() const {
  return Counters{hits_.load(), misses_.load(), corrupt_.load(), writes_.load(), write_failures_.load()};
}

}  // namespace tessera::kir
