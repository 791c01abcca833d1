#include "vm/graph/collectives.h"

#include <algorithm>
#include <cstring>

#include "vm/core/error.h"
#include "vm/graph/allreduce_buckets.h"
#include "vm/graph/collective_elements.h"

namespace tessera {

namespace ce = collective_elements;

namespace {

constexpr const char* kReduceNames[] = {"sum", "prod", "max", "min", "avg"};
constexpr const char* kCollectiveNames[kCollectiveKinds] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                                            "barrier",    "send",       "recv"};

// One rank's description of a step, exchanged before any data moves.
struct StepDesc {
  uint64_t step = 0;
  uint8_t kind = 0;
  uint8_t dtype = 0;
  uint8_t ndim = 0;
  uint8_t op = 0;
  int32_t arg = 0;  // axis, root or peer
  uint8_t device = 0;  // 1: this rank's tensor may go through the device transport
  uint8_t pad[7] = {};
  int64_t dims[kMaxRank] = {};
  bool has_tensor() const { return ndim != 0xFF; }
};
static_assert(sizeof(StepDesc) == 24 + 8 * kMaxRank);

std::string type_text(const StepDesc& d) {
  if (!d.has_tensor()) return "no tensor";
  Shape s(d.dims, d.dims + d.ndim);
  return std::string(dtype_name(static_cast<DType>(d.dtype))) + shape_str(s);
}

std::string arg_text(const StepDesc& d) {
  const auto kind = static_cast<CollectiveKind>(d.kind);
  if (kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter) {
    std::string t = std::string("op=\"") + kReduceNames[d.op] + "\"";
    if (kind == CollectiveKind::ReduceScatter) t += ", axis=" + std::to_string(d.arg);
    return t;
  }
  if (kind == CollectiveKind::AllGather) return "axis=" + std::to_string(d.arg);
  if (kind == CollectiveKind::Broadcast) return "root=" + std::to_string(d.arg);
  return "";
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string t;
  for (size_t i = 0; i < ranks.size(); ++i) t += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + t;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// The exchange's message: the step's description, and for a round of the
// all_reduce buckets the description of each all_reduce in it. Every
// message has this size, so that any two ranks' messages match in MPI.
constexpr size_t kMaxPacked = AllReduceBuckets::kMaxEntries;

}  // namespace

std::optional<ReduceOp> reduce_op_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kReduceNames); ++i)
    if (name == kReduceNames[i]) return static_cast<ReduceOp>(i);
  return std::nullopt;
}
const char* reduce_op_name(ReduceOp op) { return kReduceNames[static_cast<size_t>(op)]; }
const char* collective_name(CollectiveKind k) { return kCollectiveNames[static_cast<size_t>(k)]; }

uint64_t CollectiveCounters::total_calls() const {
  uint64_t n = 0;
  for (uint64_t c : calls) n += c;
  return n;
}

std::string Collectives::describe() const { return transport_ ? transport_->describe() : "one process"; }

Collectives::Collectives() = default;
Collectives::~Collectives() = default;

void Collectives::set_observer(std::function<void(const CollectiveRecord&)> f) {
  std::lock_guard<std::mutex> lock(mu_);
  observer_ = std::move(f);
}

CollectiveCounters Collectives::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void Collectives::drain() {
  if (buckets_) buckets_->drain();
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_.empty() && device_transport_) try {
      device_transport_->complete();
    } catch (const std::exception& e) {
      broken_ = std::string("a collective on the device failed (") + e.what() + ")";
    }
  if (!broken_.empty()) throw FatalRuntimeError(broken_);
}

void Collectives::shutdown() {
  if (buckets_) buckets_->stop();
}

// One step on the script's thread: the queued all_reduces are drained
// first (collectives keep the program's order), then the step holds the lock.
struct Collectives::Step {
  CollectiveKind kind;
  const char* name;
  StepDesc desc;
  std::chrono::steady_clock::time_point start;
  CommDeadline deadline;
  int peer = -1;
  bool device = false;  // every rank's tensor goes through the device transport
  std::unique_lock<std::mutex> lock;
};

