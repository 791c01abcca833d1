#include "runtime/comm/nccl_transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <stdexcept>

#include "runtime/device/device_backend.h"
#include "vm/core/error.h"

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

NcclTransport::~NcclTransport() {
  if (!device_) return;
  device_->set_host_wait_hook({});
  std::lock_guard<std::mutex> lock(in_flight_mu_);
  in_flight_.clear();  // before prototype_, which keeps the device alive
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
  device_->set_host_wait_hook([this] { retire(true, 0); });
  return true;
}

std::unique_ptr<DeviceCopy> NcclTransport::new_block(size_t bytes) {
  return prototype_ && broken_.empty() ? prototype_->new_block(bytes) : nullptr;
}

void NcclTransport::begin(CommDeadline deadline) {
  if (!broken_.empty()) throw std::runtime_error(broken_);
  retire(false, kMaxInFlight - 1);
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

void NcclTransport::end(const char* what, CommDeadline deadline, std::initializer_list<const DeviceCopy*> uses) {
  device::DeviceBackend* d = device_;
  std::shared_ptr<void> done(d->record_event(stream_), [d](void* e) { d->destroy_event(e); });
  for (const DeviceCopy* c : uses) c->used_until(done);
  std::lock_guard<std::mutex> lock(in_flight_mu_);
  in_flight_.push_back({std::move(done), what, ++calls_, deadline});
}

// Polled like MpiTransport's requests: a short spin, then yielding the core.
void NcclTransport::retire(bool all, size_t keep) {
  std::lock_guard<std::mutex> lock(in_flight_mu_);
  for (unsigned spins = 0; !in_flight_.empty();) {
    const InFlight& f = in_flight_.front();
    if (device_->event_done(f.done.get())) {
      in_flight_.pop_front();
      continue;
    }
    ncclResult_t async = ncclSuccess;
    nccl_->check(nccl_->api().ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", comm_);
    if (async != ncclSuccess && async != ncclInProgress)
      broken_ = fmt::format("{} (this rank's NCCL call {}) failed on the GPU: {}; the NCCL communicator was aborted",
                            f.what, f.call, nccl_->error_text(async, comm_));
    else if (std::chrono::steady_clock::now() > f.deadline)
      broken_ = fmt::format("{} (this rank's NCCL call {}) did not complete on the GPU within the collectives' "
                            "timeout (JIT parameter commtimeout); the NCCL communicator was aborted (ncclCommAbort)",
                            f.what, f.call);
    else if (!all && in_flight_.size() <= keep)
      return;  // in flight and within its deadline: left to run beside the kernels
    if (!broken_.empty()) {
      abort();
      in_flight_.clear();
      throw FatalRuntimeError(broken_);
    }
    if (++spins > 256) sched_yield();
  }
}

void NcclTransport::complete() {
  if (device_) retire(true, 0);
}

void NcclTransport::all_reduce(const DeviceCopy& in, DeviceCopy& out, size_t count, CommElem elem, ReduceOp op,
                               CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclAllReduce(in.device_pointer(), out.device_pointer(), count, type_of(elem), op_of(op), comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclAllReduce", comm_);
  end("ncclAllReduce", deadline, {&in, &out});
}

void NcclTransport::all_gather(const DeviceCopy& in, DeviceCopy& out, size_t bytes_per_rank, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclAllGather(in.device_pointer(), out.device_pointer(), bytes_per_rank, ncclUint8, comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclAllGather", comm_);
  end("ncclAllGather", deadline, {&in, &out});
}

void NcclTransport::reduce_scatter(const DeviceCopy& in, DeviceCopy& out, size_t count_per_rank, CommElem elem,
                                   ReduceOp op, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclReduceScatter(in.device_pointer(), out.device_pointer(), count_per_rank, type_of(elem),
                                              op_of(op), comm_, static_cast<cudaStream_t>(stream_)),
               "ncclReduceScatter", comm_);
  end("ncclReduceScatter", deadline, {&in, &out});
}

void NcclTransport::broadcast(const DeviceCopy& in, DeviceCopy& out, size_t bytes, int root, CommDeadline deadline) {
  begin(deadline);
  nccl_->check(nccl_->api().ncclBroadcast(in.device_pointer(), out.device_pointer(), bytes, ncclUint8, root, comm_,
                                          static_cast<cudaStream_t>(stream_)),
               "ncclBroadcast", comm_);
  end("ncclBroadcast", deadline, {&in, &out});
}

// ncclSend and ncclRecv in a group of their own each: a rank's sends and
// receives are ordered as its script orders them, as MPI's are.
void NcclTransport::send(const DeviceCopy& in, size_t bytes, int dst, CommDeadline deadline) {
  point_to_point(true, in, bytes, dst, deadline);
}

void NcclTransport::recv(DeviceCopy& out, size_t bytes, int src, CommDeadline deadline) {
  point_to_point(false, out, bytes, src, deadline);
}

void NcclTransport::point_to_point(bool send, const DeviceCopy& buf, size_t bytes, int peer, CommDeadline deadline) {
  begin(deadline);
  const auto& api = nccl_->api();
  const auto stream = static_cast<cudaStream_t>(stream_);
  const char* what = send ? "ncclSend" : "ncclRecv";
  nccl_->check(api.ncclGroupStart(), "ncclGroupStart", comm_);
  const ncclResult_t r = send ? api.ncclSend(buf.device_pointer(), bytes, ncclUint8, peer, comm_, stream)
                              : api.ncclRecv(buf.device_pointer(), bytes, ncclUint8, peer, comm_, stream);
  nccl_->check(api.ncclGroupEnd(), "ncclGroupEnd", comm_);
  nccl_->check(r, what, comm_);
  end(what, deadline, {&buf});
}

}  // namespace tessera::comm
