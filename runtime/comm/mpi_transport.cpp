#include "runtime/comm/mpi_transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace tessera::comm {

namespace {

// Tags on Tessera's communicator: step descriptions, and send/recv's messages.
constexpr int kTagExchange = 1;
constexpr int kTagPointToPoint = 2;
constexpr int kTagRing = 3;

// all_reduce runs the ring (ring_all_reduce) where each rank's block is at
// least this large; below, the latency of its 2 (n - 1) steps would cost
// more than it saves, and MPI_Iallreduce runs.
constexpr size_t kRingMinBlockBytes = size_t{32} << 10;
// The ring's messages: segments of a block this large.
constexpr size_t kRingSegmentBytes = size_t{1} << 20;

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

// MPI progresses inside MPI_Test; after a short spin the poll yields the
// core, so that oversubscribed ranks (more ranks than cores) still progress.
bool MpiTransport::wait(std::vector<MpiRequest>& reqs, std::vector<char>& done, CommDeadline deadline) const {
  done.assign(reqs.size(), 0);
  size_t left = reqs.size();
  for (unsigned spins = 0; left > 0; ++spins) {
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
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (spins > 256) sched_yield();
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

void MpiTransport::all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op,
                              CommDeadline deadline) {
  if (size_ > 1 && in != out && count * elem_size(elem) / static_cast<size_t>(size_) >= kRingMinBlockBytes)
    return ring_all_reduce(in, out, count, elem, op, deadline);
  const size_t chunk = static_cast<size_t>(INT_MAX) / 8 * 8;
  const size_t es = elem_size(elem);
  for (size_t at = 0; at < count || (count == 0 && at == 0); at += chunk) {
    const size_t n = std::min(chunk, count - at);
    MpiRequest req = nullptr;
    mpi_.check(mpi_.api().MPI_Iallreduce(static_cast<const char*>(in) + at * es, static_cast<char*>(out) + at * es,
                                         static_cast<int>(n), type_of(elem), op_of(op), comm_, &req),
               "MPI_Iallreduce");
    wait_one(req, deadline, "MPI_Iallreduce");
    if (count == 0) break;
  }
}

// The ring all-reduce: a reduce-scatter, then an all-gather, each size()-1
// steps around the ranks in rank order. The elements are cut into size()
// blocks. At step t every rank receives block (rank - t - 1) mod n from its
// left neighbour and sends the block it received at the step before (at
// step 0 its own block, from `in`) to its right one; in the first n - 1
// steps it adds its own elements to what it receives (MPI_Reduce_local, the
// op as MPI_Iallreduce applies it), so that block (rank + 1) mod n ends
// reduced over every rank on this rank, and the next n - 1 steps pass the
// reduced blocks round. Blocks travel in segments, each passed on as soon
// as it is received and reduced, so that a segment's reduction overlaps the
// next one's transfer. Every element is reduced on one rank and copied to
// the others, so every rank gets the same bits. Each rank moves
// 2 (n - 1) / n of the buffer each way, and no temporary buffer is made.
void MpiTransport::ring_all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op,
                                   CommDeadline deadline) {
  const auto& api = mpi_.api();
  const size_t n = static_cast<size_t>(size_), r = static_cast<size_t>(rank_);
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  const size_t es = elem_size(elem);
  const MpiDatatype type = type_of(elem);
  const MpiOp mop = op_of(op);
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  // Block b: elements [begin(b), begin(b + 1)), the first count % n blocks one longer.
  auto begin = [&](size_t b) { return b * (count / n) + std::min(b, count % n); };
  const size_t seg = std::max<size_t>(1, kRingSegmentBytes / es);
  // The segments of block b: (first element, elements).
  auto segments = [&](size_t b) {
    std::vector<std::pair<size_t, int>> s;
    for (size_t at = begin(b), end = begin(b + 1); at < end; at += seg)
      s.emplace_back(at, static_cast<int>(std::min(seg, end - at)));
    return s;
  };
  // The sends in flight, each with the block of `out` it reads (n: `in`'s block).
  std::vector<MpiRequest> sends;
  std::vector<size_t> send_block;
  auto send = [&](const unsigned char* base, size_t at, int len, size_t block) {
    MpiRequest req = nullptr;
    mpi_.check(api.MPI_Isend(base + at * es, len, type, right, kTagRing, comm_, &req), "MPI_Isend");
    sends.push_back(req);
    send_block.push_back(block);
  };
  // Waits for the sends that read block b of `out` (every send for b == n),
  // so that it can be received into again.
  std::vector<char> done;
  auto wait_sends = [&](size_t b) {
    std::vector<MpiRequest> waiting;
    size_t kept = 0;
    for (size_t i = 0; i < sends.size(); ++i) {
      if (b == n || send_block[i] == b) {
        waiting.push_back(sends[i]);
      } else {
        sends[kept] = sends[i];
        send_block[kept++] = send_block[i];
      }
    }
    sends.resize(kept);
    send_block.resize(kept);
    if (!wait(waiting, done, deadline))
      throw CommTimeout(fmt::format("MPI_Isend of the all-reduce's ring to rank {} did not complete", right), {});
  };

  for (const auto& [at, len] : segments(r)) send(src, at, len, n);
  const size_t steps = 2 * (n - 1);
  for (size_t t = 0; t < steps; ++t) {
    const size_t b = (r + 2 * n - 1 - t) % n;
    wait_sends(b);
    const auto segs = segments(b);
    std::vector<MpiRequest> recvs(segs.size());
    for (size_t j = 0; j < segs.size(); ++j)
      mpi_.check(api.MPI_Irecv(dst + segs[j].first * es, segs[j].second, type, left, kTagRing, comm_, &recvs[j]),
                 "MPI_Irecv");
    for (size_t j = 0; j < segs.size(); ++j) {
      std::vector<MpiRequest> one{recvs[j]};
      if (!wait(one, done, deadline))
        throw CommTimeout(fmt::format("MPI_Irecv of the all-reduce's ring from rank {} did not complete", left), {});
      const auto [at, len] = segs[j];
      if (t < n - 1)
        mpi_.check(api.MPI_Reduce_local(src + at * es, dst + at * es, len, type, mop), "MPI_Reduce_local");
      if (t + 1 < steps) send(dst, at, len, b);
    }
  }
  wait_sends(n);
}

void MpiTransport::all_gather(const void* in, void* out, size_t bytes_per_rank, CommDeadline deadline) {
  const int n = count_of(bytes_per_rank, "all_gather");
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Iallgather(in, n, mpi_.type_byte, out, n, mpi_.type_byte, comm_, &req), "MPI_Iallgather");
  wait_one(req, deadline, "MPI_Iallgather");
}

