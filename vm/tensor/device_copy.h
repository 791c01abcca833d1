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
#include <memory>

namespace tessera {

namespace device {
class DeviceBackend;  // runtime/device/device_backend.h
}

class DeviceCopy {
 public:
  virtual ~DeviceCopy() = default;  // gives the device memory back
  // Copies the elements (`bytes` of them) into the host buffer `host`, and
  // waits for them (a mirror does nothing). Throws (a device error) when the
  // device cannot.
  virtual void to_host(void* host, size_t bytes) = 0;

  // For work on the device beside the kernels (the collectives' NCCL
  // transport, runtime/comm/nccl_transport.h); a copy that is not a
  // device's block answers null to each:
  //   - the device that holds the elements, and their address there;
  //   - a new block of `bytes` on the same device, as a kernel's output's
  //     (the host buffer stale until the host reads it), for an output that
  //     stays on the device.
  virtual device::DeviceBackend* device() const { return nullptr; }
  virtual void* device_pointer() const { return nullptr; }
  virtual std::unique_ptr<DeviceCopy> new_block(size_t /*bytes*/) const { return nullptr; }
  // Work on another stream of the device (a collective left in flight)
  // reads or writes the block until `event` (an event of the device's,
  // recorded after that work) completes: the kernels that read the
  // elements, the host's read of them, and whatever uses the block after
  // it is freed wait for the event first (on the kernels' stream, so the
  // host does not wait). The newest event replaces the previous one (a
  // stream runs its work in order).
  virtual void used_until(std::shared_ptr<void> /*event*/) const {}
};

}  // namespace tessera
