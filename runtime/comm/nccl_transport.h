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
// the kernels by events, and is left in flight: the stream waits for an
// event recorded on the kernels' stream (after the kernels that produced
// the input, and every earlier use of the blocks the caching allocator
// hands out); an event recorded after the collective goes to its input's
// and output's device copies (DeviceCopy::used_until), and the kernels'
// stream waits for it only before a kernel reads the output, before the
// host reads it, and before either block is used again once freed. So the
// kernels of independent work enqueued after a collective run beside it.
//
// Deadlines: the host never waits for the GPU without one. A collective in
// flight is checked against its step's deadline at the next collective
// (which also retires the completed ones and waits for the oldest when
// kMaxInFlight are in flight), before every host wait on the kernels'
// stream (DeviceBackend::set_host_wait_hook: a copy to the host, a
// synchronize, a timing), and at the end of the run (complete()). The host
// polls the events (and ncclCommGetAsyncError); a collective that does not
// complete by its deadline aborts the communicator (ncclCommAbort) and is a
// runtime error naming it; the transport then refuses every later step.
// The algorithm is NCCL's choice (NCCL_ALGO, NCCL_PROTO); NCCL_DEBUG=INFO
// (with NCCL_DEBUG_SUBSYS=TUNING for the choices) prints what it chose.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/comm/nccl_library.h"
#include "vm/graph/collectives.h"

namespace tessera::comm {

class NcclTransport final : public DeviceCommTransport {
 public:
  // `host` carries the unique id (the MPI transport; it outlives this).
  explicit NcclTransport(CommTransport& host) : host_(host) {}
  ~NcclTransport() override;
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
  void complete() override;

  // At most this many collectives in flight; the next waits for the oldest.
  static constexpr size_t kMaxInFlight = 16;

 private:
  struct InFlight {
    std::shared_ptr<void> done;  // an event after it on the transport's stream
    const char* what;
    uint64_t call;  // the transport's count of its calls, for the error
    CommDeadline deadline;
  };
  // Makes the communicator (the first time), checks the collectives in
  // flight, and orders the transport's stream after the kernels enqueued so far.
  void begin(CommDeadline deadline);
  // The collective just enqueued, which reads and writes `uses`: left in flight.
  void end(const char* what, CommDeadline deadline, std::initializer_list<const DeviceCopy*> uses);
  // Drops the collectives in flight that completed; waits (each until its
  // deadline) for all of them (`all`) or for the oldest beyond `keep`.
  // Throws FatalRuntimeError when one failed or passed its deadline.
  void retire(bool all, size_t keep);
  void abort();
  void point_to_point(bool send, const DeviceCopy& buf, size_t bytes, int peer, CommDeadline deadline);

  CommTransport& host_;
  const NcclLibrary* nccl_ = nullptr;  // loaded at the first accepts()
  std::string why_;                    // why it serves no device ("" while it may)
  device::DeviceBackend* device_ = nullptr;
  // A block of the device's, for new_block; it also keeps the device alive
  // while the transport (and its events) are.
  std::unique_ptr<DeviceCopy> prototype_;
  void* stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::string broken_;  // why the communicator was aborted
  std::mutex in_flight_mu_;  // the script's thread, and the host wait hook on any thread
  std::deque<InFlight> in_flight_;
  uint64_t calls_ = 0;
};

}  // namespace tessera::comm
