#include "runtime/compile_worker.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace tessera::jit {

CompileWorker::CompileWorker(std::chrono::milliseconds delay) : delay_(delay), thread_([this] { run(); }) {}

CompileWorker::~CompileWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

bool CompileWorker::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

void CompileWorker::abandon(std::unique_ptr<CompileWorker> worker) {
  CompileWorker* w = worker.release();  // the thread uses it until it returns
  {
    std::lock_guard<std::mutex> lock(w->mu_);
    w->stop_ = true;
    w->jobs_.clear();
  }
  w->wake_.notify_all();
  w->thread_.detach();
}

void CompileWorker::submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_front(std::move(job));
  }
  wake_.notify_one();
}

void CompileWorker::prioritize(uint32_t trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.trace_id == trace_id; });
  if (it == jobs_.end() || it == jobs_.begin()) return;
  Job job = std::move(*it);
  jobs_.erase(it);
  jobs_.push_front(std::move(job));
}

std::vector<CompileResult> CompileWorker::take_finished() {
  if (!has_finished()) return {};
  std::lock_guard<std::mutex> lock(mu_);
  has_done_.store(false, std::memory_order_relaxed);
  return std::exchange(done_, {});
}

void CompileWorker::run() {
  // Compiling ahead is speculative: where the machine's cores are busy, the
  // program's own thread goes first (Linux keeps a nice value per thread; a
  // failure leaves the thread as it was).
  const auto self = static_cast<id_t>(gettid());
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, self);
  if (errno == 0) setpriority(PRIO_PROCESS, self, std::min(nice + kNice, 19));
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    CompileResult r = try_compile(job.trace_id, [&] {
      if (!t2_backend_) t2_backend_ = std::make_unique<LlvmBackend>(2);
      return job.compile_with(*t2_backend_);
    });
    r.background = true;
    lock.lock();
    busy_ = false;
    done_.push_back(std::move(r));
    has_done_.store(true, std::memory_order_release);
  }
}

}  // namespace tessera::jit
