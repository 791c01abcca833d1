#include "codegen/kernel/cpu/cpu_launch.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <stdexcept>

namespace tessera::kir {

void launch(const Kernel& k, KernelFn fn, const std::vector<void*>& params, const std::vector<int64_t>& dims,
            int threads) {
  if (params.size() != k.params.size() || dims.size() != k.dims.size())
    throw std::invalid_argument("launch of @" + k.name + ": wrong number of params or dims");
  const std::vector<int64_t> g = k.grid_extents(dims);
  KernelArgs args{params.data(), dims.data(), {g[0], g[1], g[2]}};
  const int64_t total = g[0] * g[1] * g[2];
  if (total <= 0) return;
  // A short grid runs on the calling thread (kParallelMinPrograms): handing
  // it out costs more than it saves, and the BLAS threads of a preceding
  // matmul may still be spinning on the other cores.
  if (threads == 1 || total == 1 || (threads == 0 && total < kParallelMinPrograms)) return fn(&args, 0, total);
  auto run = [&] {
    // Ranges of a few programs each: enough of them to balance the cores.
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, total),
                      [&](const tbb::blocked_range<int64_t>& r) { fn(&args, r.begin(), r.end()); });
  };
  if (threads > 1) tbb::task_arena(threads).execute(run);
  else run();
}

}  // namespace tessera::kir
