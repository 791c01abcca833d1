// Sunk allocations at exits, for both host tiers (lowering_env.h).
#include <algorithm>
#include <string>

#include "codegen/host/lowering_env.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

std::vector<SunkObject> split_sunk_entries(const TraceIR& ir, const std::vector<SnapshotEntry>& entries,
                                           std::vector<SnapshotEntry>& values) {
  std::vector<SunkObject> sunk;
  values.clear();
  for (const SnapshotEntry& e : entries) {
    if (e.ref >= ir.size() || !ir_is_sunk_allocation(ir[e.ref].op)) {
      values.push_back(e);
      continue;
    }
    auto same = std::find_if(sunk.begin(), sunk.end(), [&](const SunkObject& o) { return o.ref == e.ref; });
    if (same == sunk.end()) sunk.push_back(SunkObject{e.ref, {e.slot}});
    else same->slots.push_back(e.slot);
  }
  return sunk;
}

std::vector<int64_t> sunk_tensor_layout(const TraceIR& ir, uint32_t ref) {
  const IRIns& ins = ir[ref];
  if (ins.op2 >= ir.virtual_tensors().size())
    throw_at_instruction(ir, ref, "virtual tensor #" + std::to_string(ins.op2) + " does not exist");
  const VirtualTensor& vt = ir.virtual_tensors()[ins.op2];
  if (vt.shape.size() > kMaxRank || std::any_of(vt.shape.begin(), vt.shape.end(), [](int64_t d) { return d < 0; }))
    throw_at_instruction(ir, ref, "virtual tensor #" + std::to_string(ins.op2) + " has a bad shape");
  const std::vector<IRRef> elements = carg_list(ir, ins.op1);
  if (static_cast<int64_t>(elements.size()) != vt.numel())
    throw_at_instruction(ir, ref, "the element count does not match virtual tensor #" + std::to_string(ins.op2));
  const bool floats = dtype_is_float(vt.dtype);
  for (IRRef v : elements) {
    const IRType t = ir[v].type;
    if (floats ? t != IRType::Float : t != IRType::Int && t != IRType::Bool)
      throw_at_instruction(ir, ref, std::string("an element's type does not fit dtype ") + dtype_name(vt.dtype));
  }
  std::vector<int64_t> layout{static_cast<int64_t>(vt.dtype), static_cast<int64_t>(vt.shape.size())};
  layout.insert(layout.end(), vt.shape.begin(), vt.shape.end());
  return layout;
}

}  // namespace tessera::jit
