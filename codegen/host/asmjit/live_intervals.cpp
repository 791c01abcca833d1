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

namespace {

// The PHIs whose entry value can hand its register to its next value
// (live_intervals.h): per instruction, the entry value it takes over.
std::vector<IRRef> shared_registers(const TraceIR& ir, IRRef loop, const std::vector<uint32_t>& last_read,
                                    const SharesOperandRegister& shares) {
  const uint32_t n = static_cast<uint32_t>(ir.size());
  std::vector<IRRef> takes(n, kNoRef);
  if (!shares || loop == kNoRef) return takes;
  // How often each value is a PHI's entry value, and whether it is a next
  // value (then the back-edge reads it: it must live to the end).
  std::vector<uint32_t> entry_of(n, 0);
  std::vector<bool> next_of(n, false);
  for (IRRef r = loop + 1; r < n; ++r) {
    if (ir[r].op != IROp::PHI) continue;
    ++entry_of[ir[r].op1];
    next_of[ir[r].op2] = true;
  }
  for (IRRef r = loop + 1; r < n; ++r) {
    const IRIns& p = ir[r];
    if (p.op != IROp::PHI) continue;
    const IRRef a = p.op1, b = p.op2;
    if (a == b || a >= loop || b <= loop || !has_value(ir[a]) || !has_value(ir[b])) continue;
    if (value_class(ir[a]) != value_class(ir[b]) || !shares(ir[b].op) || may_exit(ir[b])) continue;
    if (entry_of[a] != 1 || next_of[a] || entry_of[b] != 0 || takes[b] != kNoRef) continue;
    if (last_read[a] > b) continue;  // read after its next value is made
    takes[b] = a;
  }
  return takes;
}

}  // namespace

TraceLiveness compute_liveness(const TraceIR& ir, const std::vector<ExitPlan>& plans,
                               const SharesOperandRegister& shares) {
  TraceLiveness lv;
  const uint32_t n = static_cast<uint32_t>(ir.size());
  lv.uses.assign(n, 0);
  for (IRRef r = 0; r < n; ++r)
    if (ir[r].op == IROp::LOOP) lv.loop = r;

  std::vector<uint32_t> last(n, 0), last_read(n, 0);  // last_read: not counting PHIs
  std::vector<std::vector<uint32_t>> reads(n);
  std::vector<bool> used(n, false);
  auto use = [&](IRRef v, uint32_t at, bool by_phi) {
    if (v >= n) throw std::runtime_error("reference " + std::to_string(v) + " is out of range");
    ++lv.uses[v];
    if (!has_value(ir[v])) return;
    used[v] = true;
    if (reads[v].empty() || reads[v].back() != at) reads[v].push_back(at);
    if (!by_phi) last_read[v] = std::max(last_read[v], at);
    // Read inside the loop body but defined before it: live on every iteration.
    if (lv.loop != kNoRef && v < lv.loop && at > lv.loop) at = n;
    last[v] = std::max(last[v], at);
  };
  std::vector<IRRef> ops;
  std::vector<IRRef> phis;
  for (IRRef r = 0; r < n; ++r) {
    const IRIns& ins = ir[r];
    if (calls_helper(ins)) lv.calls.push_back(r);
    if (ins.op == IROp::PHI) {
      phis.push_back(r);  // read at the end, after every other instruction
      continue;
    }
    operands(ir, ins, ops);
    for (IRRef v : ops) use(v, r, false);
    if (may_exit(ins)) {
      if (ins.snap >= ir.snapshots().size() || ins.snap >= plans.size())
        throw std::runtime_error("snapshot #" + std::to_string(ins.snap) + " does not exist");
      // What the exit reads is what its plan reads: the snapshot's values and
      // the elements of every sunk object it builds, however deeply nested.
      for (const ExitValue& v : plans[ins.snap].values) use(v.ref, r, false);
    }
  }
  for (IRRef r : phis) {
    use(ir[r].op1, n, true);
    use(ir[r].op2, n, true);
  }
  const std::vector<IRRef> takes = shared_registers(ir, lv.loop, last_read, shares);
  for (IRRef r = 0; r < n; ++r)
    if (takes[r] != kNoRef) last[takes[r]] = r;  // its register goes on as r's

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
    iv.reads = std::move(reads[r]);
    iv.takes_register_of = takes[r];
    lv.intervals.push_back(std::move(iv));
  }
  std::stable_sort(lv.intervals.begin(), lv.intervals.end(),
                   [](const LiveInterval& a, const LiveInterval& b) { return a.start < b.start; });
  return lv;
}

}  // namespace tessera::jit::t1
