// DeviceCopy: a tensor's elements held in a device's memory (docs/gpu.md,
// "Residency"). The device backend (runtime/device) attaches one
//   - to the output of a kernel it ran on the GPU, so that the elements stay
//     there while further GPU kernels use them; the host buffer is stale
//     meanwhile;
//   - to a host tensor it uploaded for a kernel (a mirror: both copies are
//     current), so that the next kernel that reads it does not upload it
//     again.
// The first host access (TensorObj::data, or a compiled trace's element
// access, which tests for a copy) brings the host buffer up to date (a
// mirror's already is) and drops the copy: the host may write the buffer
// from then on, and a later kernel uploads what it wrote. Every host read or
// write of the elements goes through one of those two, so a dropped copy is
// the whole of invalidation. None of this is visible to scripts (spec §7).
#pragma once

#include <cstddef>

namespace tessera {

class DeviceCopy {
 public:
  virtual ~DeviceCopy() = default;  // gives the device memory back
  // Copies the elements (`bytes` of them) into the host buffer `host`, and
  // waits for them (a mirror does nothing). Throws (a device error) when the
  // device cannot.
  virtual void to_host(void* host, size_t bytes) = 0;
};

}  // namespace tessera
