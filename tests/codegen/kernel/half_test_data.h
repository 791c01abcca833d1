// Random f16/bf16 test operands and their values, for the tests of the
// tensor-core wrappers (cuda_tensor_core_test, cuda_hopper_test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "vm/tensor/dtype.h"

namespace tessera::kir::testing {

// Halves of random values in [-2, 2), as bits.
inline std::vector<uint16_t> random_halves(std::size_t n, bool bf16, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<uint16_t> h(n);
  for (uint16_t& x : h) x = bf16 ? f32_to_bf16(u(rng)) : f32_to_f16(u(rng));
  return h;
}
inline float half_value(uint16_t h, bool bf16) { return bf16 ? bf16_to_f32(h) : f16_to_f32(h); }

}  // namespace tessera::kir::testing