struct Collectives::Message {
  StepDesc head;
  uint32_t packed = 0;  // a bucket's all_reduces (entry[0..packed))
  uint32_t reserved = 0;
  StepDesc entry[kMaxPacked];
};

void Collectives::check_rank(const char* name, const char* role, int64_t r) const {
  const int n = size();
  if (r < 0 || r >= n)
    throw RuntimeError(std::string(name) + ": " + role + " " + std::to_string(r) + " is not a rank of a world of " +
                       std::to_string(n) + (n == 1 ? " rank (0)" : " ranks (0 to " + std::to_string(n - 1) + ")"));
}

namespace {

// A tensor's part of a step's description: its dtype and shape.
void describe_tensor(StepDesc& d, DType dtype, const Shape& shape) {
  d.dtype = static_cast<uint8_t>(dtype);
  d.ndim = static_cast<uint8_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) d.dims[i] = shape[i];
}

}  // namespace

// Every step's start, the script's and the buckets' thread's alike: the
// lock, the clock, the deadline, and the description's operation.
Collectives::Step Collectives::open_step(CollectiveKind kind, uint8_t op, int arg) {
  Step s{kind, collective_name(kind), {}, {}, {}, -1, false, std::unique_lock<std::mutex>(mu_)};
  s.start = std::chrono::steady_clock::now();
  if (!broken_.empty()) throw FatalRuntimeError(std::string(s.name) + ": " + broken_);
  s.deadline = s.start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(timeout_s_));
  s.desc.kind = static_cast<uint8_t>(kind);
  s.desc.op = op;
  s.desc.arg = arg;
  s.desc.ndim = 0xFF;
  return s;
}

Collectives::Step Collectives::begin(CollectiveKind kind, const TensorObj* t, int arg, uint8_t op) {
  if (buckets_) buckets_->drain();
  Step s = open_step(kind, op, arg);
  if (t) {
    describe_tensor(s.desc, t->dtype, t->shape);
    s.desc.device = device_transport_ && t->device_copy &&
                    device_may_carry(kind, *t, arg, static_cast<ReduceOp>(op)) &&
                    device_transport_->accepts(*t->device_copy);
  }
  return s;
}

// The device transport moves contiguous elements and reduces what the host
// transport reduces, in the tensor's own dtype: avg, f16 and bf16
// reductions, and layouts along an axis other than 0 take the host's path.
bool Collectives::device_may_carry(CollectiveKind kind, const TensorObj& t, int axis, ReduceOp op) const {
  if (t.nbytes() == 0) return false;
  const bool reduces = kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter;
  if (reduces && (op == ReduceOp::Avg || ce::widened(t.dtype))) return false;
  if ((kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter) && axis != 0) return false;
  return kind != CollectiveKind::Barrier;
}

void Collectives::fail(Step& s, const std::string& what) {
  const std::string msg = std::string(s.name) + ": " + what;
  broken_ = "an earlier collective failed (" + msg + ")";
  finish(s, 0, true);
  throw FatalRuntimeError(msg);
}

std::vector<Collectives::Message> Collectives::exchange(Step& s, const Message& mine) {
  std::vector<Message> all(static_cast<size_t>(size()));
  try {
    transport_->exchange(&mine, all.data(), sizeof(Message), s.deadline);
  } catch (const CommTimeout& e) {
    fail(s, "did not complete within " + seconds_text(timeout_s_) + " (JIT parameter commtimeout): " +
                (e.missing.empty() ? std::string("every rank arrived, but ") + e.what()
                                   : ranks_text(e.missing) + " never called it"));
  } catch (const std::exception& e) {
    fail(s, e.what());
  }
  const StepDesc& first = all[0].head;
  for (size_t r = 1; r < all.size(); ++r) {
    const StepDesc& d = all[r].head;
    if (d.kind != first.kind || d.step != first.step)
      fail(s, "the ranks disagree on the collective: rank 0 called " +
                  std::string(collective_name(static_cast<CollectiveKind>(first.kind))) + " (its collective " +
                  std::to_string(first.step) + "), rank " + std::to_string(r) + " called " +
                  collective_name(static_cast<CollectiveKind>(d.kind)) + " (its collective " +
                  std::to_string(d.step) + "); every rank must call the same collectives in the same order");
  }
  return all;
}

