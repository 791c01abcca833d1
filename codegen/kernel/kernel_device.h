// KernelDevice: a device other than the host CPU that runs the JIT's fused
// calls. The GPU backend (runtime/device/gpu_kernel_device.h) installs one
// in KernelCalls when --device selects a GPU; codegen calls it through this
// interface, a layer below the runtime.
//
// A call site asks the device first. The device answers with the region's
// output, computed there (the output's elements may stay on the device:
// vm/tensor/device_copy.h), or with nothing, and why: its kernel is still
// being compiled (the CPU's kernels run the call meanwhile, as they do while
// a K3 kernel is compiled), or the device cannot run this region at all
// (counted, with the reason, in the device's statistics: never silent).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "vm/graph/region.h"

namespace tessera::kir {

class KernelDevice {
 public:
  virtual ~KernelDevice() = default;
  // `site` is the call site's slot for the device's state (empty at first).
  // Throws what the interpreter's kernels throw for inputs that do not fit.
  virtual std::optional<Value> run(const Region& r, std::shared_ptr<void>& site, std::span<const Value> inputs) = 0;
};

}  // namespace tessera::kir
