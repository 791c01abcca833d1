#include "vm/graph/allreduce_buckets.h"

#include "vm/core/error.h"
#include "vm/graph/collective_elements.h"
#include "vm/tensor/device_copy.h"

namespace tessera {

namespace ce = collective_elements;

namespace {

// A result whose elements a bucket has not brought yet: the first host
// access waits for them (TensorObj::fetch), as for a device's copy.
class PendingAllReduce final : public DeviceCopy {
 public:
  PendingAllReduce(AllReduceBuckets& owner, std::shared_ptr<BucketEntry> e) : owner_(owner), e_(std::move(e)) {}
  ~PendingAllReduce() override { owner_.orphan(e_); }
  // The buckets' thread wrote the host buffer when the entry was done.
  void to_host(void*, size_t) override { owner_.wait(e_); }

 private:
  AllReduceBuckets& owner_;
  std::shared_ptr<BucketEntry> e_;
};

// Whether two entries may share a bucket: one transport element and reduction.
bool same_kind(const BucketEntry& a, const BucketEntry& b) {
  return ce::elem_of(a.dtype) == ce::elem_of(b.dtype) &&
         ce::transport_op(a.dtype, a.op) == ce::transport_op(b.dtype, b.op);
}

}  // namespace

AllReduceBuckets::~AllReduceBuckets() { stop(); }

void AllReduceBuckets::enqueue(const TensorObj& in, ReduceOp op, TensorObj& out) {
  auto e = std::make_shared<BucketEntry>();
  e->dtype = in.dtype;
  e->op = op;
  e->count = static_cast<size_t>(in.numel);
  e->shape = in.shape;
  e->out = &out;
  // The input is copied now (the script may change it afterwards); a
  // pending input waits for its own bucket first.
  e->data.resize(e->count * ce::elem_bytes(ce::elem_of(in.dtype)));
  ce::widen(in.data(), in.dtype, e->count, e->data.data());
  out.attach_device_copy(std::make_unique<PendingAllReduce>(*this, e));
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  queue_.push_back(std::move(e));
  last_enqueue_ = std::chrono::steady_clock::now();
  wake_.notify_one();
}

void AllReduceBuckets::wait(const std::shared_ptr<BucketEntry>& e) {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiters_;
  wake_.notify_one();
  done_.wait(lock, [&] { return e->done; });
  --waiters_;
  if (!e->error.empty()) throw FatalRuntimeError(e->error);
}

void AllReduceBuckets::orphan(const std::shared_ptr<BucketEntry>& e) {
  std::lock_guard<std::mutex> lock(mu_);
  e->out = nullptr;
}

void AllReduceBuckets::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiters_;
  wake_.notify_one();
  done_.wait(lock, [&] { return queue_.empty(); });
  --waiters_;
}

void AllReduceBuckets::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

size_t AllReduceBuckets::head_run() const {
  const size_t limit = owner_.bucket_bytes();
  size_t n = 0, bytes = 0;
  while (n < queue_.size() && n < kMaxEntries && same_kind(*queue_[0], *queue_[n])) {
    bytes += queue_[n]->data.size();
    if (n > 0 && bytes > limit) break;
    ++n;
  }
  return n;
}

void AllReduceBuckets::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait_for(lock, kLinger, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    const size_t n = head_run();
    // A run is closed when something follows it or it is full; an open one
    // goes when someone waits, when stopping, or after kLinger of quiet.
    const bool closed = n < queue_.size() || n == kMaxEntries || waiters_ > 0 || stopping_ ||
                        std::chrono::steady_clock::now() - last_enqueue_ >= kLinger;
    if (!closed) {
      wake_.wait_until(lock, last_enqueue_ + kLinger);
      continue;
    }
    std::vector<std::shared_ptr<BucketEntry>> run(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    std::vector<BucketEntry*> raw;
    for (const auto& e : run) raw.push_back(e.get());
    std::vector<unsigned char> reduced;
    size_t m = 0;
    std::string error;
    try {
      m = owner_.reduce_round(raw, reduced);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    if (!error.empty()) {
      // The world is broken: every queued all_reduce fails with the round's error.
      for (auto& e : queue_) {
        e->error = error;
        e->done = true;
      }
      queue_.clear();
      done_.notify_all();
      continue;
    }
    // The reduced prefix into its result tensors (those still alive).
    const CommElem elem = ce::elem_of(run[0]->dtype);
    size_t at = 0;
    for (size_t i = 0; i < m; ++i) {
      BucketEntry& e = *run[i];
      void* part = reduced.data() + at;
      at += e.count * ce::elem_bytes(elem);
      if (e.out) {
        if (e.op == ReduceOp::Avg) ce::divide(part, elem, e.count, owner_.size());
        ce::narrow(part, e.dtype, e.count, e.out->host_buffer());
      }
      e.done = true;
      queue_.pop_front();
    }
    done_.notify_all();
  }
}

}  // namespace tessera
