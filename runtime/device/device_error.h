// DeviceError: what the device layer throws when the GPU cannot do what was
// asked (no driver, a failed driver call, NVRTC missing). Its message is a
// sentence a user can act on; the CLI prints it as it is.
#pragma once

#include <stdexcept>

namespace tessera::device {

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A kernel that faulted (an illegal address or instruction, a failed
// launch, a trap; the emulation's misuses): the device's context is lost,
// nothing more runs on it. Not a reason to give a site to the CPU but the
// script's runtime error, with a crash capture (gpu_crash_capture.h).
struct DeviceFault : DeviceError {
  using DeviceError::DeviceError;
};

}  // namespace tessera::device
