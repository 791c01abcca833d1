#include "runtime/kernels/device_kernel_profile.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace tessera::kernels {

namespace {

// CUPTI's activity serves the process, and a process may hold several VMs
// (the embedding API), each with its GPU target's profile: ids are unique
// in the process, and the records one profile's flush takes for another's
// ids wait here until that one flushes (at most kOrphansKept).
std::atomic<uint64_t> next_id{1};
std::mutex orphans_mu;
std::vector<device::DeviceKernelRecord> orphans;
constexpr size_t kOrphansKept = 1 << 16;

}  // namespace

RooflinePoint roofline_of(const ProfiledKernel& k, const device::DeviceBackend::Limits& l) {
  RooflinePoint p;
  if (l.dram_gb_s <= 0 || k.device_ms <= 0) return p;
  p.peak_gflop_s = k.tensor_cores && l.tensor_gflop_s > 0 ? l.tensor_gflop_s : l.fp32_gflop_s;
  if (k.flops > 0 && k.bytes > 0 && p.peak_gflop_s > 0) {
    p.intensity = static_cast<double>(k.flops) / static_cast<double>(k.bytes);
    p.bound = std::min(p.peak_gflop_s, p.intensity * l.dram_gb_s);
    p.fraction = k.gflop_s() / p.bound;
  } else if (k.bytes > 0) {
    p.bound = l.dram_gb_s;  // a kernel that only moves data: its bandwidth's
    p.fraction = k.gb_s() / p.bound;
  }
  return p;
}

double theoretical_occupancy(int64_t threads, uint32_t registers, int64_t smem, const device::DeviceBackend::Limits& l) {
  if (threads <= 0 || l.max_threads_per_sm <= 0) return 0;
  const int64_t warps = (threads + 31) / 32;
  int64_t blocks = l.max_threads_per_sm / (warps * 32);
  if (l.max_blocks_per_sm > 0) blocks = std::min<int64_t>(blocks, l.max_blocks_per_sm);
  if (registers > 0 && l.registers_per_sm > 0) {
    // Registers are allocated per warp in units of 256.
    const int64_t per_warp = (int64_t{registers} * 32 + 255) / 256 * 256;
    blocks = std::min<int64_t>(blocks, l.registers_per_sm / (per_warp * warps));
  }
  if (smem > 0 && l.shared_bytes_per_sm > 0) blocks = std::min<int64_t>(blocks, l.shared_bytes_per_sm / smem);
  return std::clamp(static_cast<double>(blocks * warps * 32) / l.max_threads_per_sm, 0.0, 1.0);
}

DeviceKernelProfile::DeviceKernelProfile(device::KernelActivity* activity, std::string why_not,
                                         device::DeviceBackend::Limits limits)
    : activity_(activity), why_not_(std::move(why_not)), limits_(std::move(limits)) {}

uint64_t DeviceKernelProfile::begin(LaunchNote note) {
  if (!activity_) return 0;
  uint64_t id;
  {
    id = next_id.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    notes_.emplace(id, std::move(note));
  }
  activity_->push(id);
  return id;
}

void DeviceKernelProfile::end() {
  if (activity_) activity_->pop();
}

void DeviceKernelProfile::flush(bool synced) {
  if (!activity_) return;
  std::vector<device::DeviceKernelRecord> records = activity_->flush();
  {
    std::lock_guard<std::mutex> lock(orphans_mu);
    records.insert(records.end(), std::make_move_iterator(orphans.begin()), std::make_move_iterator(orphans.end()));
    orphans.clear();
  }
  std::vector<device::DeviceKernelRecord> others;
  SpanSink sink;
  std::vector<std::pair<device::DeviceKernelRecord, LaunchNote>> spans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sink = sink_;
    uint64_t newest = 0;
    for (device::DeviceKernelRecord& r : records) {
      auto it = notes_.find(r.external_id);
      if (it == notes_.end()) {
        // Another profile's (or, with no id, not launched by a fused call).
        if (r.external_id && r.external_id < next_id.load(std::memory_order_relaxed)) others.push_back(std::move(r));
        continue;
      }
      ++records_;
      newest = std::max(newest, r.external_id);
      const LaunchNote& n = it->second;
      id_ms_[r.external_id] += r.ms();
      if (sink) spans.emplace_back(r, n);
      if (n.tuning) continue;
      site_ms_[n.site_id] += r.ms();
      ProfiledKernel& k = kernels_[{n.site, n.tier, n.variant, r.name}];
      if (!k.calls) {
        k.site = n.site, k.name = r.name, k.tier = n.tier, k.variant = n.variant;
      }
      ++k.calls;
      k.device_ms += r.ms();
      if (auto w = n.work.find(r.name); w != n.work.end()) {
        k.bytes += w->second.bytes;
        k.flops += w->second.flops;
        k.tensor_cores = w->second.tensor_cores;
      }
      k.registers = r.registers;
      k.static_smem = r.static_smem;
      k.dynamic_smem = r.dynamic_smem;
      k.threads = r.threads_per_block();
      k.blocks = r.blocks();
    }
    // After a sync, notes older than the newest id with records have had
    // all their records (or launched nothing).
    if (synced)
      for (auto it = notes_.begin(); it != notes_.end() && it->first < newest;) it = notes_.erase(it);
    if (id_ms_.size() > 4096) id_ms_.erase(id_ms_.begin(), std::next(id_ms_.begin(), 2048));
  }
  if (!others.empty()) {
    std::lock_guard<std::mutex> lock(orphans_mu);
    for (auto& r : others)
      if (orphans.size() < kOrphansKept) orphans.push_back(std::move(r));
  }
  for (auto& [r, n] : spans) sink(n.site, r, n);
}

double DeviceKernelProfile::ms_of(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = id_ms_.find(id);
  return it == id_ms_.end() ? 0 : it->second;
}

double DeviceKernelProfile::site_ms(const std::string& site_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = site_ms_.find(site_id);
  return it == site_ms_.end() ? 0 : it->second;
}

void DeviceKernelProfile::set_metrics(const std::string& site, const std::string& name, const std::string& variant,
                                      KernelMetricValues m) {
  std::lock_guard<std::mutex> lock(mu_);
  metrics_[{site, name, variant}] = m;
}

std::vector<ProfiledKernel> DeviceKernelProfile::kernels() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ProfiledKernel> out;
  for (const auto& [key, k] : kernels_) {
    out.push_back(k);
    out.back().occupancy = theoretical_occupancy(k.threads, k.registers, int64_t{k.static_smem} + k.dynamic_smem, limits_);
    if (auto m = metrics_.find({k.site, k.name, k.variant}); m != metrics_.end()) out.back().metrics = m->second;
  }
  return out;
}

uint64_t DeviceKernelProfile::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void DeviceKernelProfile::set_span_sink(SpanSink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

}  // namespace tessera::kernels
