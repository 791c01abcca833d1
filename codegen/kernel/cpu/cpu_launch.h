// Runs a compiled CPU kernel over its grid: the programs are split into
// ranges that oneTBB's scheduler spreads over the machine's cores.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/kernel/cpu/kernel_abi.h"
#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

constexpr int kEveryCore = -1;
// launch() with threads = 0 runs a grid of fewer programs than this on the
// calling thread: handing them to other threads costs more than it saves,
// unless they are long (the K3 tuner measures that: kernel_tuner.h).
constexpr int64_t kParallelMinPrograms = 256;

// Runs fn (compiled from k) on the params' data with these dim values;
// `threads` = 1 runs on the calling thread, 0 lets TBB use every core (a grid
// of fewer than 256 programs runs on the calling thread), kEveryCore every
// core however few the programs (the tuner tries it), n > 1 at most n.
void launch(const Kernel& k, KernelFn fn, const std::vector<void*>& params, const std::vector<int64_t>& dims,
            int threads = 0);

}  // namespace tessera::kir
