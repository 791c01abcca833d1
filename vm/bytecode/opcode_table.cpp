// op_info: the static description of every opcode, generated from
// opcodes.def so the table can never drift from the instruction set.
#include "vm/bytecode/bytecode.h"

namespace tessera {

namespace {

constexpr OpInfo kOpTable[kNumOps] = {
#define OPCODE(name, fmt, desc) {#name, OpFormat::fmt, desc},
#include "vm/bytecode/opcodes.def"
#undef OPCODE
};

}  // namespace

const OpInfo& op_info(Op op) {
  auto i = static_cast<int>(op);
  // An out-of-range opcode is a corrupted instruction; clamp rather than read
  // past the table so a disassembly of bad code still cannot crash.
  if (i < 0 || i >= kNumOps) {
    static constexpr OpInfo kBad{"???", OpFormat::A, "invalid opcode"};
    return kBad;
  }
  return kOpTable[i];
}

}  // namespace tessera
