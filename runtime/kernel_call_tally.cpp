#include "runtime/kernel_call_tally.h"

namespace tessera::jit {

void KernelCallTally::add(std::string_view name, const char* device, double ms, uint64_t bytes, uint64_t flops) {
  std::lock_guard<std::mutex> lock(mu_);
  // A loop calls one kernel: the last one is found without a search (map
  // nodes stay put), any other without making a string.
  if (!last_ || last_->name != name) {
    auto it = kernels_.find(name);
    if (it == kernels_.end()) it = kernels_.emplace(std::string(name), Kernel{std::string(name), device}).first;
    last_ = &it->second;
  }
  Kernel& k = *last_;
  ++k.calls;
  k.ms += ms;
  k.bytes += bytes;
  k.flops += flops;
}

std::map<std::string, KernelCallTally::Kernel, std::less<>> KernelCallTally::kernels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kernels_;
}

}  // namespace tessera::jit
