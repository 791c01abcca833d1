#include "codegen/kernel/cpu/kernel_calls.h"

#include <algorithm>

#include "codegen/kernel/cpu/kernel_site.h"

namespace tessera::kir {

KernelCalls& KernelCalls::process() {
  // Never destroyed: kernels' code must outlive every trace, and the
  // background thread may still wait on its queue at exit.
  static KernelCalls* c = new KernelCalls;
  return *c;
}

void KernelCalls::configure(const KernelCallConfig& c) {
  std::lock_guard<std::mutex> lock(mu_);
  config_ = c;
  store_.configure(c.cache_dir, c.dump_dir, c.dump_ptx);
}

void KernelCalls::set_device(std::shared_ptr<KernelDevice> d) {
  std::lock_guard<std::mutex> lock(mu_);
  device_ = std::move(d);
  resolver_ = nullptr;
  resolver_owner_ = nullptr;
}

void KernelCalls::set_device_resolver(const void* owner, DeviceResolver resolve) {
  std::lock_guard<std::mutex> lock(mu_);
  device_ = nullptr;
  resolver_ = std::move(resolve);
  resolver_owner_ = owner;
}

void KernelCalls::drop_device_resolver(const void* owner) {
  std::lock_guard<std::mutex> lock(mu_);
  if (resolver_owner_ != owner) return;
  resolver_ = nullptr;
  resolver_owner_ = nullptr;
}

std::shared_ptr<KernelDevice> KernelCalls::installed_device() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_;
}

std::shared_ptr<KernelDevice> KernelCalls::device() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resolver_) return device_;
  }
  // The resolver may take long (a GPU's driver and NVRTC) and may call back
  // into KernelCalls: it runs without mu_, under resolving_.
  std::lock_guard<std::mutex> resolving(resolving_);
  DeviceResolver resolve;
  const void* owner = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resolver_) return device_;  // resolved by another caller meanwhile
    resolve = resolver_;
    owner = resolver_owner_;
  }
  std::shared_ptr<KernelDevice> d = resolve();
  std::lock_guard<std::mutex> lock(mu_);
  if (resolver_ && resolver_owner_ == owner) {  // not replaced while it ran
    device_ = std::move(d);
    resolver_ = nullptr;
    resolver_owner_ = nullptr;
  }
  return device_;
}

void KernelCalls::set_events(std::shared_ptr<KernelEventSink> e) {
  std::lock_guard<std::mutex> lock(mu_);
  spans_.store(e && e->wants_spans(), std::memory_order_relaxed);
  events_ = std::move(e);
}

std::shared_ptr<KernelEventSink> KernelCalls::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

KernelCallConfig KernelCalls::config() const {
  std::lock_guard<std::mutex> lock(mu_);
  return config_;
}

void KernelCalls::note_failure(const std::string& what) {
  counters_.failures.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  if (first_failure_.empty()) first_failure_ = what;
}

KernelCallStats KernelCalls::stats() const {
  const Counters& c = counters_;
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
  s.reference_runs = c.reference_runs.load();
  s.compile_failures = c.failures.load();
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.first_failure = first_failure_;
  }
  s.tensors_not_allocated = c.not_allocated.load();
  s.tune_ms = static_cast<double>(c.tune_us.load()) / 1000.0;
  KernelStore::Stats st = store_.stats();
  s.compiled = st.compiled;
  s.from_cache = st.from_disk;
  for (double ms : st.compile_ms) s.compile_ms += ms;
  if (!st.compile_ms.empty()) {
    std::vector<double> v = st.compile_ms;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    s.compile_median_ms = v[v.size() / 2];
  }
  s.load_ms = st.load_ms;
  s.cache_hits = st.disk.hits;
  s.cache_misses = st.disk.misses;
  s.cache_corrupt = st.disk.corrupt;
  s.cache_writes = st.disk.writes;
  s.cache_write_failures = st.disk.write_failures;
  s.cache_dir = st.cache_dir;
  return s;
}

Value run_kernel_call(const Region& r, std::shared_ptr<void>& site, std::span<const Value> inputs) {
  if (!site) site = std::make_shared<KernelSite>(r, KernelCalls::process());
  return static_cast<KernelSite*>(site.get())->run(inputs);
}

}  // namespace tessera::kir
