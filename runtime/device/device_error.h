// DeviceError: what the device layer throws when the GPU cannot do what was
// asked (no driver, a failed driver call, NVRTC missing). Its message is a
// sentence a user can act on; the CLI prints it as it is.
#pragma once

#include <stdexcept>

namespace tessera::device {

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tessera::device
