#include "tools/tessera-vm/signal_outputs.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace tessera::cli {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

SignalOutputs::SignalOutputs() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Detached: it waits for a signal until the process ends.
  std::thread([this] { watch(); }).detach();
}

void SignalOutputs::set_writer(std::function<void(const char*, int)> writer) {
  std::lock_guard<std::mutex> lock(mu_);
  writer_ = std::move(writer);
}

void SignalOutputs::run_ended() {
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
}

void SignalOutputs::watch() {
  const sigset_t set = stop_signals();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ended_ && writer_) writer_(sig == SIGINT ? "SIGINT" : "SIGTERM", 128 + sig);
  }
  // End as the signal would have ended the process: its default action,
  // delivered to this thread.
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
}

}  // namespace tessera::cli
