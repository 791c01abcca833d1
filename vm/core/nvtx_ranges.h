// NVTX ranges: Tessera's phases, trace entries and fused calls as ranges of
// a "Tessera" domain, so that Nsight Systems (`nsys profile tessera-vm run
// ...`) shows them on the CPU's timeline beside the CUDA calls they make
// (docs/observability.md, "NVTX ranges, for Nsight Systems").
//
// Built on NVTX3's header (the CUDA toolkit's nvtx3/nvToolsExt.h): NVTX
// loads a tool's injection library only when NVTX_INJECTION64_PATH names
// one (which nsys sets); otherwise its calls are no-ops and nothing is
// loaded. attached() asks once (the domain a tool created, or none), so a
// Range without a tool costs a test of a static and makes no name. Built
// without the NVTX headers (TESSERA_NO_NVTX), every Range is empty.
//
// In vm/core, the lowest layer, so that the graph's collectives may open a
// range as well as the runtime's fused calls and traces.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::nvtx {

enum class Phase : uint8_t {
#define TESSERA_NVTX_PHASE(e, name, color) e,
#include "vm/core/nvtx_phases.def"
#undef TESSERA_NVTX_PHASE
};

// The phase's range name: "copy", "mma", ...
std::string_view phase_name(Phase p);

namespace detail {
bool attach();  // the first call initializes NVTX; true when a tool created the domain
void push(Phase p);
void push(const std::string& name);
void pop();
}  // namespace detail

// Whether a tool listens (NVTX loaded its injection library).
inline bool attached() {
#ifdef TESSERA_NO_NVTX
  return false;
#else
  static const bool on = detail::attach();
  return on;
#endif
}

// A range from construction to destruction, on this thread's NVTX stack.
class Range {
 public:
  // A phase's range; none when `when` is false.
  explicit Range(Phase p, bool when = true) : on_(when && attached()) {
    if (on_) detail::push(p);
  }
  // A range named by `name()`, called only when a tool listens.
  template <std::invocable F>
  explicit Range(F&& name) : on_(attached()) {
    if (on_) detail::push(name());
  }
  ~Range() {
    if (on_) detail::pop();
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  bool on_;
};

}  // namespace tessera::nvtx
