// scalar_slots(): registers an exit may write without reference counting.
#include "codegen/host/ir_value_tags.h"
#include "codegen/host/lowering_env.h"

namespace tessera::jit {

std::unordered_set<uint32_t> scalar_slots(const TraceIR& ir, const LoweringEnv& env) {
  std::unordered_set<uint32_t> slots;
  auto is_object = [](IRType t) { return static_cast<uint8_t>(tag_for(t)) >= static_cast<uint8_t>(Tag::Str); };
  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if (in.op == IROp::FPUSH || in.op == IROp::FPOP) return {};  // the same slot number names other registers
    if (in.op == IROp::SLOAD && (in.op2 == 0 || in.op2 == 2) && in.type != IRType::None && !is_object(in.type))
      slots.insert(in.op1);
  }
  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if ((in.op == IROp::SSTORE && in.op2 < ir.size() && ir[in.op2].type != IRType::None && is_object(ir[in.op2].type)) ||
        (in.op == IROp::SLOAD && in.op2 != 0 && is_object(in.type)))
      slots.erase(in.op1);
    if (in.op == IROp::CALL && in.op2 < env.calls.size() && env.calls[in.op2]->dest_slot >= 0)
      slots.erase(static_cast<uint32_t>(env.calls[in.op2]->dest_slot));
  }
  return slots;
}

}  // namespace tessera::jit
