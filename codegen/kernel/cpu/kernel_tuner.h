// K3 tuning: a region whose shapes have settled is lowered with its dims as
// constants in a few variants (the tile of elements per program, rows or
// flat), each variant is compiled (kernel_store.h) and timed on inputs of
// the settled shapes, the variants taking turns, and the fastest is kept.
// The choice is a note in the kernel cache, so a later run compiles only the
// chosen variant, from the cache at that. The thread split is tuned one
// way only: a grid that the launcher would run on the calling thread (fewer
// than kParallelMinPrograms programs) is also tried on every core; a larger
// grid stays on every core, since timings made beside the running program
// cannot tell a serial variant from a parallel one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel/cpu/kernel_store.h"
#include "codegen/kernel/lower_region.h"
#include "vm/graph/region.h"

namespace tessera::kir {

struct TuneChoice {
  int64_t tile = 1024;  // RegionLowering::tile
  int threads = 0;      // launch()'s
  bool flat = false;    // RegionLowering::flat
  bool operator==(const TuneChoice&) const = default;
  std::string str() const;  // "tile=4096 threads=1 flat=0"
  static std::optional<TuneChoice> parse(const std::string& s);
};

// The variants tried for these symbols' values: the first is K2's choice;
// then tiles and layouts (row kernels, lower_region.h, have one layout),
// then each of those whose grid is short also on every core.
std::vector<TuneChoice> tune_candidates(const Region& r, const std::vector<int64_t>& symbols);

struct TuneOutcome {
  TuneChoice best;
  std::vector<std::pair<TuneChoice, double>> timings_us;  // empty: the choice came from the cache
};

// Picks the variant for a kernel with the constants `spec` (one entry per
// symbol), timing each on synthetic inputs bound to `symbols`. Throws what
// lowering and compiling throw.
TuneOutcome tune_region(const Region& r, const std::vector<std::optional<int64_t>>& spec,
                        const std::vector<int64_t>& symbols, KernelStore& store);

}  // namespace tessera::kir
