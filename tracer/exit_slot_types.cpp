#include "tracer/exit_slot_types.h"

namespace tessera::jit {

std::unordered_map<uint32_t, IRType> exit_slot_types(const TraceIR& ir, uint16_t snap) {
  std::unordered_map<uint32_t, IRType> types;
  if (snap >= ir.snapshots().size()) return types;
  const Snapshot& s = ir.snapshots()[snap];
  if (!s.frames.empty()) return types;
  IRRef cut = kNoRef;
  for (IRRef r = 0; r < ir.size() && cut == kNoRef; ++r)
    if (ir[r].snap == snap) cut = r;
  if (cut == kNoRef) return types;
  for (IRRef r = 0; r < cut; ++r) {
    const IRIns& in = ir[r];
    if (ir_op_info(in.op).moves_base) {
      types.clear();
      continue;
    }
    switch (in.op) {
      case IROp::SLOAD: types[in.op1] = in.type; break;
      case IROp::SSTORE: types[in.op1] = ir[in.op2].type; break;
      case IROp::CALL: {
        if (in.op2 >= ir.calls().size() || ir.calls()[in.op2].dest_slot < 0) break;
        const auto dest = static_cast<uint32_t>(ir.calls()[in.op2].dest_slot);
        if (in.type == IRType::None) types.erase(dest);  // any type
        else types[dest] = in.type;                      // checked against the result's tag
        break;
      }
      default: break;
    }
  }
  for (const SnapshotEntry& e : s.entries) types[e.slot] = ir[e.ref].type;
  std::erase_if(types, [](const auto& kv) { return kv.second == IRType::None; });
  return types;
}

}  // namespace tessera::jit
