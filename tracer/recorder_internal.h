// Internals the recorder's source files share (recorder.cpp,
// record_call.cpp, record_index.cpp, record_string.cpp); not part of the
// recorder's interface.
#pragma once

#include <iterator>

#include "tracer/trace_ir.h"
#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera::jit {

// The IR type of a value the recorder sees (None: undefined).
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

// Objects: reference-counted values that the trace stores through to their
// registers.
inline bool is_object(IRType t) { return t == IRType::Str || t == IRType::List || t == IRType::Tensor; }

// The IR comparison of each CmpOp.
constexpr IROp kCompareIR[] = {IROp::EQ, IROp::NE, IROp::LT, IROp::LE, IROp::GT, IROp::GE};
static_assert(std::size(kCompareIR) == kNumCmpOps);

}  // namespace tessera::jit
