// Collectives: the ranks of a run and the tensors that move between them
// (docs/distributed.md). The Graph IR's distributed operations (ops.def:
// all_reduce, all_gather, reduce_scatter, broadcast, barrier, send, recv)
// call the process's Collectives, whichever tier runs them.
//
// Design. A process is one rank, so the world is the process's, not a VM's:
// one Collectives per process (process_collectives()). It is one rank of a
// world of one until the runtime installs a transport (runtime/comm: MPI
// under mpirun). Collectives owns what every transport shares:
//   - each collective first exchanges a small description of the step
//     (the operation, its attributes, the dtype and the shape) among the
//     ranks; the exchange is also the arrival check, so a step that times
//     out names the ranks that never came, and a mismatch is an error on
//     every rank naming both shapes;
//   - the tensor-level layout work (all_gather and reduce_scatter along any
//     axis, avg, dtypes a transport does not reduce: f16 and bf16 reduce
//     as f32 and round once, bool as bytes);
//   - deadlines (timeout_s, JIT parameter `commtimeout`), counters for
//     --stats, and an observer that the runtime's timeline listens to.
// A transport only moves contiguous bytes and reduces f32, i32, i64 and u8.
// A second, optional transport moves elements a device holds (NCCL:
// runtime/comm/nccl_transport.h): a step goes through it when every rank's
// tensor is on a device it serves (each rank says so in its description)
// and the step needs none of the layout work above; its output then stays
// on the device. Every other step takes the host's path (a device's
// elements are copied back first, as for any host read).
//
// Errors after the first exchange began are FatalRuntimeError: a compiled
// trace must not redo a collective on the interpreter (the ranks would
// disagree on the step). After one failed step the world is broken and
// every later collective fails at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vm/tensor/tensor.h"

namespace tessera {

// all_reduce's and reduce_scatter's `op`.
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Avg };
std::optional<ReduceOp> reduce_op_named(std::string_view name);
const char* reduce_op_name(ReduceOp op);

// The operations, for descriptions, counters and the timeline.
enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Barrier, Send, Recv };
constexpr int kCollectiveKinds = 7;
const char* collective_name(CollectiveKind k);

// What a transport reduces: a tensor's dtype maps to one (f16 and bf16 as
// F32, bool as U8 where sum and max are `or`, prod and min `and`).
enum class CommElem : uint8_t { F32, I32, I64, U8 };

using CommDeadline = std::chrono::steady_clock::time_point;

// A step that did not complete by its deadline. `missing`: the ranks whose
// part never came (empty where every rank arrived and the step still hung).
class CommTimeout : public std::runtime_error {
 public:
  CommTimeout(std::string what, std::vector<int> missing)
      : std::runtime_error(std::move(what)), missing(std::move(missing)) {}
  std::vector<int> missing;
};

// What moves bytes between the ranks (runtime/comm/mpi_transport.h). Every
// call blocks until it completes on this rank or `deadline` passes
// (CommTimeout); other failures throw std::runtime_error with the library's
// message.
class CommTransport {
 public:
  virtual ~CommTransport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Which library and version, as --stats prints it ("Open MPI v4.1.4").
  virtual std::string describe() const = 0;
  // Each rank's `bytes` bytes into `all` (rank order); the ranks whose bytes
  // have not come by the deadline are CommTimeout::missing.
  virtual void exchange(const void* mine, void* all, size_t bytes, CommDeadline deadline) = 0;
  // op is never Avg (Collectives divides).
  virtual void all_reduce(const void* in, void* out, size_t count, CommElem elem, ReduceOp op,
                          CommDeadline deadline) = 0;
  virtual void all_gather(const void* in, void* out, size_t bytes_per_rank, CommDeadline deadline) = 0;
  // `in` holds size() blocks of count_per_rank elements; rank r keeps block r reduced.
  virtual void reduce_scatter(const void* in, void* out, size_t count_per_rank, CommElem elem, ReduceOp op,
                              CommDeadline deadline) = 0;
  virtual void broadcast(void* buf, size_t bytes, int root, CommDeadline deadline) = 0;
  virtual void send(const void* buf, size_t bytes, int dst, CommDeadline deadline) = 0;
  virtual void recv(void* buf, size_t bytes, int src, CommDeadline deadline) = 0;
};

