// The interpreter's share of the profiling samples, by source line, for the
// trace viewer's heat (TierProfile samples the program counter; in the
// interpreter it cannot tell the line). The profiling signal counts a sample
// here when it interrupts the interpreting thread while it interprets (not
// while compiled code, which it counts itself, runs); the interpreter takes
// the count at its next back-edge or call and reports it with the line it
// is on (JitHooks::on_interpreter_samples). One profile runs per process.
#pragma once

#include <atomic>
#include <cstdint>

namespace tessera {

struct InterpreterSamples {
  std::atomic<uint32_t> pending{0};
  // Whether the interpreting thread interprets now (false while it runs a
  // compiled trace); set by the interpreter, read by the signal handler.
  std::atomic<bool> interpreting{false};
};

inline InterpreterSamples interpreter_samples;

}  // namespace tessera
