// What the elementwise table (elementwise_ops.def) says of each operation,
// as functions generated from its rows: names, the int rule, and which
// script operator computes which Binary.
#pragma once

#include "vm/core/operators.h"
#include "vm/tensor/op_kinds.h"

namespace tessera {

// The built-in's (and Graph and kernel IR's) name: "tanh", "neg".
constexpr const char* unary_op_name(Unary u) {
  switch (u) {
#define TESSERA_UNARY(Name, name, ...) case Unary::Name: return name;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return "";
}

// The prefix of its error messages: "tanh", "-".
constexpr const char* unary_display(Unary u) {
  switch (u) {
#define TESSERA_UNARY(Name, name, display, ...) case Unary::Name: return display;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return "";
}

// Whether an int operand stays int (neg, abs, relu); the others compute floats.
constexpr bool keeps_int(Unary u) {
  switch (u) {
#define TESSERA_UNARY(Name, name, display, builtin, keeps, ...) case Unary::Name: return keeps;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return false;
}

// The Binary an operator computes. Every BinOp and CmpOp is covered (the
// switches have no default, so -Wswitch names a missing one), but `@`,
// which is no elementwise operation: has_binary says so.
#define TESSERA_UNARY(...)
#define TESSERA_OPERATOR_CASE_BinOp(Name) case BinOp::Name: return Binary::Name;
#define TESSERA_OPERATOR_CASE_CmpOp(Name)
#define TESSERA_OPERATOR_CASE_None(Name)
#define TESSERA_BINARY(Name, graph, kind, ...) TESSERA_OPERATOR_CASE_##kind(Name)
constexpr bool has_binary(BinOp op) { return op != BinOp::MatMul; }
constexpr Binary to_binary(BinOp op) {
  switch (op) {
#include "vm/tensor/elementwise_ops.def"
    case BinOp::MatMul: break;
  }
  return Binary::Add;
}
#undef TESSERA_OPERATOR_CASE_BinOp
#undef TESSERA_OPERATOR_CASE_CmpOp
#define TESSERA_OPERATOR_CASE_BinOp(Name)
#define TESSERA_OPERATOR_CASE_CmpOp(Name) case CmpOp::Name: return Binary::Name;
constexpr Binary to_binary(CmpOp op) {
  switch (op) {
#include "vm/tensor/elementwise_ops.def"
  }
  return Binary::Eq;
}
#undef TESSERA_OPERATOR_CASE_BinOp
#undef TESSERA_OPERATOR_CASE_CmpOp
#undef TESSERA_OPERATOR_CASE_None
#undef TESSERA_BINARY
#undef TESSERA_UNARY

}  // namespace tessera