void MpiTransport::reduce_scatter(const void* in, void* out, size_t count_per_rank, CommElem elem, ReduceOp op,
                                  CommDeadline deadline) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Ireduce_scatter_block(in, out, count_of(count_per_rank, "reduce_scatter"), type_of(elem),
                                                   op_of(op), comm_, &req),
             "MPI_Ireduce_scatter_block");
  wait_one(req, deadline, "MPI_Ireduce_scatter_block");
}

void MpiTransport::broadcast(void* buf, size_t bytes, int root, CommDeadline deadline) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Ibcast(buf, count_of(bytes, "broadcast"), mpi_.type_byte, root, comm_, &req), "MPI_Ibcast");
  wait_one(req, deadline, "MPI_Ibcast");
}

void MpiTransport::send(const void* buf, size_t bytes, int dst, CommDeadline deadline) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Isend(buf, count_of(bytes, "send"), mpi_.type_byte, dst, kTagPointToPoint, comm_, &req),
             "MPI_Isend");
  wait_one(req, deadline, "MPI_Isend");
}

void MpiTransport::recv(void* buf, size_t bytes, int src, CommDeadline deadline) {
  MpiRequest req = nullptr;
  mpi_.check(mpi_.api().MPI_Irecv(buf, count_of(bytes, "recv"), mpi_.type_byte, src, kTagPointToPoint, comm_, &req),
             "MPI_Irecv");
  wait_one(req, deadline, "MPI_Irecv");
}

}  // namespace tessera::comm
