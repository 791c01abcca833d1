#include "codegen/kernel/kernel_compile_queue.h"

namespace tessera::kir {

KernelCompileQueue::~KernelCompileQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.clear();
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KernelCompileQueue::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  wake_.notify_one();
}

void KernelCompileQueue::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return jobs_.empty() && !running_; });
}

void KernelCompileQueue::cancel() {
  std::unique_lock<std::mutex> lock(mu_);
  jobs_.clear();
  idle_.wait(lock, [&] { return !running_; });
}

void KernelCompileQueue::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    job();
    lock.lock();
    running_ = false;
    idle_.notify_all();
  }
}

}  // namespace tessera::kir
