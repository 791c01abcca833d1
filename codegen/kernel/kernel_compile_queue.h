// The background kernel compiler: one thread of its own that runs K3
// tuning-and-compile jobs in order, so that the program goes on with its K2
// kernel meanwhile (a TBB worker would stall the kernels' parallel loops).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::kir {

class KernelCompileQueue {
 public:
  KernelCompileQueue() = default;
  ~KernelCompileQueue();  // drops the jobs not started, waits for the running one
  KernelCompileQueue(const KernelCompileQueue&) = delete;
  KernelCompileQueue& operator=(const KernelCompileQueue&) = delete;

  // Runs job on the queue's thread (started on the first post). A job must
  // not throw.
  void post(std::function<void()> job);
  // Waits until every job posted so far has run.
  void drain();
  // Drops the jobs not started and waits for the running one (a VM that
  // ends does not wait for tuning it will never use).
  void cancel();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool running_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace tessera::kir
