#include "runtime/comm/mpi_transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace tessera::comm {

namespace {

// Tags on Tessera's communicator: step descriptions, send/recv's messages,
// and the pings that measure the ranks' clocks.
constexpr int kTagExchange = 1;
constexpr int kTagPointToPoint = 2;
constexpr int kTagClock = 3;

// MPI counts are ints: larger payloads move in chunks (all_reduce) or are
// refused with a message (the others).
int count_of(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw std::runtime_error(fmt::format("{}: {} elements per rank is more than MPI's int count holds", what, n));
  return static_cast<int>(n);
}

size_t elem_size(CommElem e) { return e == CommElem::U8 ? 1 : e == CommElem::I64 ? 8 : 4; }

}  // namespace

MpiTransport::MpiTransport(const MpiLibrary& mpi) : mpi_(mpi) {
  const auto& api = mpi.api();
  mpi.check(api.MPI_Comm_dup(mpi.comm_world, &comm_), "MPI_Comm_dup");
  mpi.check(api.MPI_Comm_set_errhandler(comm_, mpi.errors_return), "MPI_Comm_set_errhandler");
  mpi.check(api.MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  mpi.check(api.MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

std::string MpiTransport::describe() const { return mpi_.version(); }

MpiDatatype MpiTransport::type_of(CommElem e) const {
  switch (e) {
    case CommElem::F32: return mpi_.type_float;
    case CommElem::I32: return mpi_.type_int32;
    case CommElem::I64: return mpi_.type_int64;
    case CommElem::U8: return mpi_.type_uint8;
  }
  return mpi_.type_byte;
}

MpiOp MpiTransport::op_of(ReduceOp op) const {
  switch (op) {
    case ReduceOp::Prod: return mpi_.op_prod;
    case ReduceOp::Max: return mpi_.op_max;
    case ReduceOp::Min: return mpi_.op_min;
    default: return mpi_.op_sum;
  }
}

// MPI progresses inside MPI_Test. The poll spins for the first 50 us (a
// peer that is there answers in a few), then yields the core until 1 ms,
// then sleeps 50 us between tests: a rank waiting long for another (more
// ranks than cores, a slow peer) leaves the cores to those that compute.
bool MpiTransport::wait(std::vector<MpiRequest>& reqs, std::vector<char>& done, CommDeadline deadline) const {
  using namespace std::chrono_literals;
  done.assign(reqs.size(), 0);
  size_t left = reqs.size();
  const auto start = std::chrono::steady_clock::now();
  while (left > 0) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (done[i]) continue;
      int flag = 0;
      mpi_.check(mpi_.api().MPI_Test(&reqs[i], &flag, nullptr), "MPI_Test");
      if (flag) {
        done[i] = 1;
        --left;
      }
    }
    if (left == 0) break;
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) return false;
    if (now - start > 1ms) std::this_thread::sleep_for(50us);
    else if (now - start > 50us) sched_yield();
  }
  return true;
}

void MpiTransport::wait_one(MpiRequest req, CommDeadline deadline, const char* what) const {
  std::vector<MpiRequest> reqs{req};
  std::vector<char> done;
  if (!wait(reqs, done, deadline)) throw CommTimeout(fmt::format("{} did not complete", what), {});
}

void MpiTransport::exchange(const void* mine, void* all, size_t bytes, CommDeadline deadline) {
  const auto& api = mpi_.api();
  auto* out = static_cast<unsigned char*>(all);
  std::memcpy(out + static_cast<size_t>(rank_) * bytes, mine, bytes);
  // Receives first (one per peer, in rank order), then sends.
  std::vector<MpiRequest> reqs;
  std::vector<int> peers;
  const int n = count_of(bytes, "exchange");
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MpiRequest req = nullptr;
    mpi_.check(api.MPI_Irecv(out + static_cast<size_t>(r) * bytes, n, mpi_.type_byte, r, kTagExchange, comm_, &req),
               "MPI_Irecv");
    reqs.push_back(req);
    peers.push_back(r);
  }
  const size_t receives = reqs.size();
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MpiRequest req = nullptr;
    mpi_.check(api.MPI_Isend(mine, n, mpi_.type_byte, r, kTagExchange, comm_, &req), "MPI_Isend");
    reqs.push_back(req);
  }
  std::vector<char> done;
  if (wait(reqs, done, deadline)) return;
  std::vector<int> missing;
  for (size_t i = 0; i < receives; ++i)
    if (!done[i]) missing.push_back(peers[i]);
  throw CommTimeout("waiting for the ranks' descriptions of the step", std::move(missing));
}

// The data phase is MPI's blocking collective, so that Open MPI's `tuned`
// component chooses the algorithm by message size and ranks, as for any MPI
// program (its non-blocking ones come from `libnbc`, whose all-reduce below
// 4 ranks reduces on one rank and broadcasts back: 0.6x MPI_Allreduce's bus
// bandwidth at 1 MB, experiments/results/collectives-2026-11-28-iallreduce.md).
// The step's exchange has just seen every rank arrive, so the deadline has
// done its work; a rank that dies inside the call is ended by mpirun.
void MpiTransport::all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op, CommDeadline) {
  const size_t chunk = static_cast<size_t>(INT_MAX) / 8 * 8;
  const size_t es = elem_size(elem);
  for (size_t at = 0; at < count; at += chunk) {
    const size_t n = std::min(chunk, count - at);
    mpi_.check(mpi_.api().MPI_Allreduce(static_cast<const char*>(in) + at * es, static_cast<char*>(out) + at * es,
                                        static_cast<int>(n), type_of(elem), op_of(op), comm_),
               "MPI_Allreduce");
  }
}

void MpiTransport::all_gather(const void* in, void* out, size_t bytes_per_rank, CommDeadline) {
  const int n = count_of(bytes_per_rank, "all_gather");
  mpi_.check(mpi_.api().MPI_Allgather(in, n, mpi_.type_byte, out, n, mpi_.type_byte, comm_), "MPI_Allgather");
}

void MpiTransport::reduce_scatter(const void* in, void* out, size_t count_per_rank, CommElem elem, ReduceOp op,
                                  CommDeadline) {
  mpi_.check(mpi_.api().MPI_Reduce_scatter_block(in, out, count_of(count_per_rank, "reduce_scatter"), type_of(elem),
                                                  op_of(op), comm_),
             "MPI_Reduce_scatter_block");
}

void MpiTransport::broadcast(void* buf, size_t bytes, int root, CommDeadline) {
  mpi_.check(mpi_.api().MPI_Bcast(buf, count_of(bytes, "broadcast"), mpi_.type_byte, root, comm_), "MPI_Bcast");
}

void MpiTransport::send_tagged(const void* buf, size_t bytes, int dst, int tag, CommDeadline deadline,
                               const char* what) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Isend(buf, count_of(bytes, what), mpi_.type_byte, dst, tag, comm_, &req), "MPI_Isend");
  wait_one(req, deadline, "MPI_Isend");
}

void MpiTransport::recv_tagged(void* buf, size_t bytes, int src, int tag, CommDeadline deadline, const char* what) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Irecv(buf, count_of(bytes, what), mpi_.type_byte, src, tag, comm_, &req), "MPI_Irecv");
  wait_one(req, deadline, "MPI_Irecv");
}

void MpiTransport::send(const void* buf, size_t bytes, int dst, CommDeadline deadline) {
  send_tagged(buf, bytes, dst, kTagPointToPoint, deadline, "send");
}

void MpiTransport::recv(void* buf, size_t bytes, int src, CommDeadline deadline) {
  recv_tagged(buf, bytes, src, kTagPointToPoint, deadline, "recv");
}

std::vector<MpiTransport::ClockOffset> MpiTransport::clock_offsets(int rounds, CommDeadline deadline) {
  auto now_ms = [] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  if (rank_ != 0) {
    for (int i = 0; i < rounds; ++i) {
      double ping = 0;
      recv_tagged(&ping, sizeof ping, 0, kTagClock, deadline, "clock");
      const double t1 = now_ms();
      send_tagged(&t1, sizeof t1, 0, kTagClock, deadline, "clock");
    }
    return {};
  }
  std::vector<ClockOffset> out(static_cast<size_t>(size_));
  for (int r = 1; r < size_; ++r) {
    double best = -1;
    for (int i = 0; i < rounds; ++i) {
      const double t0 = now_ms();
      send_tagged(&t0, sizeof t0, r, kTagClock, deadline, "clock");
      double t1 = 0;
      recv_tagged(&t1, sizeof t1, r, kTagClock, deadline, "clock");
      const double t2 = now_ms();
      if (best < 0 || t2 - t0 < best) {
        best = t2 - t0;
        out[static_cast<size_t>(r)] = {t1 - (t0 + t2) / 2, best / 2};
      }
    }
  }
  return out;
}

}  // namespace tessera::comm