// Every rank's description of this step; the same verdict on every rank.
void Collectives::agree(Step& s) {
  s.desc.step = steps_++;
  if (!transport_) return;
  Message mine;
  mine.head = s.desc;
  const std::vector<Message> all = exchange(s, mine);
  const StepDesc& first = all[0].head;
  for (size_t r = 1; r < all.size(); ++r) {
    const StepDesc& d = all[r].head;
    if (d.dtype != first.dtype || d.ndim != first.ndim ||
        (first.has_tensor() && !std::equal(first.dims, first.dims + first.ndim, d.dims)))
      fail(s, "shapes or dtypes differ across ranks: rank 0 has " + type_text(first) + ", rank " +
                  std::to_string(r) + " has " + type_text(d));
    if (d.op != first.op || d.arg != first.arg || all[r].packed != all[0].packed)
      fail(s, "the ranks disagree on the arguments: rank 0 passed " + arg_text(first) + ", rank " +
                  std::to_string(r) + " passed " + arg_text(d));
  }
  s.device = std::all_of(all.begin(), all.end(), [](const Message& m) { return m.head.device != 0; });
}

void Collectives::finish(Step& s, uint64_t bytes, bool failed, uint32_t packed) {
  const auto end = std::chrono::steady_clock::now();
  counters_.calls[static_cast<size_t>(s.kind)] += packed;
  counters_.bytes += bytes;
  counters_.ms += std::chrono::duration<double, std::milli>(end - s.start).count();
  if (observer_) observer_(CollectiveRecord{s.kind, s.desc.step, s.peer, bytes, s.start, end, failed, packed});
}

// A transport call: its timeout and errors become the step's failure.
#define TESSERA_COMM_CALL(s, call)                                                                  \
  try {                                                                                             \
    call;                                                                                           \
  } catch (const CommTimeout& e) {                                                                  \
    fail(s, "did not complete within " + seconds_text(timeout_s_) + " (JIT parameter commtimeout)" + \
                (e.missing.empty() ? std::string() : ": " + ranks_text(e.missing) + " missing") +    \
                " [" + e.what() + "]");                                                             \
  } catch (const std::exception& e) {                                                               \
    fail(s, e.what());                                                                              \
  }

// A round of the buckets' thread: every rank's run described, the common
// prefix checked against rank 0's and reduced as one transport all_reduce.
size_t Collectives::reduce_round(const std::vector<BucketEntry*>& run, std::vector<unsigned char>& reduced) {
  const BucketEntry& head = *run.front();
  // arg -1: a bucket.
  Step s = open_step(CollectiveKind::AllReduce, static_cast<uint8_t>(ce::transport_op(head.dtype, head.op)), -1);
  s.desc.step = steps_++;
  Message mine;
  mine.head = s.desc;
  mine.packed = static_cast<uint32_t>(std::min(run.size(), kMaxPacked));
  for (size_t i = 0; i < mine.packed; ++i) {
    StepDesc& d = mine.entry[i];
    d.kind = s.desc.kind;
    d.op = static_cast<uint8_t>(run[i]->op);
    describe_tensor(d, run[i]->dtype, run[i]->shape);
  }
  const std::vector<Message> all = exchange(s, mine);
  uint32_t m = mine.packed;
  for (const Message& msg : all) {
    if (msg.head.arg != -1 || msg.head.op != mine.head.op)
      fail(s, "the ranks disagree on the collective's arguments: rank 0 and another rank reduce with different "
              "ops or tensor sizes at the same all_reduce");
    m = std::min(m, msg.packed);
  }
  for (size_t r = 1; r < all.size(); ++r)
    for (uint32_t i = 0; i < m; ++i) {
      const StepDesc& a = all[0].entry[i];
      const StepDesc& d = all[r].entry[i];
      if (d.dtype != a.dtype || d.ndim != a.ndim || !std::equal(a.dims, a.dims + a.ndim, d.dims))
        fail(s, "shapes or dtypes differ across ranks: rank 0 has " + type_text(a) + ", rank " + std::to_string(r) +
                    " has " + type_text(d));
      if (d.op != a.op)
        fail(s, "the ranks disagree on the arguments: rank 0 passed " + arg_text(a) + ", rank " + std::to_string(r) +
                    " passed " + arg_text(d));
    }
  // The prefix packed end to end, reduced as one.
  const CommElem e = ce::elem_of(head.dtype);
  const size_t eb = ce::elem_bytes(e);
  size_t count = 0, bytes = 0;
  for (uint32_t i = 0; i < m; ++i) {
    count += run[i]->count;
    bytes += run[i]->count * dtype_size(run[i]->dtype);
  }
  std::vector<unsigned char> packed(count * eb);
  size_t at = 0;
  for (uint32_t i = 0; i < m; ++i) {
    std::memcpy(packed.data() + at, run[i]->data.data(), run[i]->data.size());
    at += run[i]->data.size();
  }
  reduced.resize(count * eb);
  TESSERA_COMM_CALL(s, transport_->all_reduce(packed.data(), reduced.data(), count, e, ce::transport_op(head.dtype, head.op),
                                              s.deadline));
  ++counters_.buckets;
  counters_.bucketed += m;
  finish(s, bytes, false, m);
  return m;
}

