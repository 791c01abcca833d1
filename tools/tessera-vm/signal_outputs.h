// SignalOutputs: a run stopped by SIGINT or SIGTERM still leaves what it
// recorded: the JIT log and events.jsonl hold every event so far (they are
// flushed line by line), and the writer given here writes the rest (the
// timeline, a --metrics run line) before the process ends with the signal's
// status, as if the signal had not been caught.
//
// The two signals are blocked in every thread (a new thread inherits the
// mask: construct this before any thread starts) and taken by a thread of
// its own with sigwait, so the writer is ordinary code rather than a signal
// handler's, and runs while the VM's thread goes on: it may read only what
// is safe to read from another thread.
#pragma once

#include <functional>
#include <mutex>

namespace tessera::cli {

class SignalOutputs {
 public:
  SignalOutputs();
  SignalOutputs(const SignalOutputs&) = delete;
  SignalOutputs& operator=(const SignalOutputs&) = delete;

  // What a signal writes before the process ends: `signal` is its name
  // ("SIGINT"), `status` the exit status a shell reports for it (128 + N).
  void set_writer(std::function<void(const char* signal, int status)> writer);
  // The run has ended and its outputs are written the usual way: a signal
  // from now on ends the process at once. Waits for a writer in progress.
  void run_ended();

 private:
  void watch();

  std::mutex mu_;
  std::function<void(const char*, int)> writer_;
  bool ended_ = false;
};

}  // namespace tessera::cli
