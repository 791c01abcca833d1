// FMATH in the host tiers: each function of tracer/float_math.def is one
// instruction where the tier's column of the table names one, and otherwise
// a call of its C helper (trace_abi.h), found here by FloatMath id.
#pragma once

#include <cstddef>
#include <iterator>

#include "codegen/host/trace_abi.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

using FloatMathFn = double (*)(double);

// tessera_jit_<fn> of every row, in table order.
inline constexpr FloatMathFn kFloatMathHelpers[] = {
#define FLOATMATH(Name, fn, t1, t2, impl) &tessera_jit_##fn,
#include "tracer/float_math.def"
#undef FLOATMATH
};
static_assert(std::size(kFloatMathHelpers) == static_cast<size_t>(FloatMath::NumFns));

}  // namespace tessera::jit
