// op_info: the static description of every opcode, generated from
// opcodes.def so the table can never drift from the instruction set; and
// the register effects of an instruction, read from its operand roles.
#include "vm/bytecode/bytecode.h"

namespace tessera {

namespace {

constexpr OpInfo kOpTable[kNumOps] = {
#define OPCODE(name, fmt, a, b, c, flow, desc) \
  {#name, OpFormat::fmt, {OperandRole::a, OperandRole::b, OperandRole::c}, OpFlow::flow, desc},
#include "vm/bytecode/opcodes.def"
#undef OPCODE
};

// An out-of-range opcode is a corrupted instruction: no operands, and no
// known effect (the register analyses treat it as reading everything).
constexpr OpInfo kBad{"???", OpFormat::A, {}, OpFlow::next, "invalid opcode"};

bool valid(Op op) { return static_cast<int>(op) < kNumOps; }

// N of the srcN and src1N roles: the value of the count operand.
int64_t count_of(const Instr& in, const OpInfo& info) {
  for (int i = 0; i < kNumOperands; ++i)
    if (info.roles[i] == OperandRole::count) return operand_value(in, i);
  return 0;
}

}  // namespace

const OpInfo& op_info(Op op) {
  // Clamp rather than read past the table so a disassembly of bad code
  // still cannot crash.
  return valid(op) ? kOpTable[static_cast<int>(op)] : kBad;
}

int64_t operand_value(const Instr& in, int i) {
  const OpFormat f = op_info(in.op).format;
  switch (i) {
    case 0: return f == OpFormat::sBx ? 0 : in.a;
    case 1:
      switch (f) {
        case OpFormat::ABC:
        case OpFormat::AB:
        case OpFormat::BR: return in.b;
        case OpFormat::ABx: return in.bx;
        case OpFormat::AsBx:
        case OpFormat::sBx: return in.sbx;
        case OpFormat::A: return 0;
      }
      return 0;
    case 2: return f == OpFormat::ABC ? in.c : 0;
    default: return 0;
  }
}

bool reads_register(const Instr& in, uint32_t reg) {
  if (!valid(in.op)) return true;
  const OpInfo& info = op_info(in.op);
  const int64_t r = reg;
  for (int i = 0; i < kNumOperands; ++i) {
    const int64_t x = operand_value(in, i);
    switch (info.roles[i]) {
      case OperandRole::src:
        if (r == x) return true;
        break;
      case OperandRole::src4:
        if (r >= x && r <= x + 3) return true;
        break;
      case OperandRole::srcN:
        if (r >= x && r < x + count_of(in, info)) return true;
        break;
      case OperandRole::src1N:
        if (r >= x && r <= x + count_of(in, info)) return true;
        break;
      case OperandRole::srcUp:
        if (r >= x) return true;
        break;
      default: break;
    }
  }
  return false;
}

bool writes_register(const Instr& in, uint32_t reg) {
  const OpInfo& info = op_info(in.op);
  for (int i = 0; i < kNumOperands; ++i)
    if (info.roles[i] == OperandRole::dst && operand_value(in, i) == reg) return true;
  return false;
}

}  // namespace tessera