void Collectives::on_device(Step& s, const TensorObj* in, TensorObj* out) {
  std::unique_ptr<DeviceCopy> result;
  if (out) {
    try {
      result = in ? in->device_copy->new_block(out->nbytes()) : device_transport_->new_block(out->nbytes());
    } catch (const std::exception& e) {
      fail(s, std::string("no device memory for the output: ") + e.what());
    }
    if (!result) fail(s, "rank " + std::to_string(s.peer) + " sent from its device, but this rank's device transport has no device");
  }
  DeviceCommTransport& t = *device_transport_;
  const size_t n = in ? static_cast<size_t>(in->numel) : 0;
  const CommElem e = in ? ce::elem_of(in->dtype) : CommElem::U8;
  const auto op = static_cast<ReduceOp>(s.desc.op);
  const int w = size();
  TESSERA_COMM_CALL(s, switch (s.kind) {
    case CollectiveKind::AllReduce: t.all_reduce(*in->device_copy, *result, n, e, ce::transport_op(in->dtype, op), s.deadline); break;
    case CollectiveKind::AllGather: t.all_gather(*in->device_copy, *result, in->nbytes(), s.deadline); break;
    case CollectiveKind::ReduceScatter:
      t.reduce_scatter(*in->device_copy, *result, n / static_cast<size_t>(w), e, ce::transport_op(in->dtype, op), s.deadline);
      break;
    case CollectiveKind::Broadcast: t.broadcast(*in->device_copy, *result, in->nbytes(), s.desc.arg, s.deadline); break;
    case CollectiveKind::Send: t.send(*in->device_copy, in->nbytes(), s.peer, s.deadline); break;
    case CollectiveKind::Recv: t.recv(*result, out->nbytes(), s.peer, s.deadline); break;
    case CollectiveKind::Barrier: break;
  });
  if (out) out->attach_device_copy(std::move(result));
  ++counters_.device_calls;
  finish(s, out && s.kind != CollectiveKind::AllReduce ? out->nbytes() : in->nbytes(), false);
}

