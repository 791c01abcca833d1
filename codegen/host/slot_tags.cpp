#include "codegen/host/slot_tags.h"

#include "tracer/ir_value_tags.h"

namespace tessera::jit {

namespace {

// The slot a CALL writes its result to, or -1.
int32_t call_dest_slot(const TraceIR& ir, const IRIns& in) {
  return in.op2 < ir.calls().size() ? ir.calls()[in.op2].dest_slot : -1;
}

// The tag SSTORE `in` writes, or nothing for malformed IR.
bool stored_tag(const TraceIR& ir, const IRIns& in, uint8_t& tag) {
  if (in.op2 >= ir.size() || ir[in.op2].type == IRType::None) return false;
  tag = static_cast<uint8_t>(tag_for(ir[in.op2].type));
  return true;
}

}  // namespace

void update_slot_tags(SlotTags& tags, const TraceIR& ir, const IRIns& in) {
  uint8_t tag = 0;
  if (in.op == IROp::SLOAD) {
    tags[in.op1] = static_cast<uint8_t>(sload_passed(in) ? Tag::Undef : tag_for(in.type));
  } else if (in.op == IROp::SSTORE) {
    if (stored_tag(ir, in, tag)) tags[in.op1] = tag;
  } else if (in.op == IROp::CALL) {
    if (const int32_t d = call_dest_slot(ir, in); d >= 0) tags.erase(static_cast<uint32_t>(d));
  } else if (ir_op_info(in.op).moves_base) {
    tags.clear();
  }
}

SlotTags loop_header_slot_tags(const TraceIR& ir) {
  const IRRef loop = ir.loop_ref();
  SlotTags tags;
  if (loop == kNoRef) return tags;
  for (IRRef r = 0; r < loop; ++r)
    if (!ir_is_const(ir[r].op)) update_slot_tags(tags, ir, ir[r]);
  for (IRRef r = loop + 1; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    uint8_t tag = 0;
    if (in.op == IROp::SSTORE) {
      auto it = tags.find(in.op1);
      if (it != tags.end() && stored_tag(ir, in, tag) && it->second != tag) tags.erase(it);
    } else if (in.op != IROp::SLOAD) {
      update_slot_tags(tags, ir, in);  // a helper's result slot, a frame switch
    }
  }
  return tags;
}

}  // namespace tessera::jit
