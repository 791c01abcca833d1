// ShapePolicy: what a fused call site makes of the shapes its K2 kernel
// runs with, on every target (architecture §3). Each K2 call notes the
// values of the region's symbols: a symbol whose value has changed
// kChangesToDynamic times is dynamic (it stays a parameter); once
// `specialize` calls in a row have had the same values of the other
// symbols, a K3 kernel is asked for, with those values as constants. A site
// asks for at most `recompiles` K3 kernels (torch.compile's recompile
// limit): a program whose shapes keep settling elsewhere stays on K2
// instead of compiling without end.
//
// Time counts too, as the design documents' hotspot detector has it (a
// minimum count and a minimum time per input profile): where the target
// measures its calls' device time without cost (a GPU's CUPTI records), a
// streak of at least `hot_calls` calls that spent `hot_ms` on the device
// asks for K3 before `specialize` calls.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/kernels/kernel_variant.h"

namespace tessera::kernels {

// A symbol is dynamic once its value has changed this many times.
constexpr int kChangesToDynamic = 2;

struct ShapePolicyParams {
  int specialize = 16;  // same-shape K2 calls before a K3 kernel is asked for; 0: never
  int recompiles = 8;   // K3 kernels a site asks for at most
  int hot_calls = 5;    // same-shape calls at least before device time can ask for K3
  double hot_ms = 1.0;  // device ms of a streak that asks for K3 (0: time does not count)
};

class ShapePolicy {
 public:
  explicit ShapePolicy(ShapePolicyParams p) : p_(p) {}

  // What one K2 call's symbols changed.
  struct Decision {
    std::vector<size_t> now_dynamic;  // symbols this call made dynamic
    std::optional<DimSpec> ask;       // a K3 kernel to ask for now
    bool recompile = false;           // `ask` is not the site's first K3 kernel
    bool capped_now = false;          // the site reached the recompile limit with this call
    bool by_time = false;             // `ask` came from device time before `specialize` calls
  };
  // The site's device milliseconds so far (all its calls), or nullopt
  // where the target does not measure them; asked only at a streak's start
  // and while it is between `hot_calls` and `specialize` calls long.
  using DeviceMs = std::function<std::optional<double>()>;
  // `busy`: a K3 kernel of the site is being made (one at a time).
  Decision observe(const std::vector<int64_t>& sym, bool busy, const DeviceMs& device_ms = {});

  const std::vector<bool>& dynamic() const { return dynamic_; }
  int asked() const { return asked_; }

 private:
  ShapePolicyParams p_;
  std::vector<int64_t> last_;
  std::vector<int> changes_;
  std::vector<bool> dynamic_;
  int streak_ = 0;
  std::optional<double> streak_start_ms_;  // the site's device ms when the streak began
  int asked_ = 0;
  bool capped_ = false;
};

}  // namespace tessera::kernels
