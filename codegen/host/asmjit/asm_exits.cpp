// The T1 assembler's exits (asm_state.h): the stubs that guards jump to,
// one per snapshot, placed after the trace, and the tier-up exit.
//
// A stub emits its snapshot's exit plan (deopt/exit_plan.h). Unlinked
// (ExitLinking::links null): the plan's values go to exit_vals and the stub
// returns the snapshot number; the runtime writes the registers. Linked: the
// stub writes the registers itself (reference counting batched as in the
// LLVM tier; a plan that builds sunk objects through one helper call), then
// jumps into links[snap] when it is set and returns `code_base | snap`
// otherwise.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/trace_abi.h"

namespace tessera::jit::t1 {

using namespace asmjit;

// Tier-up polling (LoweringEnv::tier_up_counter), at the start of every
// trace and at a loop's back-edge (every PHI already holds its next value):
// count down; at zero, leave through the tier-up exit, which writes the
// loop-carried values (each PHI's entry SLOAD slot; nothing at the start)
// and returns kTierUpExit (at the start: the passed values, whose registers
// the parent's exit left unwritten). Counting entries too upgrades loops that are
// mostly entered through links and left through exits, rarely reaching
// their own back-edge (nbody's outer loop). A peeled loop's PHIs start
// from its peeled iteration's values, not from entry SLOADs: its back-edge
// writes what the body's loop-header snapshot names (header_state). Loops
// with neither do not poll at the back-edge.
void TraceAssembler::poll_tier_up(bool at_entry) {
  if (env_.tier_up_counter == nullptr || env_.linking.links == nullptr) return;
  std::vector<SnapshotEntry> carried;
  for (IRRef r = 0; at_entry && r < ir_.size(); ++r)
    if (sload_passed(ir_[r])) carried.push_back(SnapshotEntry{ir_[r].op1, r});
  for (IRRef r = at_entry || loop_ == kNoRef ? ir_.size() : loop_ + 1; r < ir_.size(); ++r) {
    const IRIns& p = ir_[r];
    if (p.op != IROp::PHI) continue;
    const IRIns& entry = ir_[p.op1];
    if (entry.op != IROp::SLOAD || entry.op2 != 0) {
      if (!header_state(carried)) return;
      break;
    }
    carried.push_back(SnapshotEntry{entry.op1, p.op1});
  }
  std::sort(carried.begin(), carried.end(),
            [](const SnapshotEntry& x, const SnapshotEntry& y) { return x.slot < y.slot; });
  Label up = a_.newLabel();
  a_.mov(x86::rax, reinterpret_cast<uint64_t>(env_.tier_up_counter));
  a_.sub(x86::dword_ptr(x86::rax), 1);
  a_.jz(up);
  const uint32_t at = static_cast<uint32_t>(ir_.size());
  tier_up_plans_.push_back(plan_tier_up_exit(ir_, carried));
  const ExitPlan* plan = &tier_up_plans_.back();
  cold_.push_back([this, up, plan, at] {
    a_.bind(up);
    const uint32_t saved_cur = cur_;
    cur_ = at;
    write_registers(*plan, false);
    emit_return(env_.linking.code_base | kTierUpExit);
    cur_ = saved_cur;
  });
}

// The loop-carried state at the header of a peeled loop
// (TraceIR::header_snapshot): its entries name the PHIs' first operands,
// whose registers hold the carried values at the back-edge.
bool TraceAssembler::header_state(std::vector<SnapshotEntry>& out) const {
  const uint16_t h = ir_.header_snapshot();
  if (h == kNoSnap || h >= ir_.snapshots().size()) return false;
  for (const SnapshotEntry& e : ir_.snapshots()[h].entries)
    if (e.ref < ir_.size() && ir_is_sunk_allocation(ir_[e.ref].op)) return false;
  out = ir_.snapshots()[h].entries;
  return true;
}

Label TraceAssembler::exit_label(uint16_t snap) {
  if (snap == kNoSnap) fail("guard without a snapshot");
  if (snap >= ir_.snapshots().size()) fail("snapshot #" + std::to_string(snap) + " does not exist");
  auto it = exits_.find(snap);
  if (it != exits_.end()) return it->second;
  Label l = a_.newLabel();
  exits_.emplace(snap, l);
  const uint32_t at = cur_;
  cold_.push_back([this, snap, l, at] { emit_exit(snap, l, at); });
  return l;
}

// One exit stub, emitting the snapshot's exit plan (deopt/exit_plan.h):
// its values go to exit_vals (unlinked), or into the registers (linked:
// with reference counting, batched as in the LLVM tier; a plan that builds
// sunk objects through tessera_jit_restore_exit), then a return or a jump
// into the linked trace.
void TraceAssembler::emit_exit(uint16_t snap, const Label& l, uint32_t at) {
  a_.bind(l);
  if (a_.logger()) a_.commentf("; exit through snapshot #%u (guard %04u)", static_cast<unsigned>(snap), static_cast<unsigned>(at));
  const uint32_t saved_cur = cur_;
  cur_ = at;
  const ExitPlan& plan = env_.exit_plan(snap);
  for (const ExitValue& v : plan.values) check_ref(v.ref);
  if (env_.linking.links == nullptr) {
    a_.mov(x86::r11, x86::qword_ptr(x86::rsp, kExitVals));
    for (size_t i = 0; i < plan.values.size(); ++i)
      store_payload(x86::qword_ptr(x86::r11, static_cast<int32_t>(8 * i)), plan.values[i].ref);
    emit_return(snap);
    cur_ = saved_cur;
    return;
  }
  const bool passes = !plan.passed.empty() && env_.linking.reads_passed_link(snap);
  if (plan.builds_objects()) restore_with_helper(plan);
  else write_registers(plan, passes);
  if (passes) jump_passed(plan, snap);
  a_.mov(x86::rax, reinterpret_cast<uint64_t>(env_.linking.links + snap));
  a_.mov(x86::rax, x86::qword_ptr(x86::rax));
  Label back = a_.newLabel();
  a_.test(x86::rax, x86::rax);
  a_.jz(back);
  leave_frame_to_next_trace();
  a_.jmp(x86::rax);
  a_.bind(back);
  emit_return(env_.linking.code_base | snap);
  cur_ = saved_cur;
}

// A plan without objects, inline: new objects gain their reference; one
// test of the OR-ed old tags of the overwritten registers decides whether
// the release helper runs (off the path); then plain stores.
void TraceAssembler::write_registers(const ExitPlan& plan, bool defer_passed) {
  for (const ExitWrite& w : plan.writes) {
    const IRRef v = plan.values[w.value].ref;
    if (static_cast<uint8_t>(tag_for(ir_[v].type)) >= kFirstObjectTag) {
      x86::Gp p = gpr(v, x86::rax);
      a_.add(x86::dword_ptr(p, static_cast<int32_t>(env_.obj_refcount_offset)), 1);
    }
  }
  const std::vector<uint32_t>& unknown = plan.release_checked;
  if (!unknown.empty()) {
    test_object_tags(unknown);
    Label release = a_.newLabel(), done = a_.newLabel();
    a_.jae(release);
    a_.bind(done);
    Label list = slot_list(unknown);
    const uint32_t n = static_cast<uint32_t>(unknown.size());
    const uint32_t at = cur_;
    cold_.push_back([this, release, done, list, n, &plan, at] {
      a_.bind(release);
      const uint32_t saved = cur_;
      cur_ = at;
      save_values(plan, true);
      a_.mov(x86::rdi, kBase);
      a_.lea(x86::rsi, x86::ptr(list));
      a_.mov(x86::edx, n);
      call_addr(reinterpret_cast<const void*>(&tessera_jit_release_slots));
      save_values(plan, false);
      cur_ = saved;
      a_.jmp(done);
    });
  }
  std::vector<bool> deferred(plan.writes.size(), false);
  if (defer_passed)
    for (const PassedValue& p : plan.passed) deferred[p.write] = true;
  for (size_t i = 0; i < plan.writes.size(); ++i)
    if (!deferred[i]) write_register(plan.writes[i], plan);
}

void TraceAssembler::write_register(const ExitWrite& w, const ExitPlan& plan) {
  const IRRef v = plan.values[w.value].ref;
  a_.mov(reg_tag(w.slot), static_cast<uint8_t>(tag_for(ir_[v].type)));
  store_payload(reg_payload(w.slot), v);
}

// After write_registers(plan, true): when the side trace recorded from this
// exit is linked (passed_links), jump into it with the passed values in
// their argument registers (trace_abi.h), leaving their registers in memory
// unwritten (the side trace's exits write them); else write them and go
// on. Floats are moved first: loading a float constant would clobber rax.
void TraceAssembler::jump_passed(const ExitPlan& plan, uint16_t snap) {
  Label write = a_.newLabel();
  a_.mov(x86::r10, reinterpret_cast<uint64_t>(env_.linking.passed_links + snap));
  a_.mov(x86::r10, x86::qword_ptr(x86::r10));
  a_.test(x86::r10, x86::r10);
  a_.jz(write);
  for (const PassedValue& p : plan.passed)
    if (p.reg >= kPassedInts) move_xmm(passed_xmm(p.reg), plan.values[plan.writes[p.write].value].ref);
  for (const PassedValue& p : plan.passed)
    if (p.reg < kPassedInts) move_gpr(passed_gpr(p.reg), plan.values[plan.writes[p.write].value].ref);
  leave_frame_to_next_trace();
  a_.jmp(x86::r10);
  a_.bind(write);
  for (const PassedValue& p : plan.passed) write_register(plan.writes[p.write], plan);
}

// A plan that builds objects: every value goes to the argument buffer and
// one helper runs the plan. Nothing the trace holds in a register is read
// after the call.
void TraceAssembler::restore_with_helper(const ExitPlan& plan) {
  for (size_t i = 0; i < plan.values.size(); ++i)
    store_payload(x86::qword_ptr(x86::rsp, kArgs + 8 * static_cast<int32_t>(i)), plan.values[i].ref);
  a_.mov(x86::rdi, reinterpret_cast<uint64_t>(&plan));
  a_.mov(x86::rsi, kBase);
  a_.lea(x86::rdx, x86::qword_ptr(x86::rsp, kArgs));
  call_addr(reinterpret_cast<const void*>(&tessera_jit_restore_exit));
}

// Saves (or restores) the call-clobbered registers of a plan's values
// around the release helper in an exit stub.
void TraceAssembler::save_values(const ExitPlan& plan, bool save) {
  std::unordered_set<IRRef> done;
  for (const ExitValue& ev : plan.values) {
    const IRRef v = ev.ref;
    if (is_const(v) || ra_.reg[v] == kNoReg || !done.insert(v).second) continue;
    const uint8_t reg = ra_.reg[v];
    if (is_float(v)) {
      if (save) a_.movsd(slot_mem(v), x86::xmm(reg));
      else a_.movsd(x86::xmm(reg), slot_mem(v));
    } else if (!((preserved_mask_ >> reg) & 1u)) {
      if (save) a_.mov(slot_mem(v), x86::gpq(reg));
      else a_.mov(x86::gpq(reg), slot_mem(v));
    }
  }
}

}  // namespace tessera::jit::t1
