// The all-reduce benchmarks' data (collectives_bench, nccl_allreduce_bench):
// inputs whose sum over the ranks is exact in f32, and the check of a
// result against it.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>

namespace tessera::bench {

// Rank r holds r + 1 + (i % 7) at element i.
inline float input_value(int rank, size_t i) { return static_cast<float>(rank + 1 + static_cast<int>(i % 7)); }
inline float expected_sum(int ranks, size_t i) {
  return static_cast<float>(ranks * (ranks + 1) / 2 + ranks * static_cast<int>(i % 7));
}
// Throws naming `side`, the size and the first wrong element.
inline void check_result(const float* out, size_t n, int ranks, const char* side, size_t bytes) {
  for (size_t i = 0; i < n; ++i)
    if (out[i] != expected_sum(ranks, i))
      throw std::runtime_error(fmt::format("{} all-reduce of {} bytes: element {} is {}, expected {}", side, bytes, i,
                                           out[i], expected_sum(ranks, i)));
}

}  // namespace tessera::bench
