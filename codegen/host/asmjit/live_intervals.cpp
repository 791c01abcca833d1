#include "codegen/host/asmjit/live_intervals.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tracer/ir_operands.h"

namespace tessera::jit::t1 {

namespace {

// LREF and TREF: an element's address (no IR type, a raw pointer).
bool is_address(const IRIns& ins) { return ir_op_info(ins.op).mem_access == IRMemAccess::Address; }

}  // namespace

bool has_value(const IRIns& ins) {
  // A sunk allocation has no register; exits build it from its elements.
  if (ir_is_const(ins.op) || ins.op == IROp::PHI || ins.op == IROp::CARG || ir_is_sunk_allocation(ins.op)) return false;
  return ins.type != IRType::None || is_address(ins);
}

RegClass value_class(const IRIns& ins) {
  if (is_address(ins)) return RegClass::Gpr;
  return ins.type == IRType::Float ? RegClass::Xmm : RegClass::Gpr;
}

bool calls_helper(const IRIns& ins) {
  if (ins.op == IROp::FMATH && ins.op2 == static_cast<uint32_t>(FloatMath::Sqrt)) return false;  // an instruction
  return ir_op_info(ins.op).calls_helper;
}

bool may_exit(const IRIns& ins) { return ins.snap != kNoSnap && ir_may_exit(ins.op); }

namespace {

// Operands read by `ins` (CALL reads its whole CARG chain).
void operands(const TraceIR& ir, const IRIns& ins, std::vector<IRRef>& out) {
  out.clear();
  if (ins.op == IROp::CARG || ir_is_sunk_allocation(ins.op)) return;  // read by a CALL / by exits
  if (ins.op == IROp::CALL) {
    out = carg_list(ir, ins.op1);
    return;
  }
  operand_refs(ins, out);
}

}  // namespace

TraceLiveness compute_liveness(const TraceIR& ir, const std::vector<ExitPlan>& plans) {
  TraceLiveness lv;
  const uint32_t n = static_cast<uint32_t>(ir.size());
  lv.uses.assign(n, 0);
  for (IRRef r = 0; r < n; ++r)
    if (ir[r].op == IROp::LOOP) lv.loop = r;

  std::vector<uint32_t> last(n, 0);
  std::vector<bool> used(n, false);
  auto use = [&](IRRef v, uint32_t at) {
    if (v >= n) throw std::runtime_error("reference " + std::to_string(v) + " is out of range");
    ++lv.uses[v];
    if (!has_value(ir[v])) return;
    used[v] = true;
    // Read inside the loop body but defined before it: live on every iteration.
    if (lv.loop != kNoRef && v < lv.loop && at > lv.loop) at = n;
    last[v] = std::max(last[v], at);
  };
  std::vector<IRRef> ops;
  for (IRRef r = 0; r < n; ++r) {
    const IRIns& ins = ir[r];
    if (calls_helper(ins)) lv.calls.push_back(r);
    if (ins.op == IROp::PHI) {
      use(ins.op1, n);
      use(ins.op2, n);
      continue;
    }
    operands(ir, ins, ops);
    for (IRRef v : ops) use(v, r);
    if (may_exit(ins)) {
      if (ins.snap >= ir.snapshots().size() || ins.snap >= plans.size())
        throw std::runtime_error("snapshot #" + std::to_string(ins.snap) + " does not exist");
      // What the exit reads is what its plan reads: the snapshot's values and
      // the elements of every sunk object it builds, however deeply nested.
      for (const ExitValue& v : plans[ins.snap].values) use(v.ref, r);
    }
  }
  for (IRRef r = 0; r < n; ++r) {
    if (!has_value(ir[r])) continue;
    LiveInterval iv;
    iv.ref = r;
    // A passed value arrives in a register at the entry (trace_abi.h) and
    // is moved to its own there: it lives from the start.
    iv.start = sload_passed(ir[r]) ? 0 : r;
    // A value nobody reads still gets its register for its own instruction.
    iv.end = used[r] ? last[r] : r;
    iv.cls = value_class(ir[r]);
    auto c = std::upper_bound(lv.calls.begin(), lv.calls.end(), iv.start);
    iv.crosses_call = c != lv.calls.end() && *c < iv.end;
    lv.intervals.push_back(iv);
  }
  std::stable_sort(lv.intervals.begin(), lv.intervals.end(),
                   [](const LiveInterval& a, const LiveInterval& b) { return a.start < b.start; });
  return lv;
}

}  // namespace tessera::jit::t1
