#include "runtime/device/pinned_staging.h"

#include <algorithm>
#include <cstring>
#include <deque>

namespace tessera::device {

PinnedStaging::PinnedStaging(StagingLink& link, size_t chunk_bytes) : link_(link), chunk_(std::max<size_t>(chunk_bytes, 1)) {}

PinnedStaging::~PinnedStaging() {
  for (int b = 0; b < kBuffers; ++b) {
    if (!buffers_[b]) continue;
    try {
      if (marked_[b]) link_.wait(b);
    } catch (const std::exception&) {
      // a device that failed: its copies are not coming
    }
    link_.free_pinned(buffers_[b]);
  }
}

bool PinnedStaging::ready() {
  if (tried_) return buffers_[0] != nullptr;
  tried_ = true;
  std::string why;
  for (int b = 0; b < kBuffers; ++b) {
    buffers_[b] = link_.allocate_pinned(chunk_, why);
    if (buffers_[b]) continue;
    for (int k = 0; k < b; ++k) link_.free_pinned(buffers_[k]), buffers_[k] = nullptr;
    stats_.unavailable = why.empty() ? "no pinned host memory" : why;
    return false;
  }
  stats_.pinned_bytes = chunk_ * kBuffers;
  return true;
}

int PinnedStaging::take() {
  const int b = next_;
  next_ = (next_ + 1) % kBuffers;
  if (marked_[b]) link_.wait(b);  // its last copy is done: the host may reuse it
  marked_[b] = false;
  return b;
}

bool PinnedStaging::upload(DevicePtr to, const void* from, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ready()) return false;
  const auto* src = static_cast<const char*>(from);
  for (size_t off = 0; off < bytes; off += chunk_) {
    const size_t n = std::min(chunk_, bytes - off);
    const int b = take();
    std::memcpy(buffers_[b], src + off, n);
    link_.to_device(to + off, buffers_[b], n);
    link_.mark(b);
    marked_[b] = true;
  }
  ++stats_.uploads;
  stats_.bytes += bytes;
  return true;
}

bool PinnedStaging::download(void* to, DevicePtr from, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ready()) return false;
  struct Piece {
    size_t off, n;
    int buffer;
  };
  std::deque<Piece> landing;
  size_t asked = 0;
  auto ask = [&] {
    const size_t n = std::min(chunk_, bytes - asked);
    const int b = take();
    link_.to_host(buffers_[b], from + asked, n);
    link_.mark(b);
    marked_[b] = true;
    landing.push_back({asked, n, b});
    asked += n;
  };
  while (asked < bytes && landing.size() < static_cast<size_t>(kBuffers)) ask();
  auto* dst = static_cast<char*>(to);
  while (!landing.empty()) {
    const Piece p = landing.front();
    landing.pop_front();
    link_.wait(p.buffer);
    marked_[p.buffer] = false;
    std::memcpy(dst + p.off, buffers_[p.buffer], p.n);
    if (asked < bytes) ask();
  }
  ++stats_.downloads;
  stats_.bytes += bytes;
  return true;
}

PinnedStaging::Stats PinnedStaging::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace tessera::device
