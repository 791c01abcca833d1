// AllReduceBuckets: small all_reduces packed into buckets and reduced on a
// thread of the collectives' own (docs/distributed.md, "Buckets").
//
// Design. all_reduce of a tensor no larger than the bucket size (JIT
// parameter `bucket`, default 16 MB) does not wait: its elements are copied
// (widened as the transport reduces them) into a queue, and its result is a
// tensor whose elements are pending, held by a DeviceCopy of this file
// (device_copy.h): the first read of them waits for their bucket, as a read
// of a tensor the GPU holds waits for the GPU. The script computes on
// meanwhile, so that communication overlaps independent work.
//
// The thread sends a bucket when its run of queued all_reduces (the same
// element type and reduction, at most kMaxEntries of them and `bucket`
// bytes) is closed: another kind follows, a limit is reached, a reader or
// a drain waits, or nothing was queued for kLinger. When the ranks close
// their buckets at different points (each rank's own timing), the round's
// exchange of descriptions (Collectives::reduce_round) reduces the common
// prefix, the fewest entries any rank sent, and the rest wait for the next
// round: every rank queues the same all_reduces in the same order, so every
// rank reduces the same prefixes. A bucket is one transport all_reduce of
// the entries packed end to end.
//
// Every other collective drains the queue first (collectives keep their
// program order), and so does the end of a run.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vm/graph/collectives.h"

namespace tessera {

// One queued all_reduce.
struct BucketEntry {
  DType dtype;
  ReduceOp op;                      // as the script asked (avg included)
  std::vector<unsigned char> data;  // the input's elements, widened
  size_t count = 0;                 // elements
  Shape shape;
  TensorObj* out = nullptr;         // null once the result tensor is gone
  bool done = false;
  std::string error;                // set when its round failed
};

class AllReduceBuckets {
 public:
  static constexpr size_t kMaxEntries = 32;
  static constexpr std::chrono::microseconds kLinger{200};
  using Entry = BucketEntry;

  explicit AllReduceBuckets(Collectives& owner) : owner_(owner) {}
  ~AllReduceBuckets();
  AllReduceBuckets(const AllReduceBuckets&) = delete;
  AllReduceBuckets& operator=(const AllReduceBuckets&) = delete;

  // Queues `in` reduced with `op` into `out` (whose elements are pending
  // until read); starts the thread at the first call.
  void enqueue(const TensorObj& in, ReduceOp op, TensorObj& out);
  // Returns once every queued all_reduce is done (or failed).
  void drain();
  // Drains and stops the thread (before MPI is finalized).
  void stop();

  // The pending elements' holder: its read waits for the entry.
  void wait(const std::shared_ptr<Entry>& e);
  // The result tensor is gone: its entry is reduced but written nowhere.
  void orphan(const std::shared_ptr<Entry>& e);

 private:
  void run();
  // The head of the queue that one round may send (a run of one kind).
  size_t head_run() const;

  Collectives& owner_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<std::shared_ptr<Entry>> queue_;
  std::chrono::steady_clock::time_point last_enqueue_;
  int waiters_ = 0;  // readers and drains waiting: send partial runs at once
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera
