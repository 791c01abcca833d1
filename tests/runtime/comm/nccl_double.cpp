// A test double of the NCCL subset Tessera uses (runtime/comm/
// nccl_api.def), built as a shared library and loaded in NCCL's place with
// TESSERA_NCCL_LIBRARY, so that the collectives of tensors on a GPU run in
// CI on the host emulation (whose device memory is host memory). Its
// collectives are the process's MPI's (Open MPI, which Tessera loaded
// RTLD_GLOBAL under mpirun), on a communicator of its own, performed when
// called, as the emulation runs a kernel when it is launched.
//
// What it checks, failing the call (ncclInvalidUsage, with the reason as
// ncclGetLastError's text) where a GPU would compute the wrong thing:
//   - ncclCommInitRank: every rank was given the same unique id (rank 0's,
//     broadcast over MPI), and the rank and size are MPI's;
//   - each collective: its stream is an emulated stream (runtime/device/
//     emulated_stream.h) other than the kernels', the same for every call
//     of the communicator, which waited, since the previous call, for an
//     event recorded on the kernels' stream after every kernel launched so
//     far (so after the kernels that produced the input). It then counts
//     its work on the stream and declares the memory it read and wrote
//     (EmulatedStream::use), and the emulation faults a kernel or copy
//     that touches that memory before the kernels' stream waited for the
//     work (the order of the collective's readers, and of the next users
//     of its blocks once they are freed).
// TESSERA_NCCL_DOUBLE_STALL=R:N: on rank R, the Nth collective (from 1)
// and every one after it never complete (EmulatedStream::stalled), as a
// collective that hangs on a GPU: the tests of its deadline.
// TESSERA_NCCL_DOUBLE_LOG=FILE: one line per call appended
// ("rank R ncclAllReduce bytes=N overlapped=K stream=own ordered=1", K: the
// kernels launched so far while a collective was in flight, the compute a
// GPU would overlap with it). NCCL_DEBUG=INFO:
// a line per collective on stdout, as NCCL reports its choices, naming the
// "algorithm" (the MPI call).
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/device/emulated_stream.h"

namespace {

using tessera::device::EmulatedStream;
using MpiHandle = void*;

// The process's MPI (Open MPI's ABI: handles are its objects' addresses).
struct Mpi {
  int (*Comm_dup)(MpiHandle, MpiHandle*);
  int (*Comm_rank)(MpiHandle, int*);
  int (*Comm_size)(MpiHandle, int*);
  int (*Allreduce)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle);
  int (*Allgather)(const void*, int, MpiHandle, void*, int, MpiHandle, MpiHandle);
  int (*Reduce_scatter_block)(const void*, void*, int, MpiHandle, MpiHandle, MpiHandle);
  int (*Bcast)(void*, int, MpiHandle, int, MpiHandle);
  int (*Isend)(const void*, int, MpiHandle, int, int, MpiHandle, MpiHandle*);
  int (*Irecv)(void*, int, MpiHandle, int, int, MpiHandle, MpiHandle*);
  int (*Waitall)(int, MpiHandle*, void*);
  MpiHandle world, f32, i32, i64, u8, sum, prod, max, min;
  bool ok = false;
};

template <typename F> void find(F& f, const char* name, bool& ok) {
  f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  ok = ok && f;
}

const Mpi& mpi() {
  static const Mpi m = [] {
    Mpi m{};
    bool ok = true;
    find(m.Comm_dup, "MPI_Comm_dup", ok);
    find(m.Comm_rank, "MPI_Comm_rank", ok);
    find(m.Comm_size, "MPI_Comm_size", ok);
    find(m.Allreduce, "MPI_Allreduce", ok);
    find(m.Allgather, "MPI_Allgather", ok);
    find(m.Reduce_scatter_block, "MPI_Reduce_scatter_block", ok);
    find(m.Bcast, "MPI_Bcast", ok);
    find(m.Isend, "MPI_Isend", ok);
    find(m.Irecv, "MPI_Irecv", ok);
    find(m.Waitall, "MPI_Waitall", ok);
    const char* handles[] = {"ompi_mpi_comm_world", "ompi_mpi_float", "ompi_mpi_int32_t", "ompi_mpi_int64_t",
                             "ompi_mpi_uint8_t",    "ompi_mpi_op_sum", "ompi_mpi_op_prod", "ompi_mpi_op_max",
                             "ompi_mpi_op_min"};
    MpiHandle* slots[] = {&m.world, &m.f32, &m.i32, &m.i64, &m.u8, &m.sum, &m.prod, &m.max, &m.min};
    for (size_t i = 0; i < 9; ++i) ok = ok && (*slots[i] = dlsym(RTLD_DEFAULT, handles[i])) != nullptr;
    m.ok = ok;
    return m;
  }();
  return m;
}

std::string last_error;

}  // namespace

