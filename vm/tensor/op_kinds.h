// The kinds of elementwise and reduction operations the tensor kernels
// implement. Kept apart from kernels.h so that the vector-math translation
// units (compiled for a specific ISA, see vector_math.h) include no C++
// library headers.
#pragma once

#include <cstdint>

namespace tessera {

enum class Unary : uint8_t { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Gelu, Silu, Sin, Cos };
enum class Binary : uint8_t { Add, Sub, Mul, Div, IDiv, Mod, Pow, Min, Max, Eq, Ne, Lt, Le, Gt, Ge };
enum class Reduce : uint8_t { Sum, Mean, Max, Min, ArgMax };

}  // namespace tessera
