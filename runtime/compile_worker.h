// CompileWorker: compiles traces with the LLVM backend on a background
// thread, so that the interpreter, and the traces already compiled, keep
// running while LLVM works (the architecture's background compilation). The
// trace compiler installs finished traces at its own safe points
// (TraceJit::install_finished), never while a trace runs.
//
// The worker owns its LlvmBackend: no other thread touches LLVM. A job's
// trace IR and exit-link table belong to a Trace that stays put and unchanged
// until the job's result has been taken.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "codegen/host/llvm/llvm_backend.h"

namespace tessera::jit {

class CompileWorker {
 public:
  struct Job {
    uint32_t trace_id;
    const TraceIR* ir;
    std::string name;
    ExitLinking linking;
    const FunctionProto* proto;
    const uint8_t* global_watch;
    bool keep_llvm_ir;  // --dump: keep the LLVM IR text
  };
  struct Result {
    uint32_t trace_id;
    CompiledTrace code;
    std::string error;  // non-empty: the backend could not compile the trace
  };

  CompileWorker();
  // Stops the thread after the job in progress; jobs not started are dropped.
  ~CompileWorker();
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  void submit(Job job);
  // The results finished since the last call, in completion order.
  std::vector<Result> take_finished();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;  // new job or stop
  std::deque<Job> jobs_;
  std::vector<Result> done_;
  bool stop_ = false;
  std::unique_ptr<LlvmBackend> backend_;  // created and used on the worker thread only
  std::thread thread_;                    // last: starts after the rest is built
};

}  // namespace tessera::jit
