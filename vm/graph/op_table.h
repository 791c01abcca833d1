// The Graph IR op table: one declarative row per tensor operation
// (vm/graph/ops.def). Built-in functions (tensor_builtins.cpp), the
// interpreter's operator paths and the JIT's tracer all read this table, so
// adding an operation is one row plus its kernel.
//
// Calling convention of an op: positional *inputs* (min_inputs..max_inputs;
// tensors or other values such as shapes and scalars), then *attributes*,
// which may be passed positionally after the inputs or by keyword, and
// which have defaults unless marked required.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "vm/core/builtin_def.h"
#include "vm/tensor/op_kinds.h"
#include "vm/tensor/tensor.h"

namespace tessera {

enum class OpId : uint16_t {
#define TESSERA_OP(id, ...) id,
#include "vm/graph/ops.def"
#undef TESSERA_OP
};

// What an attribute accepts.
enum class AttrType : uint8_t {
  Int,        // int
  OptInt,     // int or nil
  Number,     // int or float
  OptNumber,  // int, float or nil
  Bool,       // bool
  DType,      // dtype value
  OptDType,   // dtype value or nil
  Str,        // str
  OptTensor,  // tensor or nil
};

// A compile-time attribute default (a Value cannot be constexpr).
struct AttrDefault {
  enum class Kind : uint8_t { Required, Nil, Bool, Int, Number, DType, Str } kind = Kind::Required;
  int64_t i = 0;
  double f = 0;
  DType dt = DType::F32;
  const char* s = nullptr;
  Value to_value() const;
};
constexpr AttrDefault required() { return {}; }
constexpr AttrDefault dflt_nil() { return {AttrDefault::Kind::Nil}; }
constexpr AttrDefault dflt_bool(bool b) { return {AttrDefault::Kind::Bool, b}; }
constexpr AttrDefault dflt_int(int64_t i) { return {AttrDefault::Kind::Int, i}; }
constexpr AttrDefault dflt_num(double f) { return {AttrDefault::Kind::Number, 0, f}; }
constexpr AttrDefault dflt_dtype(DType d) { return {AttrDefault::Kind::DType, 0, 0, d}; }
constexpr AttrDefault dflt_str(const char* s) { return {AttrDefault::Kind::Str, 0, 0, DType::F32, s}; }

struct AttrDef {
  const char* name = nullptr;
  AttrType type = AttrType::Int;
  AttrDefault dflt;
};

// How fusion (docs/tensor-jit.md) may put an op into a kernel: the column
// `fusion` of ops.def. `sub` is the Unary, Binary or Reduce of the kernel.
enum class FusionKind : uint8_t {
  None, Unary, Binary, Where, Cast, Reduce, Softmax, LayerNorm, RmsNorm, MatMul, Attention
};
struct FusionClass {
  FusionKind kind = FusionKind::None;
  uint8_t sub = 0;
  Unary unary() const { return static_cast<Unary>(sub); }
  Binary binary() const { return static_cast<Binary>(sub); }
  Reduce reduce() const { return static_cast<Reduce>(sub); }
  // Elementwise: one output element from the input elements at its index
  // (after broadcasting).
  bool elementwise() const {
    return kind == FusionKind::Unary || kind == FusionKind::Binary || kind == FusionKind::Where ||
           kind == FusionKind::Cast;
  }
  // A reduction or normalization along one axis: a kernel computes it a row
  // at a time (row statistics, then the row's elements).
  bool row() const {
    return kind == FusionKind::Reduce || kind == FusionKind::Softmax || kind == FusionKind::LayerNorm ||
           kind == FusionKind::RmsNorm;
  }
};
constexpr FusionClass no_fusion() { return {}; }
constexpr FusionClass fuse(FusionKind k) { return {k, 0}; }
constexpr FusionClass fuse_unary(Unary u) { return {FusionKind::Unary, static_cast<uint8_t>(u)}; }
constexpr FusionClass fuse_binary(Binary b) { return {FusionKind::Binary, static_cast<uint8_t>(b)}; }
constexpr FusionClass fuse_reduce(Reduce r) { return {FusionKind::Reduce, static_cast<uint8_t>(r)}; }

constexpr size_t kMaxAttrs = 6;
struct OpDef;

// One bound call: inputs as given, every attribute resolved (default filled in).
struct OpCall {
  const OpDef* def = nullptr;
  std::span<const Value> inputs;
  std::array<Value, kMaxAttrs> attrs;

  // The attribute of that name (must exist in the op's row).
  const Value& attr(std::string_view name) const;
  // Input i as a tensor; throws "NAME: expected tensor, got TYPE".
  const TensorObj& tensor(size_t i) const;
  const char* name() const;  // the error-message prefix
};

using ShapeFn = Shape (*)(const OpCall&);   // validates inputs; result shape
using DTypeFn = DType (*)(const OpCall&);   // result dtype
// Tensor ops (shape != nullptr): fill the preallocated `out`, return nil.
// Value ops (shape == nullptr, e.g. numel): out is null; return the result.
using KernelFn = Value (*)(const OpCall&, TensorObj* out);
// Optional scalar form, used when no positional argument is a tensor and no
// keywords are given (unary math and min/max on plain numbers).
using ScalarFn = Value (*)(std::span<const Value> args);

struct OpDef {
  OpId id;
  const char* name;     // Graph IR name; the built-in's name when builtin
  const char* display;  // error-message prefix ("+" for the add operator)
  bool builtin;         // registered as a script built-in function
  int min_inputs;
  int max_inputs;
  std::span<const AttrDef> attrs;
  ShapeFn shape;
  DTypeFn dtype;
  ScalarFn scalar;
  KernelFn kernel;
  FusionClass fusion;
};

std::span<const OpDef> op_table();
const OpDef& op_def(OpId id);
const OpDef* find_op(std::string_view name);  // null if unknown

// The Graph IR op of an elementwise operation (elementwise_ops.def): the
// op whose fusion column names it back.
constexpr OpId graph_op(Unary u) {
  switch (u) {
#define TESSERA_UNARY(Name, ...) case Unary::Name: return OpId::Name;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return OpId::Neg;
}
constexpr OpId graph_op(Binary b) {
  switch (b) {
#define TESSERA_UNARY(...)
#define TESSERA_BINARY(Name, graph, ...) case Binary::Name: return OpId::graph;
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return OpId::Add;
}

// Arity and attribute binding, with errors such as
// "zeros: unexpected keyword argument 'foo'", "sum() takes 1 to 3 arguments (4 given)",
// "sum: axis must be int or nil, got float", "cast: missing argument 'dtype'".
// The returned call refers to args.pos (which must outlive it).
OpCall bind_op(const OpDef& def, const CallArgs& args);
// Shape and dtype inference, allocation, kernel.
Value run_op(const OpCall& call);
// bind + (scalar fast path | run).
Value call_op(const OpDef& def, const CallArgs& args);
// Convenience for C++ callers: positional inputs only, default attributes.
Value call_op(OpId id, std::span<const Value> inputs);

// The tensor built-ins: one BuiltinDef per row marked builtin (the part of
// the built-in registry, vm/builtins/builtin.h, that this component owns).
std::span<const BuiltinDef> tensor_builtins();

}  // namespace tessera
