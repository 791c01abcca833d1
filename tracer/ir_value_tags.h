// The interpreter's Value tag of each trace IR result type: what exits and
// stores write into a register's tag byte, in both host tiers; and the
// inverse, the IR type of a value (what the recorder types a load by).
#pragma once

#include <stdexcept>

#include "tracer/trace_ir.h"
#include "vm/core/value.h"

namespace tessera::jit {

inline Tag tag_for(IRType t) {
  switch (t) {
    case IRType::Nil: return Tag::Nil;
    case IRType::Bool: return Tag::Bool;
    case IRType::Int: return Tag::Int;
    case IRType::Float: return Tag::Float;
    case IRType::Str: return Tag::Str;
    case IRType::List: return Tag::List;
    case IRType::Tensor: return Tag::Tensor;
    case IRType::Func: return Tag::Func;
    case IRType::Builtin: return Tag::Builtin;
    case IRType::DType: return Tag::DTypeV;
    case IRType::None: break;
  }
  throw std::runtime_error("type None has no value tag");
}

// The IR type of a value (None: undefined).
inline IRType type_of_value(const Value& v) {
  switch (v.tag()) {
    case Tag::Nil: return IRType::Nil;
    case Tag::Bool: return IRType::Bool;
    case Tag::Int: return IRType::Int;
    case Tag::Float: return IRType::Float;
    case Tag::DTypeV: return IRType::DType;
    case Tag::Func: return IRType::Func;
    case Tag::Builtin: return IRType::Builtin;
    case Tag::Str: return IRType::Str;
    case Tag::List: return IRType::List;
    case Tag::Tensor: return IRType::Tensor;
    case Tag::Undef: break;
  }
  return IRType::None;
}

}  // namespace tessera::jit
