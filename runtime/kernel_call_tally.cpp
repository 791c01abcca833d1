#include "runtime/kernel_call_tally.h"

namespace tessera::jit {

void KernelCallTally::add(std::string_view name, const char* device, double ms, uint64_t bytes, uint64_t flops) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kernels_.find(name);  // no string made for a kernel seen before
  if (it == kernels_.end()) it = kernels_.emplace(std::string(name), Kernel{std::string(name), device}).first;
  Kernel& k = it->second;
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
