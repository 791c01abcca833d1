// The double reference forms of the elementwise functions that are not one
// C library call (elementwise_ops.def's scalar column): numbers and int
// tensors compute them in double, and the trace's float-math helpers
// (tracer/float_math.def) call the same functions, so every tier gives the
// interpreter's bits.
#pragma once

#include <cmath>

namespace tessera {

inline double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }
// max(x, 0) + log1p(e^-|x|): log(1 + e^x) without overflowing for large x,
// and without losing e^x to the 1 for very negative x; NaN stays NaN.
inline double softplus_ref(double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x))); }

}  // namespace tessera
