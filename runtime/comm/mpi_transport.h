// MpiTransport: the collectives' transport over MPI (vm/graph/collectives.h,
// CommTransport), for tensors the host holds.
//
// Every operation is MPI's non-blocking form (MPI_Iallreduce, ...) on a
// communicator of Tessera's own (a duplicate of MPI_COMM_WORLD that returns
// errors instead of aborting), polled with MPI_Test until it completes or
// the step's deadline passes; a rank that never arrives is a CommTimeout,
// never a hang. The step descriptions (exchange()) travel as point-to-point
// messages, one per pair of ranks, so that a timeout knows whose never came.
// all_reduce of a large buffer (each rank's share at least 32 KB) is a ring
// of Tessera's own over MPI_Isend/MPI_Irecv, MPI reducing each segment
// received (ring_all_reduce): Open MPI's non-blocking all-reduce (its
// libnbc component) reduces to one rank and broadcasts back below 4 ranks,
// which moved 1 MB at 0.6x the bus bandwidth of MPI_Allreduce
// (experiments/results/collectives-2026-11-28-before-ring.md; the ring:
// collectives-latest.md). Otherwise the algorithm is
// MPI's choice (libnbc picks one by message and communicator size;
// docs/distributed.md says how to see it).
#pragma once

#include "runtime/comm/mpi_library.h"
#include "vm/graph/collectives.h"

namespace tessera::comm {

class MpiTransport final : public CommTransport {
 public:
  // Over an initialized MPI (ProcessWorld calls MPI_Init_thread first).
  explicit MpiTransport(const MpiLibrary& mpi);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override;
  void exchange(const void* mine, void* all, size_t bytes, CommDeadline deadline) override;
  void all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op, CommDeadline deadline) override;
  void all_gather(const void* in, void* out, size_t bytes_per_rank, CommDeadline deadline) override;
  void reduce_scatter(const void* in, void* out, size_t count_per_rank, CommElem elem, ReduceOp op,
                      CommDeadline deadline) override;
  void broadcast(void* buf, size_t bytes, int root, CommDeadline deadline) override;
  void send(const void* buf, size_t bytes, int dst, CommDeadline deadline) override;
  void recv(void* buf, size_t bytes, int src, CommDeadline deadline) override;

 private:
  MpiDatatype type_of(CommElem e) const;
  MpiOp op_of(ReduceOp op) const;
  // Polls `reqs` until every one is done; false at the deadline, `done`
  // then saying which were.
  bool wait(std::vector<MpiRequest>& reqs, std::vector<char>& done, CommDeadline deadline) const;
  void ring_all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op, CommDeadline deadline);
  void wait_one(MpiRequest req, CommDeadline deadline, const char* what) const;

  const MpiLibrary& mpi_;
  MpiComm comm_ = nullptr;
  int rank_ = 0, size_ = 1;
};

}  // namespace tessera::comm
