// MpiTransport: the collectives' transport over MPI (vm/graph/collectives.h,
// CommTransport), for tensors the host holds.
//
// Each step's description travels first (exchange()), as point-to-point
// messages, one per pair of ranks (MPI_Isend/MPI_Irecv), polled with
// MPI_Test until they complete or the step's deadline passes: a rank that
// never arrives is a CommTimeout naming it, never a hang. The data then moves
// by MPI's blocking collective (MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Bcast), whose algorithm Open MPI chooses
// (its `tuned` component, by message size and ranks; docs/distributed.md
// says how to see and force it); send and recv are polled point-to-point
// messages with the deadline. All of it on a communicator of Tessera's own
// (a duplicate of MPI_COMM_WORLD that returns errors instead of aborting).
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

  // This rank's steady clock against rank 0's (Cristian's algorithm): rank
  // 0 sends each rank in turn `rounds` pings, each answered at once with the
  // rank's clock t1; with t0 and t2 rank 0's clock at the ping and at the
  // answer, the rank's clock reads t1 - (t0 + t2) / 2 ahead of rank 0's,
  // within (t2 - t0) / 2, the round trip of the fastest round kept. Every
  // rank calls it (messages of a tag of their own, so that nothing a
  // script sent is taken for them); rank 0 gets one entry per rank (its
  // own {0, 0}), the others none.
  struct ClockOffset {
    double offset_ms = 0;  // the rank's clock minus rank 0's
    double error_ms = 0;   // |offset_ms - the true offset| is at most this
  };
  std::vector<ClockOffset> clock_offsets(int rounds, CommDeadline deadline);

 private:
  void send_tagged(const void* buf, size_t bytes, int dst, int tag, CommDeadline deadline, const char* what);
  void recv_tagged(void* buf, size_t bytes, int src, int tag, CommDeadline deadline, const char* what);
  MpiDatatype type_of(CommElem e) const;
  MpiOp op_of(ReduceOp op) const;
  // Polls `reqs` until every one is done; false at the deadline, `done`
  // then saying which were.
  bool wait(std::vector<MpiRequest>& reqs, std::vector<char>& done, CommDeadline deadline) const;
  void wait_one(MpiRequest req, CommDeadline deadline, const char* what) const;

  const MpiLibrary& mpi_;
  MpiComm comm_ = nullptr;
  int rank_ = 0, size_ = 1;
};

}  // namespace tessera::comm
