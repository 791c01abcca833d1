// The interface between the interpreter and the tensor runtime: what the
// interpreter calls when an operand of an operator, an index, or a printed
// value is a tensor. Everything here throws RuntimeError on bad input with the
// spec's messages (e.g. "index out of range",
// "+: shapes [2, 3] and [4] are incompatible").
#pragma once

#include <cstddef>
#include <string>

#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera {

// a op b where at least one of a, b is a tensor and the other a tensor, int,
// float or bool (NumPy broadcasting; result dtype per spec §7).
// op is one of Add Sub Mul Div Pow (elementwise) or MatMul; IDiv and Mod are
// elementwise too (floored, as for scalars).
Value tensor_binary(BinOp op, const Value& a, const Value& b);
// Elementwise comparison -> bool tensor (at least one operand is a tensor).
Value tensor_compare(CmpOp op, const Value& a, const Value& b);
Value tensor_neg(const Value& t);

// t[i, j, ...]: n indices (all must be ints). n == rank -> scalar Value;
// n < rank -> new tensor (copy of the sub-array); n > rank -> error.
Value tensor_get_index(const Value& t, const Value* idx, size_t n);
// t[i, j, ...] = v with n == rank (v rounded to the dtype); errors otherwise.
void tensor_set_index(const Value& t, const Value* idx, size_t n, const Value& v);

// Size of dim 0 (error for a 0-d tensor: "len() of a 0-d tensor").
int64_t tensor_len(const Value& t);

// Appends the spec's printed form: `tensor(shape=[2, 2], dtype=i64) [[1, 2], [3, 4]]`.
void format_tensor(std::string& out, const Value& t);

}  // namespace tessera
