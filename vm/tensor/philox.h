// Counter-based random numbers: Philox-4x32-10 (Salmon et al., SC'11).
//
// The generator is stateless: an element's value depends only on (seed,
// element index), so every backend (CPU loop, GPU thread per element) and
// every tier produces the same bits. The exact recipe, for reimplementors:
//
//   key     = (k0, k1) = (low 32 bits of seed, high 32 bits of seed)
//             (the seed is the script int reinterpreted as uint64)
//   block b = philox4x32_10(counter = (low32(b), high32(b), 0, 0), key)
//             -> four 32-bit words (x0, x1, x2, x3)
//
//   rand:  element i uses block b = i, word x0:
//            u = (x0 >> 8) * 2^-24            in [0, 1), exact in f32
//   randn: elements 2p and 2p+1 use block b = p, words x0 and x1:
//            u1 = ((x0 >> 8) + 1) * 2^-24     in (0, 1]  (so log(u1) is finite)
//            u2 = (x1 >> 8) * 2^-24           in [0, 1)
//            r  = sqrt(-2 ln u1),  th = 2 pi u2
//            element 2p = r cos th, element 2p+1 = r sin th (when it exists)
//          computed in double and rounded once to the tensor's dtype.
//
// Words x2 and x3 are unused (reserved for future ops).
#pragma once

#include <array>
#include <cstdint>

namespace tessera {

using PhiloxBlock = std::array<uint32_t, 4>;

PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t k0, uint32_t k1);

// The uniform and normal values of element i, as documented above.
double philox_uniform(uint64_t seed, uint64_t i);
double philox_normal(uint64_t seed, uint64_t i);

}  // namespace tessera
