#include "runtime/comm/nccl_transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <stdexcept>

#include "runtime/device/device_backend.h"

namespace tessera::comm {

namespace {

ncclDataType_t type_of(CommElem e) {
  switch (e) {
    case CommElem::F32: return ncclFloat32;
    case CommElem::I32: return ncclInt32;
    case CommElem::I64: return ncclInt64;
    case CommElem::U8: return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t op_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
    default: return ncclSum;
  }
}

}  // namespace

std::string NcclTransport::describe() const {
  if (!why_.empty()) return "no NCCL: " + why_;
  return nccl_ ? nccl_->describe() : "NCCL (loaded at the first collective of tensors on a GPU)";
}

bool NcclTransport::accepts(const DeviceCopy& held) {
  if (!why_.empty() || !held.device() || !held.device_pointer()) return false;
  if (device_) return held.device() == device_;
  nccl_ = &NcclLibrary::get();
  if (!nccl_->available()) {
    why_ = nccl_->why_unavailable();
    return false;
  }
  try {
    stream_ = held.device()->create_stream();
    prototype_ = held.new_block(1);
  } catch (const std::exception& e) {
    why_ = std::string("its stream or memory on the GPU could not be made: ") + e.what();
    return false;
  }
  device_ = held.device();
  return true;
}

std::unique_ptr<DeviceCopy> NcclTransport::new_block(size_t bytes) {
  return prototype_ && broken_.empty() ? prototype_->new_block(bytes) : nullptr;
}

void NcclTransport::begin(CommDeadline deadline) {
  if (!broken_.empty()) throw std::runtime_error(broken_);
  if (!comm_) {
    ncclUniqueId id{};
    if (host_.rank() == 0) nccl_->check(nccl_->api().ncclGetUniqueId(&id), "ncclGetUniqueId");
    host_.broadcast(&id, sizeof id, 0, deadline);
    device_->make_current();
    nccl_->check(nccl_->api().ncclCommInitRank(&comm_, host_.size(), id, host_.rank()), "ncclCommInitRank");
  }
  void* kernels = device_->record_event(nullptr);
  try {
    device_->stream_wait(stream_, kernels);
  } catch (...) {
    device_->destroy_event(kernels);
    throw;
  }
  device_->destroy_event(kernels);
}

void NcclTransport::abort() {
  if (comm_) nccl_->api().ncclCommAbort(comm_);
  comm_ = nullptr;
}

// Polled like MpiTransport's requests: a short spin, then yielding the core.
void NcclTransport::end(const char* what, CommDeadline deadline) {
  void* done = device_->record_event(stream_);
  struct Release {
    device::DeviceBackend* d;
    void* e;
    ~Release() { d->destroy_event(e); }
  } release{device_, done};
  for (unsigned spins = 0; !device_->event_done(done); ++spins) {
    ncclResult_t async = ncclSuccess;
    nccl_->check(nccl_->api().ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", comm_);
    if (async != ncclSuccess && async != ncclInProgress) {
      broken_ = fmt::format("{} failed on the GPU: {}; the NCCL communicator was aborted", what,
                            nccl_->error_text(async, comm_));
      abort();
      throw std::runtime_error(broken_);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      broken_ = fmt::format("{} did not complete on the GPU; the NCCL communicator was aborted (ncclCommAbort)", what);
      abort();
      throw CommTimeout(broken_, {});
    }
    if (spins > 256) sched_yield();
  }
  device_->stream_wait(nullptr, done);
}

void NcclTransport::all_reduce(const DeviceCopy& in, DeviceCopy& out, size_t count, CommElem elem, ReduceOp op,
                               CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclAllReduce(in.device_pointer(), out.device_pointer(), count, type_of(elem), op_of(op), comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclAllReduce", comm_);
  end("ncclAllReduce", deadline);
}

void NcclTransport::all_gather(const DeviceCopy& in, DeviceCopy& out, size_t bytes_per_rank, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclAllGather(in.device_pointer(), out.device_pointer(), bytes_per_rank, ncclUint8, comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclAllGather", comm_);
  end("ncclAllGather", deadline);
}

void NcclTransport::reduce_scatter(const DeviceCopy& in, DeviceCopy& out, size_t count_per_rank, CommElem elem,
                                   ReduceOp op, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclReduceScatter(in.device_pointer(), out.device_pointer(), count_per_rank, type_of(elem),
                                              op_of(op), comm_, static_cast<cudaStream_t>(stream_)),
               "ncclReduceScatter", comm_);
  end("ncclReduceScatter", deadline);
}

void NcclTransport::broadcast(const DeviceCopy& in, DeviceCopy& out, size_t bytes, int root, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclBroadcast(in.device_pointer(), out.device_pointer(), bytes, ncclUint8, root, comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclBroadcast", comm_);
  end("ncclBroadcast", deadline);
}

// ncclSend and ncclRecv in a group of their own each: a rank's sends and
// receives are ordered as its script orders them, as MPI's are.
void NcclTransport::send(const DeviceCopy& in, size_t bytes, int dst, CommDeadline deadline) {
  point_to_point(true, in.device_pointer(), bytes, dst, deadline);
}

void NcclTransport::recv(DeviceCopy& out, size_t bytes, int src, CommDeadline deadline) {
  point_to_point(false, out.device_pointer(), bytes, src, deadline);
}

void NcclTransport::point_to_point(bool send, void* buf, size_t bytes, int peer, CommDeadline deadline) {
  begin(deadline);
  const auto& api = nccl_->api();
  const auto stream = static_cast<cudaStream_t>(stream_);
  const char* what = send ? "ncclSend" : "ncclRecv";
  nccl_->check(api.ncclGroupStart(), "ncclGroupStart", comm_);
  const ncclResult_t r = send ? api.ncclSend(buf, bytes, ncclUint8, peer, comm_, stream)
                              : api.ncclRecv(buf, bytes, ncclUint8, peer, comm_, stream);
  nccl_->check(api.ncclGroupEnd(), "ncclGroupEnd", comm_);
  nccl_->check(r, what, comm_);
  end(what, deadline);
}

}  // namespace tessera::comm
