#include "runtime/tier_profile.h"

#include <time.h>

#include "vm/interp/interpreter_samples.h"

#if defined(__linux__) && defined(__x86_64__)
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>
#define TESSERA_TIER_PROFILE 1
#endif

namespace tessera::jit {

namespace {

int64_t process_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

#ifdef TESSERA_TIER_PROFILE
namespace {

std::atomic<TierProfile*> g_active{nullptr};
struct sigaction g_previous;
pthread_t g_thread;  // the one that started the profile: the VM's

void on_sigprof(int, siginfo_t*, void* context) {
  TierProfile* p = g_active.load(std::memory_order_acquire);
  if (p == nullptr) return;
  const auto* uc = static_cast<const ucontext_t*>(context);
  p->sample(static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]), pthread_equal(pthread_self(), g_thread) != 0);
}

}  // namespace
#endif

TierProfile::~TierProfile() { stop(); }

bool TierProfile::start() {
#ifdef TESSERA_TIER_PROFILE
  TierProfile* expected = nullptr;
  g_thread = pthread_self();
  if (!g_active.compare_exchange_strong(expected, this)) return false;
  struct sigaction sa = {};
  sa.sa_sigaction = &on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;  // interrupted system calls resume
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, &g_previous) != 0) {
    g_active.store(nullptr);
    return false;
  }
  itimerval t = {};
  t.it_interval.tv_usec = static_cast<suseconds_t>(kIntervalMs * 1000);
  t.it_value = t.it_interval;
  if (setitimer(ITIMER_PROF, &t, nullptr) != 0) {
    sigaction(SIGPROF, &g_previous, nullptr);
    g_active.store(nullptr);
    return false;
  }
  running_ = true;
  cpu_start_ns_ = process_cpu_ns();
  cpu_stop_ns_ = -1;
  return true;
#else
  return false;
#endif
}

void TierProfile::stop() {
#ifdef TESSERA_TIER_PROFILE
  if (!running_) return;
  itimerval off = {};
  setitimer(ITIMER_PROF, &off, nullptr);
  cpu_stop_ns_ = process_cpu_ns();
  // A SIGPROF the timer generated just before it stopped may still be pending
  // (delivered later, to any thread). Under the default disposition it would
  // kill the process, so a process that had none ignores SIGPROF from now on
  // (which also discards the pending one); a host's own handler is restored.
  struct sigaction restore = g_previous;
  if ((restore.sa_flags & SA_SIGINFO) == 0 && restore.sa_handler == SIG_DFL) {
    restore = {};
    restore.sa_handler = SIG_IGN;
    sigemptyset(&restore.sa_mask);
  }
  sigaction(SIGPROF, &restore, nullptr);
  g_active.store(nullptr, std::memory_order_release);
  running_ = false;
#endif
}

void TierProfile::add_code(const void* begin, size_t size, int tier, uint32_t trace) {
  const size_t n = ranges_.load(std::memory_order_relaxed);
  if (n >= kMaxRanges || begin == nullptr || size == 0) return;
  const auto b = reinterpret_cast<uintptr_t>(begin);
  begin_[n].store(b, std::memory_order_relaxed);
  end_[n].store(b + size, std::memory_order_relaxed);
  tier_[n].store(static_cast<uint8_t>(tier), std::memory_order_relaxed);
  trace_[n].store(trace, std::memory_order_relaxed);
  ranges_.store(n + 1, std::memory_order_release);  // the handler sees the range complete
}

void TierProfile::sample(uintptr_t pc, bool vm_thread) {
  const size_t n = ranges_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (pc >= begin_[i].load(std::memory_order_relaxed) && pc < end_[i].load(std::memory_order_relaxed)) {
      samples_[tier_[i].load(std::memory_order_relaxed)].fetch_add(1, std::memory_order_relaxed);
      range_samples_[i].fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  samples_[0].fetch_add(1, std::memory_order_relaxed);
  // Elsewhere, on the VM's thread while it interprets: the interpreter
  // takes it with the line it is on (interpreter_samples.h).
  if (vm_thread && interpreter_samples.interpreting.load(std::memory_order_relaxed))
    interpreter_samples.pending.fetch_add(1, std::memory_order_relaxed);
}

double TierProfile::ms_per_sample() const {
  const auto s = samples();
  const uint64_t n = s[0] + s[1] + s[2];
  if (n == 0) return 0;
  const int64_t end = cpu_stop_ns_ >= 0 ? cpu_stop_ns_ : process_cpu_ns();
  return static_cast<double>(end - cpu_start_ns_) / 1e6 / static_cast<double>(n);
}

std::map<uint32_t, double> TierProfile::trace_cpu_ms() const {
  std::map<uint32_t, double> out;
  const double per_sample = ms_per_sample();
  if (per_sample == 0) return out;
  const size_t ranges = ranges_.load(std::memory_order_acquire);
  for (size_t i = 0; i < ranges; ++i)
    if (const uint64_t k = range_samples_[i].load(std::memory_order_relaxed))
      out[trace_[i].load(std::memory_order_relaxed)] += per_sample * static_cast<double>(k);
  return out;
}

std::array<uint64_t, 3> TierProfile::samples() const {
  return {samples_[0].load(), samples_[1].load(), samples_[2].load()};
}

std::array<double, 3> TierProfile::cpu_ms() const {
  const auto s = samples();
  const uint64_t n = s[0] + s[1] + s[2];
  const int64_t end = cpu_stop_ns_ >= 0 ? cpu_stop_ns_ : process_cpu_ns();
  const double total_ms = static_cast<double>(end - cpu_start_ns_) / 1e6;
  if (n == 0) return {total_ms, 0.0, 0.0};  // too short for a sample: all of it elsewhere
  std::array<double, 3> ms{};
  for (size_t i = 0; i < 3; ++i) ms[i] = total_ms * static_cast<double>(s[i]) / static_cast<double>(n);
  return ms;
}

}  // namespace tessera::jit
