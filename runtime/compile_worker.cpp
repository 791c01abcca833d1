#include "runtime/compile_worker.h"

#include <exception>
#include <utility>

namespace tessera::jit {

CompileWorker::CompileWorker() : thread_([this] { run(); }) {}

CompileWorker::~CompileWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void CompileWorker::submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

std::vector<CompileWorker::Result> CompileWorker::take_finished() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(done_, {});
}

void CompileWorker::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    Result r{job.trace_id, {}, {}};
    try {
      if (!backend_) backend_ = std::make_unique<LlvmBackend>(2);
      backend_->set_keep_text(job.keep_llvm_ir);
      r.code = backend_->compile(*job.ir, job.name, job.linking, job.proto, job.global_watch);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    lock.lock();
    done_.push_back(std::move(r));
  }
}

}  // namespace tessera::jit
