#include "runtime/device/gpu_device.h"

namespace tessera::device {

GpuDevice::~GpuDevice() {
  if (context_) driver_.cuDevicePrimaryCtxRelease(device_);
}

CUcontext GpuDevice::context() const {
  // A throwing call leaves the flag unset, so a later call tries again.
  std::call_once(retained_, [this] {
    CUcontext context = nullptr;
    driver_.check(driver_.cuDevicePrimaryCtxRetain(&context, device_), "cuDevicePrimaryCtxRetain");
    context_ = context;
  });
  return context_;
}

void GpuDevice::make_current() const { driver_.check(driver_.cuCtxSetCurrent(context()), "cuCtxSetCurrent"); }

}  // namespace tessera::device
