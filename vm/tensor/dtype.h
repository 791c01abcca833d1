// Tensor element types: sizes, classification, half-precision conversion and
// the result-dtype (promotion) rules of spec §7.
//
// f16 and bf16 are stored as raw 16-bit patterns; arithmetic on them is done
// in f32 (or wider) and rounded once on store with round-to-nearest-even.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vm/core/value.h"

namespace tessera {

size_t dtype_size(DType d);
inline bool dtype_is_float(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }
inline bool dtype_is_int(DType d) { return d == DType::I32 || d == DType::I64; }

// IEEE binary16 <-> binary32. Round-to-nearest-even; overflow rounds to inf;
// subnormals handled exactly; NaN stays NaN (quiet, sign kept), inf stays inf.
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
// bfloat16 (the upper half of a binary32) <-> binary32, same rounding rules.
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);

// Result dtype of an elementwise operation on two tensors (§7): equal dtypes
// stay; a float beats int/bool; f16 with bf16 gives f32; otherwise the wider
// float or the wider int (bool < i32 < i64).
DType promote_dtypes(DType a, DType b);

// Kind of a script scalar taking part in a tensor operation.
enum class ScalarKind : uint8_t { Bool, Int, Float };
// Result dtype of tensor (dtype t) op scalar: a scalar never widens the
// tensor's dtype, except that a float scalar with an int/bool tensor gives
// f32 and an int scalar with a bool tensor gives i64.
DType promote_with_scalar(DType t, ScalarKind s);
// The dtype a lone scalar would have as a 0-d tensor (i64, f32, bool).
DType scalar_dtype(ScalarKind s);

}  // namespace tessera
