// NcclTransport: the collectives' device transport over NCCL
// (vm/graph/collectives.h, DeviceCommTransport), for tensors a GPU holds.
//
// One GPU per rank: the device of the first tensor it is given (the
// process's GPU, which device selection picks by the rank's local rank,
// OMPI_COMM_WORLD_LOCAL_RANK). The communicator is made at the first step
// it carries, which every rank reaches together (the step's description,
// exchanged over MPI first, says every rank's tensor is on a GPU): rank 0's
// ncclGetUniqueId is broadcast over the MPI transport, then
// ncclCommInitRank.
//
// Each collective runs on a stream of the transport's own, ordered with
// the kernels by events: the stream waits for an event recorded on the
// kernels' stream (after the kernels that produced the input, and every
// earlier use of the blocks the caching allocator hands out), and the
// kernels' stream waits for an event after the collective, so that the
// kernels that read its output follow it. The host polls that event (and
// ncclCommGetAsyncError) until the step's deadline: a step that does not
// complete aborts the communicator (ncclCommAbort) and is a CommTimeout;
// the transport then refuses every later step. The algorithm is NCCL's
// choice (NCCL_ALGO, NCCL_PROTO); NCCL_DEBUG=INFO (with
// NCCL_DEBUG_SUBSYS=TUNING for the choices) prints what it chose.
#pragma once

#include <memory>
#include <string>

#include "runtime/comm/nccl_library.h"
#include "vm/graph/collectives.h"

namespace tessera::comm {

class NcclTransport final : public DeviceCommTransport {
 public:
  // `host` carries the unique id (the MPI transport; it outlives this).
  explicit NcclTransport(CommTransport& host) : host_(host) {}
  ~NcclTransport() override = default;
  std::string describe() const override;
  bool accepts(const DeviceCopy& held) override;
  std::unique_ptr<DeviceCopy> new_block(size_t bytes) override;
  void all_reduce(const DeviceCopy& in, DeviceCopy& out, size_t count, CommElem elem, ReduceOp op,
                  CommDeadline deadline) override;
  void all_gather(const DeviceCopy& in, DeviceCopy& out, size_t bytes_per_rank, CommDeadline deadline) override;
  void reduce_scatter(const DeviceCopy& in, DeviceCopy& out, size_t count_per_rank, CommElem elem, ReduceOp op,
                      CommDeadline deadline) override;
  void broadcast(const DeviceCopy& in, DeviceCopy& out, size_t bytes, int root, CommDeadline deadline) override;
  void send(const DeviceCopy& in, size_t bytes, int dst, CommDeadline deadline) override;
  void recv(DeviceCopy& out, size_t bytes, int src, CommDeadline deadline) override;

 private:
  // Makes the communicator (the first time) and orders the transport's
  // stream after the kernels enqueued so far.
  void begin(CommDeadline deadline);
  // Waits for the work just enqueued (until `deadline`), then orders the
  // kernels' stream after it.
  void end(const char* what, CommDeadline deadline);
  void abort();
  void point_to_point(bool send, void* buf, size_t bytes, int peer, CommDeadline deadline);

  CommTransport& host_;
  const NcclLibrary* nccl_ = nullptr;  // loaded at the first accepts()
  std::string why_;                    // why it serves no device ("" while it may)
  device::DeviceBackend* device_ = nullptr;
  std::unique_ptr<DeviceCopy> prototype_;  // a block of the device's, for new_block
  void* stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::string broken_;  // why the communicator was aborted
};

}  // namespace tessera::comm
