#include "tracer/ir_operands.h"

#include <stdexcept>
#include <string>

namespace tessera::jit {

IRRef copy_constant(const TraceIR& from, IRRef r, TraceIR& to) {
  const IRIns& in = from[r];
  switch (in.op) {
    case IROp::KNIL: return to.knil();
    case IROp::KBOOL: return to.kbool(in.op1 != 0);
    case IROp::KINT:
      return in.type == IRType::DType ? to.kdtype(static_cast<DType>(from.const_int(r))) : to.kint(from.const_int(r));
    case IROp::KFLOAT:
      return to.kfloat(from.const_float(r), from.is_converted_int(r));
    case IROp::KOBJ:
      if (const std::string* what = from.const_description(from.const_ptr(r))) to.describe_const(from.const_ptr(r), *what);
      return to.kobj(from.const_ptr(r), in.type);
    default: break;
  }
  throw std::invalid_argument("copy_constant: " + std::to_string(r) + " (" + ir_op_info(in.op).name +
                              ") is not a constant");
}

std::vector<IRRef> copy_constants(const TraceIR& from, TraceIR& to, const std::vector<bool>& keep) {
  std::vector<IRRef> remap(from.size(), kNoRef);
  for (IRRef r = 0; r < from.size(); ++r)
    if (ir_is_const(from[r].op) && (keep.empty() || (r < keep.size() && keep[r])))
      remap[r] = copy_constant(from, r, to);
  return remap;
}

void clamp_snapshot_starts(TraceIR& ir) {
  auto& snaps = ir.snapshots();
  for (IRRef r = 0; r < ir.size(); ++r) {
    const uint16_t sn = ir[r].snap;
    if (sn < snaps.size() && snaps[sn].ir_ref > r) snaps[sn].ir_ref = r;
  }
}

}  // namespace tessera::jit
