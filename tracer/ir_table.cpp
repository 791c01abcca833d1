// The opcode table, generated from ir.def so that names, modes and operand
// kinds can never drift from the opcode enum.
#include <cassert>
#include <iterator>

#include "tracer/trace_ir.h"

namespace tessera::jit {

namespace {

// ir.def's FLAGS.
enum : uint8_t { comm = 1, trap = 2, raise = 4, clob = 8, call = 16, peel = 32, base = 64 };

constexpr IROpInfo row(const char* name, uint8_t mode, OperandKind op1, OperandKind op2, IRMemSpace space,
                       IRMemAccess access, unsigned flags, const char* desc) {
  return {name,
          mode,
          op1,
          op2,
          space,
          access,
          (flags & comm) != 0,
          (flags & trap) != 0,
          (flags & raise) != 0,
          (flags & clob) != 0,
          (flags & call) != 0,
          (flags & peel) != 0,
          (flags & base) != 0,
          desc};
}

constexpr IROpInfo kOpTable[] = {
#define IROP(name, mode, op1, op2, space, access, flags, desc)                                              \
  row(#name, static_cast<uint8_t>(mode), OperandKind::op1, OperandKind::op2, IRMemSpace::space, IRMemAccess::access, \
      flags, desc),
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
