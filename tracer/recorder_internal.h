// Internals the recorder's source files share (recorder.cpp,
// record_call.cpp, record_index.cpp, record_string.cpp); not part of the
// recorder's interface.
#pragma once

#include <iterator>

#include "tracer/ir_value_tags.h"
#include "tracer/trace_ir.h"
#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera::jit {

// Objects: reference-counted values that the trace stores through to their
// registers.
inline bool is_object(IRType t) { return t == IRType::Str || t == IRType::List || t == IRType::Tensor; }

// The IR comparison of each CmpOp.
constexpr IROp kCompareIR[] = {IROp::EQ, IROp::NE, IROp::LT, IROp::LE, IROp::GT, IROp::GE};
static_assert(std::size(kCompareIR) == kNumCmpOps);

}  // namespace tessera::jit
