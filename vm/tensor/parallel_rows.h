// Work split across the machine's cores (oneTBB) for the interpreter's
// tensor kernels, where the split cannot change a result: independent rows
// (softmax, the norms) and elementwise ranges (every element is computed by
// itself: vector_math.h pads tails to a whole vector, so an element's value
// does not depend on where a range starts). Never for sums across a split.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera {

// Work below this many elements stays on the calling thread: handing it to
// other threads costs more than it saves.
constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// fn(begin, end) over [0, items), each item `item_elems` elements of work:
// ranges of items on every core when items * item_elems is large, else one
// call on this thread.
void parallel_rows(int64_t items, int64_t item_elems, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tessera