struct ncclComm {
  int rank = 0, size = 1;
  MpiHandle mpi = nullptr;
  EmulatedStream* stream = nullptr;  // the first call's: every call's must be it
  uint64_t waits = 0;                // the stream's waits at the previous call
  uint64_t calls = 0;
};

namespace {

ncclResult_t refuse(const std::string& why) {
  last_error = "the NCCL test double: " + why;
  return ncclInvalidUsage;
}

void log_line(const ncclComm* c, const char* fn, size_t bytes, uint64_t overlapped, bool ordered) {
  if (const char* path = std::getenv("TESSERA_NCCL_DOUBLE_LOG"); path && *path)
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "rank %d %s bytes=%zu overlapped=%llu stream=own ordered=%d\n", c->rank, fn, bytes,
                   static_cast<unsigned long long>(overlapped), ordered ? 1 : 0);
      std::fclose(f);
    }
}

// The stream's checks (see the header comment); "" when they hold.
std::string check_stream(ncclComm* c, cudaStream_t stream) {
  auto* s = reinterpret_cast<EmulatedStream*>(stream);
  if (!s || s->magic != EmulatedStream::kMagic) return "the stream is not one of the host emulation's";
  if (s->kernels) return "the collective was enqueued on the kernels' stream, not a stream of its own";
  if (c->stream && c->stream != s) return "the collective's stream is not the one its earlier collectives ran on";
  c->stream = s;
  if (s->waits == c->waits || !s->waited_kernels)
    return "the stream did not wait for an event on the kernels' stream before the collective";
  if (!s->launches || s->waited_launches != *s->launches)
    return "the stream waited for an event recorded before the latest kernels (the input's producer may not have run)";
  c->waits = s->waits;
  return "";
}

// The memory a collective reads or writes: an address and its bytes.
struct Span {
  const void* p;
  size_t bytes;
};

// Runs `op` as the collective `fn` of `bytes` bytes on `stream`, once its
// checks hold; `uses`: the memory it reads and writes.
template <typename Op>
ncclResult_t collective(ncclComm* c, cudaStream_t stream, const char* fn, size_t bytes, const char* algo,
                        const std::vector<Span>& uses, Op op) {
  if (!c) return refuse(std::string(fn) + " on no communicator");
  const std::string why = check_stream(c, stream);
  auto* s = reinterpret_cast<EmulatedStream*>(stream);
  log_line(c, fn, bytes, why.empty() ? s->overlapped_launches : 0, why.empty());
  if (!why.empty()) return refuse(std::string(fn) + ": " + why);
  if (const char* d = std::getenv("NCCL_DEBUG"); d && std::strcmp(d, "INFO") == 0)
    std::printf("%s:%d NCCL INFO %s: %zu bytes, algorithm %s (the NCCL test double on the host emulation)\n",
                "localhost", static_cast<int>(getpid()), fn, bytes, algo);
  if (op() != 0) return refuse(std::string(fn) + ": the MPI call failed");
  ++s->work;
  for (const Span& u : uses) s->use(u.p, u.bytes);
  ++c->calls;
  if (const char* stall = std::getenv("TESSERA_NCCL_DOUBLE_STALL"); stall && *stall) {
    int rank = -1;
    unsigned long long at = 0;
    if (std::sscanf(stall, "%d:%llu", &rank, &at) == 2 && rank == c->rank && c->calls >= at) s->stalled = true;
  }
  return ncclSuccess;
}

MpiHandle type_of(ncclDataType_t t) {
  switch (t) {
    case ncclFloat32: return mpi().f32;
    case ncclInt32: return mpi().i32;
    case ncclInt64: return mpi().i64;
    default: return mpi().u8;
  }
}

size_t size_of(ncclDataType_t t) { return t == ncclInt64 ? 8 : t == ncclFloat32 || t == ncclInt32 ? 4 : 1; }

MpiHandle op_of(ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return mpi().prod;
    case ncclMax: return mpi().max;
    case ncclMin: return mpi().min;
    default: return mpi().sum;
  }
}

// ncclSend and ncclRecv between ncclGroupStart and ncclGroupEnd.
struct P2p {
  bool send;
  void* buf;
  size_t bytes;
  int peer;
  ncclComm* comm;
  cudaStream_t stream;
};
int group_depth = 0;
std::vector<P2p> pending;

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidUsage: return "invalid usage";
    case ncclInvalidArgument: return "invalid argument";
    default: return "an error of the NCCL test double";
  }
}