void Collectives::all_reduce(const TensorObj& in, ReduceOp op, TensorObj& out) {
  // Small ones (several ranks, buckets on) go in a bucket and do not wait.
  // The choice must be the same on every rank, whatever holds the tensor
  // (a bucket takes it to the host): the runtime turns buckets off where the
  // device transport should carry tensors (--device=gpu).
  if (transport_ && bucket_bytes_ > 0 && in.nbytes() <= bucket_bytes_ && in.numel > 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!broken_.empty()) throw FatalRuntimeError("all_reduce: " + broken_);
      if (!buckets_) buckets_ = std::make_unique<AllReduceBuckets>(*this);
    }
    buckets_->enqueue(in, op, out);
    return;
  }
  Step s = begin(CollectiveKind::AllReduce, &in, 0, static_cast<uint8_t>(op));
  agree(s);
  if (s.device) return on_device(s, &in, &out);
  const size_t n = static_cast<size_t>(in.numel);
  const CommElem e = ce::elem_of(in.dtype);
  if (!transport_) {
    std::memcpy(out.data(), in.data(), in.nbytes());
  } else if (!ce::widened(in.dtype)) {
    TESSERA_COMM_CALL(s, transport_->all_reduce(in.data(), out.data(), n, e, ce::transport_op(in.dtype, op), s.deadline));
    if (op == ReduceOp::Avg) ce::divide(out.data(), e, n, size());
  } else {
    std::vector<float> wide(n), reduced(n);
    ce::widen(in.data(), in.dtype, n, wide.data());
    TESSERA_COMM_CALL(s, transport_->all_reduce(wide.data(), reduced.data(), n, e, ce::transport_op(in.dtype, op),
                                                s.deadline));
    if (op == ReduceOp::Avg) ce::divide(reduced.data(), e, n, size());
    ce::narrow(reduced.data(), in.dtype, n, out.data());
  }
  finish(s, in.nbytes(), false);
}

void Collectives::all_gather(const TensorObj& in, int axis, TensorObj& out) {
  Step s = begin(CollectiveKind::AllGather, &in, axis, 0);
  agree(s);
  if (s.device) return on_device(s, &in, &out);
  const size_t w = static_cast<size_t>(size());
  if (!transport_ || axis == 0 || in.nbytes() == 0) {
    if (!transport_) std::memcpy(out.data(), in.data(), in.nbytes());
    else TESSERA_COMM_CALL(s, transport_->all_gather(in.data(), out.data(), in.nbytes(), s.deadline));
  } else {
    // Rank blocks gathered whole, then interleaved along the axis.
    std::vector<unsigned char> all(w * in.nbytes());
    TESSERA_COMM_CALL(s, transport_->all_gather(in.data(), all.data(), in.nbytes(), s.deadline));
    size_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape[static_cast<size_t>(d)]);
    const size_t inner = in.nbytes() / outer;
    auto* dst = static_cast<unsigned char*>(out.data());
    for (size_t o = 0; o < outer; ++o)
      for (size_t r = 0; r < w; ++r) std::memcpy(dst + (o * w + r) * inner, all.data() + r * in.nbytes() + o * inner, inner);
  }
  finish(s, out.nbytes(), false);
}

void Collectives::reduce_scatter(const TensorObj& in, ReduceOp op, int axis, TensorObj& out) {
  Step s = begin(CollectiveKind::ReduceScatter, &in, axis, static_cast<uint8_t>(op));
  agree(s);
  if (s.device) return on_device(s, &in, &out);
  if (!transport_) {
    std::memcpy(out.data(), in.data(), in.nbytes());
    finish(s, in.nbytes(), false);
    return;
  }
  const size_t w = static_cast<size_t>(size());
  const CommElem e = ce::elem_of(in.dtype);
  const size_t eb = ce::elem_bytes(e);
  std::vector<unsigned char> wide(static_cast<size_t>(in.numel) * eb);
  ce::widen(in.data(), in.dtype, static_cast<size_t>(in.numel), wide.data());
  // Blocks in rank order: rank r's part along the axis, for every outer index.
  size_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape[static_cast<size_t>(d)]);
  const size_t part = static_cast<size_t>(in.numel) / outer / w;  // elements of one rank's part per outer index
  const size_t count = outer * part;
  std::vector<unsigned char> blocks;
  const void* send = wide.data();
  if (outer > 1) {
    blocks.resize(w * count * eb);
    for (size_t r = 0; r < w; ++r)
      for (size_t o = 0; o < outer; ++o)
        std::memcpy(blocks.data() + (r * count + o * part) * eb, wide.data() + (o * w + r) * part * eb, part * eb);
    send = blocks.data();
  }
  std::vector<unsigned char> reduced(count * eb);
  TESSERA_COMM_CALL(s, transport_->reduce_scatter(send, reduced.data(), count, e, ce::transport_op(in.dtype, op),
                                                  s.deadline));
  if (op == ReduceOp::Avg) ce::divide(reduced.data(), e, count, size());
  ce::narrow(reduced.data(), in.dtype, count, out.data());
  finish(s, in.nbytes(), false);
}

