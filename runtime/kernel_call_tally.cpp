#include "runtime/kernel_call_tally.h"

namespace tessera::jit {

void KernelCallTally::add(const std::string& name, const std::string& device, double ms, uint64_t bytes,
                          uint64_t flops) {
  std::lock_guard<std::mutex> lock(mu_);
  Kernel& k = kernels_[name];
  k.name = name;
  k.device = device;
  ++k.calls;
  k.ms += ms;
  k.bytes += bytes;
  k.flops += flops;
}

std::map<std::string, KernelCallTally::Kernel> KernelCallTally::kernels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kernels_;
}

}  // namespace tessera::jit