// What moves elements a device holds between the ranks (runtime/comm/
// nccl_transport.h), with CommTransport's contract otherwise, except that
// each call returns once the step is enqueued on the device, left in
// flight: it hands the copies it uses an event (DeviceCopy::used_until), so
// that their readers and their blocks' next users follow it and
// independent work overlaps it. A step that fails or passes `deadline` is
// reported at the transport's next call, at the host's next wait for the
// device, or by complete(). Inputs and outputs are device copies
// (vm/tensor/device_copy.h) on the transport's device.
class DeviceCommTransport {
 public:
  virtual ~DeviceCommTransport() = default;
  // Which library and version ("NCCL 2.28.9"), or why it cannot serve.
  virtual std::string describe() const = 0;
  // Whether it moves the elements of `held`: the first device it is given
  // becomes its own (one device per rank). No communication.
  virtual bool accepts(const DeviceCopy& held) = 0;
  // A block of `bytes` on its device (a received tensor's); null before accepts() took a device.
  virtual std::unique_ptr<DeviceCopy> new_block(size_t bytes) = 0;
  // As CommTransport's (op is never Avg), on the copies' device memory.
  virtual void all_reduce(const DeviceCopy& in, DeviceCopy& out, size_t count, CommElem elem, ReduceOp op,
                          CommDeadline deadline) = 0;
  virtual void all_gather(const DeviceCopy& in, DeviceCopy& out, size_t bytes_per_rank, CommDeadline deadline) = 0;
  virtual void reduce_scatter(const DeviceCopy& in, DeviceCopy& out, size_t count_per_rank, CommElem elem, ReduceOp op,
                              CommDeadline deadline) = 0;
  virtual void broadcast(const DeviceCopy& in, DeviceCopy& out, size_t bytes, int root, CommDeadline deadline) = 0;
  virtual void send(const DeviceCopy& in, size_t bytes, int dst, CommDeadline deadline) = 0;
  virtual void recv(DeviceCopy& out, size_t bytes, int src, CommDeadline deadline) = 0;
  // Waits for every step in flight (the end of a run), each until its
  // deadline; throws FatalRuntimeError naming the one that failed.
  virtual void complete() = 0;
};

// One completed (or failed) collective, as the timeline draws it. `step`
// is the same on every rank for the same collective (the ranks' n-th
// collective), so spans across ranks link by it; send and recv count their
// own steps per pair of ranks (peer: the other rank, else -1).
// A bucket of all_reduces (allreduce_buckets.h) is one record whose
// `packed` counts them; it comes from the buckets' thread.
struct CollectiveRecord {
  CollectiveKind kind;
  uint64_t step;
  int peer;
  uint64_t bytes;  // the payload this rank contributed or received
  std::chrono::steady_clock::time_point start, end;
  bool failed;
  uint32_t packed = 1;
};

struct CollectiveCounters {
  uint64_t calls[kCollectiveKinds] = {};
  uint64_t bytes = 0;         // payload bytes over every call
  uint64_t device_calls = 0;  // of the calls, those the device transport carried
  double ms = 0;              // wall time inside collectives, waiting included (the buckets' thread's too)
  uint64_t bucketed = 0;      // all_reduces that went in buckets
  uint64_t buckets = 0;       // the buckets they went in
  uint64_t total_calls() const;
};

class AllReduceBuckets;
struct BucketEntry;

