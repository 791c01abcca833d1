// Operator kinds of Tessera Script: the binary, comparison, unary and logical
// operators. The parser's AST uses them (vm/frontend/ast.h re-exports them as
// ast::BinOp, ...); value semantics (vm/builtins), tensors (vm/tensor), the
// tracer, the optimizer and the JIT helpers use them from here, without the AST.
#pragma once

#include <cstdint>

namespace tessera {

enum class BinOp : uint8_t { Add, Sub, Mul, Div, IDiv, Mod, Pow, MatMul };
enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class UnOp : uint8_t { Neg, Not };
enum class LogicOp : uint8_t { And, Or };

// Operator spellings, indexed by the enums above. Header-only, so that
// error messages anywhere (values, tensors) can use them.
inline const char* binop_symbol(BinOp op) {
  static constexpr const char* kText[] = {"+", "-", "*", "/", "//", "%", "**", "@"};
  return kText[static_cast<int>(op)];
}
inline const char* cmpop_symbol(CmpOp op) {
  static constexpr const char* kText[] = {"==", "!=", "<", "<=", ">", ">="};
  return kText[static_cast<int>(op)];
}

}  // namespace tessera
