// The opcode table, generated from ir.def so that names, modes and operand
// kinds can never drift from the opcode enum.
#include <cassert>
#include <iterator>

#include "tracer/trace_ir.h"

namespace tessera::jit {

namespace {

// ir.def's FLAGS.
enum : uint8_t { comm = 1, trap = 2, raise = 4, clob = 8, call = 16, peel = 32, base = 64 };

// ir.def's type words (IRTypeRule).
constexpr uint16_t bit(IRType t) { return static_cast<uint16_t>(1u << static_cast<int>(t)); }
constexpr uint16_t kAllTypes = (1u << kNumIRTypes) - 1;
constexpr uint16_t kValues = kAllTypes & ~bit(IRType::None);
constexpr IRTypeRule ty_any{kAllTypes, false, "any"};
constexpr IRTypeRule ty_val{kValues, false, "a value"};
constexpr IRTypeRule ty_none{bit(IRType::None), false, "none"};
constexpr IRTypeRule ty_int{bit(IRType::Int), false, "int"};
constexpr IRTypeRule ty_flt{bit(IRType::Float), false, "flt"};
constexpr IRTypeRule ty_num{static_cast<uint16_t>(bit(IRType::Int) | bit(IRType::Float)), false, "int or flt"};
constexpr IRTypeRule ty_bool{bit(IRType::Bool), false, "bool"};
constexpr IRTypeRule ty_str{bit(IRType::Str), false, "str"};
constexpr IRTypeRule ty_list{bit(IRType::List), false, "list"};
constexpr IRTypeRule ty_tens{bit(IRType::Tensor), false, "tens"};
constexpr IRTypeRule ty_func{bit(IRType::Func), false, "func"};
constexpr IRTypeRule ty_same{kValues, true, "op1's type"};

constexpr IROpInfo row(const char* name, uint8_t mode, OperandKind op1, OperandKind op2, IRMemSpace space,
                       IRMemAccess access, unsigned flags, IRTypeRule t1, IRTypeRule t2, IRTypeRule tres,
                       IRHelper helper, const char* desc) {
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
          t1,
          t2,
          tres,
          helper,
          desc};
}

constexpr IROpInfo kOpTable[] = {
#define IROP(name, mode, op1, op2, space, access, flags, t1, t2, tres, helper, desc)                        \
  row(#name, static_cast<uint8_t>(mode), OperandKind::op1, OperandKind::op2, IRMemSpace::space, IRMemAccess::access, \
      flags, ty_##t1, ty_##t2, ty_##tres, IRHelper::helper, desc),
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
