// The interpreter's Value tag of each trace IR result type: what exits and
// stores write into a register's tag byte, in both host tiers.
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

}  // namespace tessera::jit
