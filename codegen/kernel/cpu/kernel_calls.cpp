#include "codegen/kernel/cpu/kernel_calls.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "codegen/kernel/cpu/region_kernel.h"

namespace tessera::kir {

namespace {

struct KernelCalls {
  std::mutex mu;
  CpuKernelCompiler compiler;
  // By the region's text: call sites with equal regions share a kernel.
  std::unordered_map<std::string, std::shared_ptr<const CpuRegionKernel>> kernels;
  uint64_t compiled = 0, failures = 0;
  double compile_ms = 0;
  std::atomic<uint64_t> kernel_runs{0}, reference_runs{0};
};

// A region that could not be compiled: the slot holds this, and calls run by reference.
const int kRefused = 0;

KernelCalls& calls() {
  static KernelCalls* c = new KernelCalls;  // kernels' code must outlive every trace
  return *c;
}

std::shared_ptr<const void> compiled_kernel(const Region& r) {
  KernelCalls& c = calls();
  std::lock_guard<std::mutex> lock(c.mu);
  const std::string key = r.str();
  auto it = c.kernels.find(key);
  if (it == c.kernels.end()) {
    std::shared_ptr<const CpuRegionKernel> k;
    try {
      k = std::make_shared<const CpuRegionKernel>(r, c.compiler);
      ++c.compiled;
      c.compile_ms += k->compile_ms();
    } catch (const std::exception&) {
      ++c.failures;
    }
    it = c.kernels.emplace(key, std::move(k)).first;
  }
  if (!it->second) return std::shared_ptr<const void>(std::shared_ptr<const void>{}, &kRefused);
  return it->second;
}

}  // namespace

Value run_kernel_call(const Region& r, std::shared_ptr<const void>& cache, std::span<const Value> inputs) {
  KernelCalls& c = calls();
  if (!cache) cache = compiled_kernel(r);
  if (cache.get() != &kRefused) {
    const auto* k = static_cast<const CpuRegionKernel*>(cache.get());
    if (auto out = k->run(inputs)) {
      c.kernel_runs.fetch_add(1, std::memory_order_relaxed);
      return (*out)[0];
    }
  }
  c.reference_runs.fetch_add(1, std::memory_order_relaxed);
  return run_region_reference(r, inputs).at(0);
}

KernelCallStats kernel_call_stats() {
  KernelCalls& c = calls();
  std::lock_guard<std::mutex> lock(c.mu);
  return KernelCallStats{c.compiled, c.compile_ms, c.kernel_runs.load(), c.reference_runs.load(), c.failures};
}

}  // namespace tessera::kir