class Collectives {
 public:
  Collectives();
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return transport_ ? transport_->rank() : 0; }
  int size() const { return transport_ ? transport_->size() : 1; }
  bool distributed() const { return transport_ != nullptr; }
  // "one process", or the transport's describe().
  std::string describe() const;

  // Installs the transport (the runtime, once, before the script runs).
  void set_transport(std::unique_ptr<CommTransport> t) { transport_ = std::move(t); }
  CommTransport* transport() const { return transport_.get(); }
  // Installs the device transport (the runtime, with the transport).
  void set_device_transport(std::unique_ptr<DeviceCommTransport> t) { device_transport_ = std::move(t); }
  DeviceCommTransport* device_transport() const { return device_transport_.get(); }
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }
  // all_reduces of at most this many bytes go in buckets (allreduce_buckets.h); 0: none do.
  void set_bucket_bytes(size_t bytes) { bucket_bytes_ = bytes; }
  size_t bucket_bytes() const { return bucket_bytes_; }
  // Called after every collective on this rank (the runtime's timeline),
  // from the buckets' thread for buckets; none by default.
  void set_observer(std::function<void(const CollectiveRecord&)> f);
  CollectiveCounters counters() const;
  // Waits for every queued all_reduce and every step the device transport
  // left in flight (the end of a run); throws FatalRuntimeError when one failed.
  void drain();
  // Drains and stops the buckets' thread (before MPI is finalized).
  void shutdown();

  // The operations; `name` prefixes errors ("all_reduce: ..."). Outputs are
  // preallocated with the shape the op's shape rule gave.
  void all_reduce(const TensorObj& in, ReduceOp op, TensorObj& out);
  void all_gather(const TensorObj& in, int axis, TensorObj& out);
  void reduce_scatter(const TensorObj& in, ReduceOp op, int axis, TensorObj& out);
  void broadcast(const TensorObj& in, int root, TensorObj& out);
  void barrier();
  void send(const TensorObj& t, int dst);
  void recv(TensorObj& out, int src);

  // The buckets' thread: one round's exchange and reduction of the head of
  // its queue (`run`, one element type and reduction): returns how many of
  // them every rank sent (the prefix), reduced end to end into `reduced`.
  size_t reduce_round(const std::vector<BucketEntry*>& run, std::vector<unsigned char>& reduced);

  // Checks a peer or root rank: "NAME: ROLE 3 is not a rank of a world of 2 ranks (0 to 1)".
  void check_rank(const char* name, const char* role, int64_t r) const;
  // check_rank, and a world of one rank has no peer at all.
  void check_peer(const char* name, const char* role, int64_t r) const;

 private:
  struct Step;
  struct Message;
  Step open_step(CollectiveKind kind, uint8_t op, int arg);
  Step begin(CollectiveKind kind, const TensorObj* t, int arg, uint8_t op);
  void agree(Step& s);
  // Every rank's message of this step; throws (fail) on a timeout.
  std::vector<Message> exchange(Step& s, const Message& mine);
  void finish(Step& s, uint64_t bytes, bool failed, uint32_t packed = 1);
  [[noreturn]] void fail(Step& s, const std::string& what);
  // Whether this rank's part of a step may go through the device transport.
  bool device_may_carry(CollectiveKind kind, const TensorObj& t, int axis, ReduceOp op) const;
  // The step on the device transport (every rank agreed): `out` (null for
  // send) gets a device copy, its elements left on the device.
  void on_device(Step& s, const TensorObj* in, TensorObj* out);

  // Guards the transport and everything below it: the script's thread and
  // the buckets' thread both run collectives.
  mutable std::mutex mu_;
  std::unique_ptr<CommTransport> transport_;
  std::unique_ptr<DeviceCommTransport> device_transport_;
  std::unique_ptr<AllReduceBuckets> buckets_;
  size_t bucket_bytes_ = size_t{16} << 20;
  double timeout_s_ = 60;
  uint64_t steps_ = 0;
  std::vector<uint64_t> p2p_sent_, p2p_received_;
  std::string broken_;  // why the world cannot be used any more; "" while it can
  CollectiveCounters counters_;
  std::function<void(const CollectiveRecord&)> observer_;
};

// The process's collectives (one rank of one until the runtime installs a transport).
Collectives& process_collectives();

}  // namespace tessera
