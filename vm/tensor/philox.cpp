#include "vm/tensor/philox.h"

#include <cmath>

namespace tessera {

PhiloxBlock philox4x32_10(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

namespace {
PhiloxBlock block(uint64_t seed, uint64_t b) {
  return philox4x32_10({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}
constexpr double kTwoPow24Inv = 1.0 / 16777216.0;
}  // namespace

double philox_uniform(uint64_t seed, uint64_t i) {
  return static_cast<double>(block(seed, i)[0] >> 8) * kTwoPow24Inv;
}

double philox_normal(uint64_t seed, uint64_t i) {
  PhiloxBlock x = block(seed, i / 2);
  double u1 = static_cast<double>((x[0] >> 8) + 1) * kTwoPow24Inv;
  double u2 = static_cast<double>(x[1] >> 8) * kTwoPow24Inv;
  double r = std::sqrt(-2.0 * std::log(u1));
  double th = 2.0 * M_PI * u2;
  return (i % 2 == 0) ? r * std::cos(th) : r * std::sin(th);
}

}  // namespace tessera
