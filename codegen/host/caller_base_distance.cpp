#include "codegen/host/caller_base_distance.h"

#include "vm/bytecode/bytecode.h"

namespace tessera::jit {

uint32_t caller_base_distance(const FunctionProto& caller, uint32_t ret_pc) {
  if (ret_pc == 0 || ret_pc > caller.code.size()) return 0;
  const Instr& call = caller.code[ret_pc - 1];
  return call.op == Op::CALL ? static_cast<uint32_t>(call.a) + 1 : 0;
}

}  // namespace tessera::jit
