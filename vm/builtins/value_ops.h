// Generic semantics of the operators on Values (spec §4, §7): the
// interpreter's slow paths and the JIT's fallbacks call these, so every tier
// agrees on results and error messages. Scalar fast paths use
// vm/core/number_ops.h, which these functions are built on.
#pragma once

#include <string_view>

#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera {

// a OP b for + - * / // % ** @. Throws RuntimeError ("division by zero",
// "unsupported operand types for +: str and int", ...). A tensor operand
// hands the operation to the tensor runtime (tensor_binary).
Value arith(BinOp op, const Value& a, const Value& b);

// Unary minus: int (wrapping), float, tensor; else
// "bad operand type for unary -: TYPE".
Value negate(const Value& a);

// a OP b for == != < <= > >=. A bool Value, or an elementwise bool tensor
// when a tensor meets a tensor or a number/bool. Ordering anything but two
// numbers or two strings is "'<' not supported between int and str".
Value compare(CmpOp op, const Value& a, const Value& b);

// == on non-tensor operands: numbers by value (int vs float exactly, nan
// unequal to itself), strings bytewise, dtypes and bools by value, lists,
// functions and tensors by identity, values of different types unequal.
bool values_equal(const Value& a, const Value& b);

// a OP b for two strings: bytewise and unsigned, as memcmp (what compare()
// answers for two strings).
bool str_compare(CmpOp op, std::string_view a, std::string_view b);


}  // namespace tessera
