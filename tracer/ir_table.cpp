// The opcode table, generated from ir.def so that names, modes and operand
// kinds can never drift from the opcode enum.
#include <cassert>
#include <iterator>

#include "tracer/trace_ir.h"

namespace tessera::jit {

namespace {

constexpr IROpInfo kOpTable[] = {
#define IROP(name, mode, op1, op2, desc) \
  {#name, static_cast<uint8_t>(mode), OperandKind::op1, OperandKind::op2, desc},
#include "tracer/ir.def"
#undef IROP
};
static_assert(std::size(kOpTable) == kNumIROps, "ir.def and IROp disagree");

}  // namespace

const IROpInfo& ir_op_info(IROp op) {
  assert(static_cast<int>(op) < kNumIROps);
  return kOpTable[static_cast<int>(op)];
}

const char* ir_type_name(IRType t) {
  // Four letters at most, so that the padded type column stays aligned.
  switch (t) {
    case IRType::None: return "none";
    case IRType::Nil: return "nil";
    case IRType::Bool: return "bool";
    case IRType::Int: return "int";
    case IRType::Float: return "flt";
    case IRType::Str: return "str";
    case IRType::List: return "list";
    case IRType::Tensor: return "tens";
    case IRType::Func: return "func";
    case IRType::Builtin: return "bltn";
    case IRType::DType: return "dtyp";
  }
  return "?";
}

}  // namespace tessera::jit
