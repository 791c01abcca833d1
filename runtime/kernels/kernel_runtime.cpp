#include "runtime/kernels/kernel_runtime.h"

#include <algorithm>

#include "runtime/kernels/kernel_site.h"

namespace tessera::kernels {

struct KernelRuntime::SiteEntry {
  std::shared_ptr<const Region> region;  // kept alive: its address keys the site
  std::unique_ptr<KernelSite> site;
};

KernelRuntime::KernelRuntime() : tuner_(store_), cpu_(std::make_unique<CpuTarget>(store_)) {}

KernelRuntime::~KernelRuntime() { queue_.cancel(); }

void KernelRuntime::configure(const KernelRuntimeConfig& c) {
  config_ = c;
  store_.configure(c.cache_dir);
  cpu_->set_dump_dir(c.dump_dir);
}

void KernelRuntime::set_device(std::shared_ptr<KernelTarget> d) {
  if (d) d->set_recent_events(recent_events_);
  std::lock_guard<std::mutex> lock(mu_);
  device_ = std::move(d);
  resolver_ = nullptr;
  ++generation_;
}

void KernelRuntime::set_device_resolver(DeviceResolver resolve) {
  std::lock_guard<std::mutex> lock(mu_);
  device_ = nullptr;
  resolver_ = std::move(resolve);
  ++generation_;
}

std::shared_ptr<KernelTarget> KernelRuntime::device() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resolver_) return device_;
  }
  // The resolver may take long (a GPU's driver and NVRTC): it runs without
  // mu_ (reports read the counters meanwhile), under resolving_, once.
  std::lock_guard<std::mutex> resolving(resolving_);
  DeviceResolver resolve;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resolver_) return device_;  // resolved by another caller meanwhile
    resolve = resolver_;
    generation = generation_;
  }
  std::shared_ptr<KernelTarget> d = resolve();
  if (d) d->set_recent_events(recent_events_);
  std::lock_guard<std::mutex> lock(mu_);
  if (resolver_ && generation == generation_) {  // not replaced while it ran
    device_ = std::move(d);
    resolver_ = nullptr;
  }
  return device_;
}

std::shared_ptr<KernelTarget> KernelRuntime::installed_device() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_;
}

void KernelRuntime::set_events(std::shared_ptr<jit::JitEventLog> e) { events_ = std::move(e); }

TargetCounters& KernelRuntime::counters(const KernelTarget& t) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<TargetCounters>& c = counters_[t.name()];
  if (!c) c = std::make_unique<TargetCounters>();
  return *c;
}

const TargetCounters& KernelRuntime::counters(const std::string& target) const {
  static const TargetCounters kNone;  // constant zeros, shared by no VM's counting
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counters_.find(target);
  return it == counters_.end() ? kNone : *it->second;
}

void KernelRuntime::note_failure(const KernelTarget& t, const std::string& what) {
  TargetCounters& c = counters(t);
  c.failures.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  std::string& first = first_failure_[t.name()];
  if (first.empty()) first = what;
}

std::string KernelRuntime::first_failure(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = first_failure_.find(target);
  return it == first_failure_.end() ? std::string() : it->second;
}

KernelSite& KernelRuntime::site(const std::shared_ptr<const Region>& r) {
  if (r.get() == last_region_) return *last_site_;
  std::unique_ptr<SiteEntry>& e = sites_[r.get()];
  if (!e) e = std::make_unique<SiteEntry>(SiteEntry{r, std::make_unique<KernelSite>(r, *this)});
  last_region_ = r.get();
  last_site_ = e->site.get();
  return *last_site_;
}

Value KernelRuntime::run(const std::shared_ptr<const Region>& r, std::span<const Value> inputs) {
  return site(r).run(inputs);
}

KernelCallStats KernelRuntime::stats() const {
  const TargetCounters& c = counters(cpu_->name());
  KernelCallStats s;
  s.sites = c.sites.load();
  s.k2_kernels = c.k2.load();
  s.k3_kernels = c.k3.load();
  s.promotions = c.promotions.load();
  s.recompiles = c.recompiles.load();
  s.dynamic_dims = c.dynamic_dims.load();
  s.capped = c.capped.load();
  s.k2_runs = c.k2_runs.load();
  s.k3_runs = c.k3_runs.load();
  s.reference_runs = reference_runs_.load();
  s.compile_failures = c.failures.load();
  s.first_failure = first_failure(cpu_->name());
  s.tensors_not_allocated = c.not_allocated.load();
  s.tune_ms = static_cast<double>(c.tune_us.load()) / 1000.0;
  const KernelStore::Stats st = store_.stats();
  const KernelStore::TargetStats cpu = st.targets.count(cpu_->name()) ? st.targets.at(cpu_->name()) : KernelStore::TargetStats{};
  s.compiled = cpu.compiled;
  s.from_cache = cpu.from_disk;
  for (double ms : cpu.compile_ms) s.compile_ms += ms;
  if (!cpu.compile_ms.empty()) {
    std::vector<double> v = cpu.compile_ms;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    s.compile_median_ms = v[v.size() / 2];
  }
  s.load_ms = cpu.load_ms;
  s.cache_hits = st.disk.hits;
  s.cache_misses = st.disk.misses;
  s.cache_corrupt = st.disk.corrupt;
  s.cache_writes = st.disk.writes;
  s.cache_write_failures = st.disk.write_failures;
  s.cache_dir = st.cache_dir;
  return s;
}

}  // namespace tessera::kernels
