#include "codegen/kernel/cpu/kernel_calls.h"

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
  // By the region's text; null: the region could not be compiled.
  std::unordered_map<std::string, std::shared_ptr<const CpuRegionKernel>> kernels;
  KernelCallStats stats;
};

KernelCalls& calls() {
  static KernelCalls* c = new KernelCalls;  // kernels' code must outlive every trace
  return *c;
}

}  // namespace

Value run_kernel_call(const Region& r, std::span<const Value> inputs) {
  KernelCalls& c = calls();
  std::shared_ptr<const CpuRegionKernel> k;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    const std::string key = r.str();
    auto it = c.kernels.find(key);
    if (it == c.kernels.end()) {
      try {
        k = std::make_shared<const CpuRegionKernel>(r, c.compiler);
        ++c.stats.kernels_compiled;
        c.stats.compile_ms += k->compile_ms();
      } catch (const std::exception&) {
        ++c.stats.compile_failures;
      }
      it = c.kernels.emplace(key, k).first;
    }
    k = it->second;
  }
  if (k) {
    if (auto out = k->run(inputs)) {
      std::lock_guard<std::mutex> lock(c.mu);
      ++c.stats.kernel_runs;
      return (*out)[0];
    }
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.stats.reference_runs;
  }
  return run_region_reference(r, inputs).at(0);
}

KernelCallStats kernel_call_stats() {
  KernelCalls& c = calls();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

}  // namespace tessera::kir
