// KernelCallTally: per fused kernel (kir::region_report_id), its calls, the
// time they took, and what they moved and computed, summed from the
// timeline's spans of the calls (kir::KernelEventSink::kernel_span): what
// --metrics reports as each kernel's achieved GB/s and GFLOP/s.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace tessera::jit {

class KernelCallTally {
 public:
  struct Kernel {
    std::string name;  // the span's: "kernel k1a2b3c4d5e6 (mul add tanh)"
    std::string device;
    uint64_t calls = 0;
    double ms = 0;
    uint64_t bytes = 0, flops = 0;
  };
  void add(std::string_view name, const char* device, double ms, uint64_t bytes, uint64_t flops);
  std::map<std::string, Kernel, std::less<>> kernels() const;  // by name

 private:
  mutable std::mutex mu_;
  std::map<std::string, Kernel, std::less<>> kernels_;
  Kernel* last_ = nullptr;  // the kernel of the last call
};

}  // namespace tessera::jit
