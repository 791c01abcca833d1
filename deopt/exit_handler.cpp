#include "deopt/exit_handler.h"

#include <cstring>

namespace tessera::jit {

Value value_from_payload(IRType t, uint64_t payload) {
  switch (t) {
    case IRType::Int: return Value::integer(static_cast<int64_t>(payload));
    case IRType::Float: {
      double d;
      std::memcpy(&d, &payload, sizeof d);
      return Value::number(d);
    }
    case IRType::Bool: return Value::boolean((payload & 1) != 0);
    case IRType::DType: return Value::dtype(static_cast<DType>(payload));
    case IRType::Func: return Value::function(reinterpret_cast<FunctionProto*>(payload));
    case IRType::Builtin: return Value::builtin(reinterpret_cast<const BuiltinDef*>(payload));
    case IRType::Str:
    case IRType::List:
    case IRType::Tensor: return Value::borrow(reinterpret_cast<Obj*>(payload));
    case IRType::Nil:
    case IRType::None: break;
  }
  return Value();
}

void restore_snapshot(const TraceIR& ir, const Snapshot& snap, const uint64_t* vals, Value* base) {
  for (size_t i = 0; i < snap.entries.size(); ++i) {
    const SnapshotEntry& e = snap.entries[i];
    base[e.slot] = value_from_payload(ir[e.ref].type, vals[i]);
  }
}

std::vector<uint32_t> resume_pcs(const Snapshot& snap) {
  std::vector<uint32_t> pcs;
  // A caller resumes after the CALL that entered its callee; the innermost
  // frame resumes at the snapshot's pc.
  for (const SnapshotFrame& f : snap.frames) pcs.push_back(f.call_pc + 1);
  pcs.push_back(snap.pc);
  return pcs;
}

}  // namespace tessera::jit
