// Chooses the vector-math build for this CPU (vector_math.h).
#include "vm/tensor/vector_math.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace tessera::vmath {

namespace avx512 { extern const Table kTable; }
namespace avx2 { extern const Table kTable; }
namespace sse2 { extern const Table kTable; }

bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f"); }
bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
const Table& avx512_table() { return avx512::kTable; }
const Table& avx2_table() { return avx2::kTable; }
const Table& sse2_table() { return sse2::kTable; }

const Table& table() {
  static const Table& chosen = [] () -> const Table& {
    // TESSERA_SIMD names a narrower build than the CPU's widest.
    const char* force = std::getenv("TESSERA_SIMD");
    const std::string f = force ? force : "";
    if (f == "sse2") return sse2::kTable;
    if (f != "avx2" && cpu_has_avx512()) return avx512::kTable;
    return cpu_has_avx2() ? avx2::kTable : sse2::kTable;
  }();
  return chosen;
}

float unary_one(Unary op, float x) {
  float out;
  table().unary(op, &x, &out, 1);
  return out;
}

}  // namespace tessera::vmath
