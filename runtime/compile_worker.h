// CompileWorker: compiles traces with the LLVM backend on a background
// thread, so that the interpreter, and the traces already compiled, keep
// running while LLVM works (the architecture's background compilation). The
// tier policy installs finished traces at the trace compiler's safe points
// (TierPolicy::install_finished), never while a trace runs.
//
// The worker owns its LlvmBackend: no other thread touches LLVM. A job's
// trace IR and exit-link table belong to a Trace that stays put and unchanged
// until the job's result has been taken.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "codegen/host/llvm/llvm_backend.h"
#include "runtime/jit_clock.h"

namespace tessera::jit {

// One trace's compilation: its code, or why the backend could not make it.
struct CompileResult {
  uint32_t trace_id;
  CompiledTrace code;
  std::string error;  // non-empty: the backend could not compile the trace
  double started_ms = 0, finished_ms = 0;  // now_ms() around the compile (the timeline's span)
  bool background = false;                 // compiled by the worker's thread
};

// Runs `compile` (which returns the CompiledTrace of trace `trace_id`): a
// backend's exception becomes CompileResult::error, so that callers on
// either thread handle a failure the same way.
template <class Compile>
CompileResult try_compile(uint32_t trace_id, Compile&& compile) {
  CompileResult r{trace_id, {}, {}};
  r.started_ms = now_ms();
  try {
    r.code = compile();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.finished_ms = now_ms();
  return r;
}

class CompileWorker {
 public:
  // How much nicer the worker thread is than the thread that made it (up to
  // Linux's 19): on a machine whose cores are all busy, compiling yields to
  // running the program.
  static constexpr int kNice = 10;

  struct Job {
    uint32_t trace_id;
    const TraceIR* ir;
    std::string name;
    ExitLinking linking;
    const FunctionProto* proto;
    const uint8_t* global_watch;
    bool keep_text;  // --dump: keep the LLVM IR text and the object file

    // Compiles the job with `t2_backend` (wherever it runs); throws as the
    // backend does.
    CompiledTrace compile_with(LlvmBackend& t2_backend) const {
      t2_backend.set_keep_text(keep_text);
      return t2_backend.compile(*ir, name, linking, proto, global_watch);
    }
  };

  // `delay`: the thread waits that long before each compile (JitParams
  // t2delay, for tests).
  explicit CompileWorker(std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // Stops the thread after the job in progress; jobs not started are dropped.
  ~CompileWorker();
  // Whether a job is being compiled now.
  bool busy();
  // For a process about to end: drops the jobs not started and lets the
  // thread finish the one in progress on its own (the worker is never
  // freed), instead of waiting for it. The job still reads its trace's IR,
  // so the caller ends the process with std::_Exit, running no destructor
  // (the VM's, LLVM's statics), before anything it reads goes away.
  static void abandon(std::unique_ptr<CompileWorker> worker);
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  // Jobs run newest first: the trace asked for last is the one likeliest to
  // be running now (a hot loop asks within `tier2` iterations of starting;
  // a setup loop that asked earlier may never run again).
  void submit(Job job);
  // Trace `trace_id`'s job, if not started, runs next: its trace asked
  // again (TierPolicy::tier_up), so it is still hot.
  void prioritize(uint32_t trace_id);
  // The results finished since the last call, in completion order. Polled
  // at every trace entry: without a result it takes no lock.
  std::vector<CompileResult> take_finished();
  // Whether take_finished has something (no lock).
  bool has_finished() const { return has_done_.load(std::memory_order_acquire); }

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;  // new job or stop
  std::deque<Job> jobs_;
  std::vector<CompileResult> done_;
  std::atomic<bool> has_done_{false};  // done_ is not empty (set under mu_)
  bool stop_ = false;
  bool busy_ = false;
  std::chrono::milliseconds delay_;
  std::unique_ptr<LlvmBackend> t2_backend_;  // created and used on the worker thread only
  std::thread thread_;                       // last: starts after the rest is built
};

}  // namespace tessera::jit
