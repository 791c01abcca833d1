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
// How many of each there are, for tables indexed by them (the last
// enumerator above, plus one: keep these next to the enums).
constexpr int kNumBinOps = static_cast<int>(BinOp::MatMul) + 1;
constexpr int kNumCmpOps = static_cast<int>(CmpOp::Ge) + 1;

// Operator spellings, indexed by the enums above. Header-only, so that
// error messages anywhere (values, tensors) can use them.
inline const char* binop_symbol(BinOp op) {
  static constexpr const char* kText[] = {"+", "-", "*", "/", "//", "%", "**", "@"};
  static_assert(sizeof(kText) / sizeof(kText[0]) == kNumBinOps);
  return kText[static_cast<int>(op)];
}
inline const char* cmpop_symbol(CmpOp op) {
  static constexpr const char* kText[] = {"==", "!=", "<", "<=", ">", ">="};
  static_assert(sizeof(kText) / sizeof(kText[0]) == kNumCmpOps);
  return kText[static_cast<int>(op)];
}

}  // namespace tessera
