// KernelTuner: K3 tuning on every target. A region whose shapes have settled
// is lowered with its dims as constants in the variants its target
// proposes (KernelTarget::variants: tiles, layouts, threads); each is
// compiled and timed by the target, the variants taking turns, and the
// fastest is kept. The choice is a note in the kernel cache keyed by the
// target's architecture, the region and its dims, so that a later run
// compiles only the chosen variant, without timing.
//
// Where the timing happens is the target's: the CPU times on synthetic
// inputs on the background compiler's thread; a GPU on the first call of
// the shapes once every variant is built, on that call's buffers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_store.h"
#include "runtime/kernels/kernel_variant.h"
#include "vm/graph/region.h"

namespace tessera::kernels {

// How long the variants are timed: rounds of one timing each, at least
// `min_rounds`, until each has `min_ms` of timings, at most `max_rounds`.
// Taking turns, a moment when the machine is busy slows every variant
// alike instead of deciding the choice.
struct TimingPlan {
  int min_rounds = 1, max_rounds = 1;
  double min_ms = 0;
};

struct TuneOutcome {
  KernelVariant best;
  std::vector<std::pair<KernelVariant, double>> timings_ms;   // the best time of each timed variant
  std::vector<std::pair<KernelVariant, std::string>> refused;  // variants that could not run, and why
};

class KernelTuner {
 public:
  explicit KernelTuner(const KernelStore& notes) : notes_(notes) {}

  // The choice an earlier run kept for (architecture, region, dims), if any
  // (a damaged note is none).
  std::optional<KernelVariant> kept(const std::string& arch, const Region& r, const DimSpec& spec) const;
  void keep(const std::string& arch, const Region& r, const DimSpec& spec, const KernelVariant& v) const;

  // Times candidates[i] with time_ms(i) (an exception: the variant cannot
  // run, it is left out) and returns the fastest. Throws
  // std::runtime_error when none could run.
  static TuneOutcome fastest(const std::vector<KernelVariant>& candidates, const std::function<double(size_t)>& time_ms,
                             const TimingPlan& plan);

 private:
  const KernelStore& notes_;
};

}  // namespace tessera::kernels