void Collectives::broadcast(const TensorObj& in, int root, TensorObj& out) {
  Step s = begin(CollectiveKind::Broadcast, &in, root, 0);
  agree(s);
  if (s.device) return on_device(s, &in, &out);
  if (rank() == root) std::memcpy(out.data(), in.data(), in.nbytes());
  if (transport_) TESSERA_COMM_CALL(s, transport_->broadcast(out.data(), out.nbytes(), root, s.deadline));
  finish(s, in.nbytes(), false);
}

// The exchange of descriptions is itself the barrier: no rank leaves it
// before every rank's has come.
void Collectives::barrier() {
  Step s = begin(CollectiveKind::Barrier, nullptr, 0, 0);
  agree(s);
  finish(s, 0, false);
}

// One rank has no peer (the spec's single-process send and recv).
void Collectives::check_peer(const char* name, const char* role, int64_t r) const {
  if (size() == 1)
    throw RuntimeError(std::string(name) + ": no peer: a run without mpirun is one rank (mpirun -np N starts N)");
  check_rank(name, role, r);
}

void Collectives::send(const TensorObj& t, int dst) {
  check_peer("send", "dst", dst);
  if (dst == rank()) throw RuntimeError("send: dst " + std::to_string(dst) + " is this rank: a rank cannot send to itself");
  Step s = begin(CollectiveKind::Send, &t, dst, 0);
  s.peer = dst;
  p2p_sent_.resize(static_cast<size_t>(size()));
  s.desc.step = p2p_sent_[static_cast<size_t>(dst)]++;
  TESSERA_COMM_CALL(s, transport_->send(&s.desc, sizeof(StepDesc), dst, s.deadline));
  if (s.desc.device) return on_device(s, &t, nullptr);  // the receiver follows the description
  TESSERA_COMM_CALL(s, transport_->send(t.data(), t.nbytes(), dst, s.deadline));
  finish(s, t.nbytes(), false);
}

void Collectives::recv(TensorObj& out, int src) {
  check_peer("recv", "src", src);
  if (src == rank()) throw RuntimeError("recv: src " + std::to_string(src) + " is this rank: a rank cannot receive from itself");
  Step s = begin(CollectiveKind::Recv, &out, src, 0);
  s.peer = src;
  p2p_received_.resize(static_cast<size_t>(size()));
  s.desc.step = p2p_received_[static_cast<size_t>(src)]++;
  StepDesc theirs;
  try {
    transport_->recv(&theirs, sizeof(StepDesc), src, s.deadline);
  } catch (const CommTimeout&) {
    fail(s, "rank " + std::to_string(src) + " sent nothing within " + seconds_text(timeout_s_) +
                " (JIT parameter commtimeout)");
  } catch (const std::exception& e) {
    fail(s, e.what());
  }
  if (theirs.dtype != s.desc.dtype || theirs.ndim != s.desc.ndim ||
      !std::equal(s.desc.dims, s.desc.dims + s.desc.ndim, theirs.dims))
    fail(s, "rank " + std::to_string(src) + " sent " + type_text(theirs) + ", but the tensor to receive (like) is " +
                type_text(s.desc));
  if (theirs.device) return on_device(s, nullptr, &out);
  TESSERA_COMM_CALL(s, transport_->recv(out.data(), out.nbytes(), src, s.deadline));
  finish(s, out.nbytes(), false);
}

#undef TESSERA_COMM_CALL

Collectives& process_collectives() {
  static Collectives* c = new Collectives();  // lives to the end of the process, as MPI does
  return *c;
}

}  // namespace tessera
