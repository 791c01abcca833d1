// The JIT's clock: milliseconds on the steady clock (its epoch), for every
// timing the JIT keeps (--stats, the event log, the timeline), so that times
// taken on any thread compare.
#pragma once

#include <chrono>

namespace tessera::jit {

inline double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace tessera::jit
