#include "vm/tensor/parallel_rows.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>

namespace tessera {

void parallel_rows(int64_t items, int64_t item_elems, const std::function<void(int64_t, int64_t)>& fn) {
  if (items <= 0) return;
  if (items < 2 || items * std::max<int64_t>(item_elems, 1) < kParallelMinElements) return fn(0, items);
  // Ranges of at least kParallelMinElements / 4 elements: a few per core, no smaller.
  const int64_t grain = std::max<int64_t>(1, (kParallelMinElements / 4) / std::max<int64_t>(item_elems, 1));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, static_cast<size_t>(grain)),
                    [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); });
}

}  // namespace tessera
