// The kinds of elementwise and reduction operations the tensor kernels
// implement: Unary and Binary are generated from elementwise_ops.def. Kept
// apart from kernels.h so that the vector-math translation units (compiled
// for a specific ISA, see vector_math.h) include no C++ library headers.
#pragma once

#include <cstdint>

namespace tessera {

enum class Unary : uint8_t {
#define TESSERA_UNARY(Name, ...) Name,
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
};
enum class Binary : uint8_t {
#define TESSERA_UNARY(...)
#define TESSERA_BINARY(Name, ...) Name,
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
};
enum class Reduce : uint8_t { Sum, Mean, Max, Min, ArgMax };

// How many rows of each kind the table has, for loops over them.
constexpr int kNumUnary = 0
#define TESSERA_UNARY(...) +1
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
    ;
constexpr int kNumBinary = 0
#define TESSERA_UNARY(...)
#define TESSERA_BINARY(...) +1
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
    ;

}  // namespace tessera