const char* ncclGetLastError(ncclComm_t) { return last_error.c_str(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "tessera nccl double %d %lld", static_cast<int>(getpid()),
                static_cast<long long>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  const Mpi& m = mpi();
  if (!m.ok) return refuse("the process has no MPI to stand in for NCCL's transports (run under mpirun)");
  auto* c = new ncclComm();
  m.Comm_dup(m.world, &c->mpi);
  m.Comm_rank(c->mpi, &c->rank);
  m.Comm_size(c->mpi, &c->size);
  if (c->rank != rank || c->size != nranks)
    return refuse("ncclCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(nranks) + ", but MPI says " +
                  std::to_string(c->rank) + " of " + std::to_string(c->size));
  std::vector<char> ids(sizeof id.internal * static_cast<size_t>(nranks));
  m.Allgather(id.internal, sizeof id.internal, m.u8, ids.data(), sizeof id.internal, m.u8, c->mpi);
  for (int r = 0; r < nranks; ++r)
    if (std::memcmp(ids.data() + r * sizeof id.internal, ids.data(), sizeof id.internal) != 0)
      return refuse("ncclCommInitRank: rank " + std::to_string(r) + " was given another unique id than rank 0's");
  if (std::strncmp(id.internal, "tessera nccl double", 19) != 0)
    return refuse("ncclCommInitRank: the unique id is not one ncclGetUniqueId made");
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t* error) {
  *error = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* in, void* out, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t c,
                           cudaStream_t stream) {
  const size_t bytes = count * size_of(type);
  return collective(c, stream, "ncclAllReduce", bytes, "MPI_Allreduce", {{in, bytes}, {out, bytes}}, [&] {
    return mpi().Allreduce(in, out, static_cast<int>(count), type_of(type), op_of(op), c->mpi);
  });
}

ncclResult_t ncclAllGather(const void* in, void* out, size_t count, ncclDataType_t type, ncclComm_t c,
                           cudaStream_t stream) {
  const int n = static_cast<int>(count * size_of(type));
  return collective(c, stream, "ncclAllGather", count * size_of(type), "MPI_Allgather",
                    {{in, size_t(n)}, {out, size_t(n) * size_t(c ? c->size : 1)}}, [&] { return mpi().Allgather(in, n, mpi().u8, out, n, mpi().u8, c->mpi); });
}

ncclResult_t ncclReduceScatter(const void* in, void* out, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t c, cudaStream_t stream) {
  const size_t bytes = count * size_of(type);
  return collective(c, stream, "ncclReduceScatter", bytes, "MPI_Reduce_scatter_block",
                    {{in, bytes * size_t(c ? c->size : 1)}, {out, bytes}}, [&] {
    return mpi().Reduce_scatter_block(in, out, static_cast<int>(count), type_of(type), op_of(op), c->mpi);
  });
}

ncclResult_t ncclBroadcast(const void* in, void* out, size_t count, ncclDataType_t type, int root, ncclComm_t c,
                           cudaStream_t stream) {
  const size_t bytes = count * size_of(type);
  return collective(c, stream, "ncclBroadcast", bytes, "MPI_Bcast", {{in, bytes}, {out, bytes}}, [&] {
    if (c->rank == root && in != out) std::memcpy(out, in, bytes);
    return mpi().Bcast(out, static_cast<int>(bytes), mpi().u8, root, c->mpi);
  });
}

ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}

ncclResult_t ncclSend(const void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c, cudaStream_t stream) {
  if (group_depth == 0) return refuse("ncclSend outside ncclGroupStart/ncclGroupEnd (Tessera groups its sends)");
  pending.push_back({true, const_cast<void*>(buf), count * size_of(type), peer, c, stream});
  return ncclSuccess;
}

ncclResult_t ncclRecv(void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t c, cudaStream_t stream) {
  if (group_depth == 0) return refuse("ncclRecv outside ncclGroupStart/ncclGroupEnd (Tessera groups its receives)");
  pending.push_back({false, buf, count * size_of(type), peer, c, stream});
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) return refuse("ncclGroupEnd without ncclGroupStart");
  if (--group_depth > 0 || pending.empty()) return ncclSuccess;
  std::vector<P2p> calls;
  calls.swap(pending);
  ncclComm* c = calls.front().comm;
  size_t bytes = 0;
  for (const P2p& p : calls) bytes += p.bytes;
  const bool sends = calls.front().send;
  std::vector<Span> uses;
  for (const P2p& p : calls) uses.push_back({p.buf, p.bytes});
  return collective(c, calls.front().stream, sends ? "ncclSend" : "ncclRecv", bytes, "MPI_Isend/MPI_Irecv", uses, [&] {
    std::vector<MpiHandle> reqs(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      const P2p& p = calls[i];
      const int n = static_cast<int>(p.bytes);
      const int rc = p.send ? mpi().Isend(p.buf, n, mpi().u8, p.peer, 7, c->mpi, &reqs[i])
                            : mpi().Irecv(p.buf, n, mpi().u8, p.peer, 7, c->mpi, &reqs[i]);
      if (rc != 0) return rc;
    }
    return mpi().Waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr);
  });
}

}  // extern "C"
