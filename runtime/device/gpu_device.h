// GpuDevice: one CUDA device and its primary context (the context the CUDA
// runtime and other libraries in the process share, so that pointers and
// modules can be passed between them). The context is retained on first use,
// not when the device is selected, so that a run that launches nothing on
// the GPU does not pay for creating it.
#pragma once

#include <mutex>

#include "runtime/device/cuda_driver.h"

namespace tessera::device {

class GpuDevice {
 public:
  // `driver` must be available and outlive this object.
  GpuDevice(const CudaDriver& driver, CUdevice device) : driver_(driver), device_(device) {}
  GpuDevice(const GpuDevice&) = delete;
  GpuDevice& operator=(const GpuDevice&) = delete;
  // Releases the primary context if it was retained.
  ~GpuDevice();

  const CudaDriver& driver() const { return driver_; }
  CUdevice device() const { return device_; }
  // The primary context, retained on the first call (thread-safe); throws
  // DeviceError when the driver cannot create it.
  CUcontext context() const;
  // Makes the primary context current on the calling thread (each thread
  // that calls the driver on this device needs it once).
  void make_current() const;

 private:
  const CudaDriver& driver_;
  CUdevice device_;
  mutable std::once_flag retained_;
  mutable CUcontext context_ = nullptr;
};

}  // namespace tessera::device
