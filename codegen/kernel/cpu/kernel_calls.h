// What a trace's Kernel call runs (CallTarget::Kind::Kernel, made by
// optimizer/fusion.h): the region's CPU kernel, compiled on the region's
// first call and kept for the process (one per distinct region text), or,
// where the inputs do not fit it or it cannot be built, the interpreter's
// kernels one operation at a time, which also raise the interpreter's
// errors. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "vm/graph/region.h"

namespace tessera::kir {

// The region's single output for these inputs; throws what the
// interpreter's kernels throw. `cache` is the call site's slot for the
// compiled kernel (CallTarget::kernel): filled on the first call, so later
// calls neither look the region up nor take a lock.
Value run_kernel_call(const Region& r, std::shared_ptr<const void>& cache, std::span<const Value> inputs);

struct KernelCallStats {
  uint64_t kernels_compiled = 0;   // distinct regions compiled (K2)
  double compile_ms = 0;           // their total compile time
  uint64_t kernel_runs = 0;        // calls run by a generated kernel
  uint64_t reference_runs = 0;     // calls run by the interpreter's kernels
  uint64_t compile_failures = 0;   // regions the emitter refused (run by reference)
};
KernelCallStats kernel_call_stats();

}  // namespace tessera::kir
