#include "vm/builtins/value_ops.h"

#include <string>
#include <string_view>

#include "vm/core/error.h"
#include "vm/core/number_ops.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {

namespace {

[[noreturn]] void unsupported(BinOp op, const Value& a, const Value& b) {
  throw RuntimeError(std::string("unsupported operand types for ") + binop_symbol(op) + ": " +
                     type_name(a) + " and " + type_name(b));
}

// Operands a tensor may meet in an elementwise operation (spec §7).
bool tensor_partner(const Value& v) { return v.is_tensor() || v.is_number() || v.is_bool(); }

Value int_arith(BinOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinOp::Add: return Value::integer(int_add(a, b));
    case BinOp::Sub: return Value::integer(int_sub(a, b));
    case BinOp::Mul: return Value::integer(int_mul(a, b));
    // `/` is true division: IEEE on the converted operands, so 1 / 0 is inf.
    case BinOp::Div: return Value::number(double(a) / double(b));
    case BinOp::IDiv:
      if (b == 0) throw RuntimeError("division by zero");
      return Value::integer(int_floordiv(a, b));
    case BinOp::Mod:
      if (b == 0) throw RuntimeError("division by zero");
      return Value::integer(int_mod(a, b));
    case BinOp::Pow:
      if (b < 0) return Value::number(float_pow(double(a), double(b)));
      return Value::integer(int_pow(a, b));
    case BinOp::MatMul: break;
  }
  unsupported(op, Value::integer(a), Value::integer(b));
}

Value float_arith(BinOp op, double a, double b) {
  switch (op) {
    case BinOp::Add: return Value::number(a + b);
    case BinOp::Sub: return Value::number(a - b);
    case BinOp::Mul: return Value::number(a * b);
    case BinOp::Div: return Value::number(a / b);
    case BinOp::IDiv: return Value::number(float_floordiv(a, b));
    case BinOp::Mod: return Value::number(float_mod(a, b));
    case BinOp::Pow: return Value::number(float_pow(a, b));
    case BinOp::MatMul: break;
  }
  unsupported(op, Value::number(a), Value::number(b));
}

bool cmp_holds(CmpOp op, int c) {
  if (c == kCmpUnordered) return op == CmpOp::Ne;
  switch (op) {
    case CmpOp::Eq: return c == 0;
    case CmpOp::Ne: return c != 0;
    case CmpOp::Lt: return c < 0;
    case CmpOp::Le: return c <= 0;
    case CmpOp::Gt: return c > 0;
    case CmpOp::Ge: return c >= 0;
  }
  return false;
}

// Three-way comparison of two numbers (int or float), exact across types.
int number_compare(const Value& a, const Value& b) {
  if (a.is_int()) {
    if (b.is_int()) return int_compare(a.as_int(), b.as_int());
    return int_float_compare(a.as_int(), b.as_float());
  }
  if (b.is_int()) {
    int c = int_float_compare(b.as_int(), a.as_float());
    return c == kCmpUnordered ? c : -c;
  }
  return float_compare(a.as_float(), b.as_float());
}

}  // namespace

Value arith(BinOp op, const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) return int_arith(op, a.as_int(), b.as_int());
  if (a.is_number() && b.is_number()) {
    if (op == BinOp::MatMul) unsupported(op, a, b);
    return float_arith(op, a.to_double(), b.to_double());
  }
  if (a.is_tensor() || b.is_tensor()) {
    // `@` is tensor-only on both sides; everything else broadcasts scalars.
    bool ok = op == BinOp::MatMul ? (a.is_tensor() && b.is_tensor())
                                       : (tensor_partner(a) && tensor_partner(b));
    if (!ok) unsupported(op, a, b);
    return tensor_binary(op, a, b);
  }
  if (op == BinOp::Add) {
    if (a.is_str() && b.is_str()) {
      return concat_str(a.as_str()->view(), b.as_str()->view());
    }
    if (a.is_list() && b.is_list()) {
      const auto& x = a.as_list()->items;
      const auto& y = b.as_list()->items;
      std::vector<Value> items;
      items.reserve(x.size() + y.size());
      items.insert(items.end(), x.begin(), x.end());  // l + l works: both read before the new list exists
      items.insert(items.end(), y.begin(), y.end());
      return make_list(std::move(items));
    }
  }
  unsupported(op, a, b);
}

Value negate(const Value& a) {
  if (a.is_int()) return Value::integer(int_neg(a.as_int()));
  if (a.is_float()) return Value::number(-a.as_float());
  if (a.is_tensor()) return tensor_neg(a);
  throw RuntimeError(std::string("bad operand type for unary -: ") + type_name(a));
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return number_compare(a, b) == 0;
  // Func and Builtin share the type name "fn" but are never the same value.
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case Tag::Undef:
    case Tag::Nil: return true;
    case Tag::Bool: return a.as_bool() == b.as_bool();
    case Tag::DTypeV: return a.as_dtype() == b.as_dtype();
    case Tag::Str: return a.as_str()->view() == b.as_str()->view();
    case Tag::Func:
    case Tag::Builtin:
    case Tag::List:
    case Tag::Tensor: return a.raw_bits() == b.raw_bits();
    case Tag::Int:
    case Tag::Float: break;  // handled above
  }
  return false;
}

Value compare(CmpOp op, const Value& a, const Value& b) {
  const bool equality = op == CmpOp::Eq || op == CmpOp::Ne;
  if (a.is_number() && b.is_number()) return Value::boolean(cmp_holds(op, number_compare(a, b)));
  if ((a.is_tensor() || b.is_tensor()) && tensor_partner(a) && tensor_partner(b))
    return tensor_compare(op, a, b);
  if (equality) return Value::boolean(values_equal(a, b) == (op == CmpOp::Eq));
  if (a.is_str() && b.is_str()) return Value::boolean(str_compare(op, a.as_str()->view(), b.as_str()->view()));
  throw RuntimeError(std::string("'") + cmpop_symbol(op) + "' not supported between " +
                     type_name(a) + " and " + type_name(b));
}

bool str_compare(CmpOp op, std::string_view a, std::string_view b) {
  const int c = a.compare(b);  // string_view compares like memcmp: bytewise, unsigned
  return cmp_holds(op, (c > 0) - (c < 0));
}

}  // namespace tessera
