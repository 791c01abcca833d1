// The T1 assembler's machine frame (asm_state.h): the C entry wrapper, the
// trace's prologue and frame layout, returns and the jump into a linked
// trace, and calls of C helpers with the save and restore of the values that
// live in call-clobbered registers across them.
//
// A trace runs in LLVM's preserve_none convention (trace_abi.h): it saves
// nothing of its caller's, so a hop from trace to trace is a jump. Its
// frame holds the arguments kept in memory, a helper call's argument
// buffer, and one slot per value, where spilled values live and where
// call-clobbered registers are saved around helper calls (only the values
// live across the call, and only those not in rbx or r13-r15).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/trace_abi.h"

namespace tessera::jit::t1 {

using namespace asmjit;
using x86::CondCode;

// The C-convention wrapper: rbx and r12-r15 are the C callee-saved
// registers the trace may use (it leaves rbp alone); five pushes keep the
// stack 16-aligned at the call.
void TraceAssembler::emit_entry_wrapper(const Label& native, const Label& entry) {
  static const x86::Gp kSaved[] = {x86::rbx, x86::r12, x86::r13, x86::r14, x86::r15};
  a_.bind(entry);
  for (const x86::Gp& g : kSaved) a_.push(g);
  a_.mov(x86::r12, x86::rdi);
  a_.mov(x86::r13, x86::rsi);
  a_.mov(x86::r14, x86::rdx);
  a_.mov(x86::r15, x86::rcx);
  a_.call(native);
  for (auto g = std::rbegin(kSaved); g != std::rend(kSaved); ++g) a_.pop(*g);
  a_.ret();
}

// The frame's layout (asm_state.h): the argument buffer holds the
// arguments of the largest CALL and the values of the largest exit that
// builds objects; then one slot per value.
void TraceAssembler::layout_frame() {
  max_args_ = 1;
  for (IRRef r = 0; r < ir_.size(); ++r)  // a CALL's arguments
    if (ir_[r].op == IROp::CALL) max_args_ = std::max(max_args_, static_cast<uint32_t>(carg_list(ir_, ir_[r].op1).size()));
  for (const ExitPlan& p : *env_.exit_plans)  // the values of an exit that builds objects
    if (p.builds_objects()) max_args_ = std::max(max_args_, static_cast<uint32_t>(p.values.size()));
  tags_off_ = kArgs + 8 * static_cast<int32_t>(max_args_);
  spill_base_ = tags_off_ + static_cast<int32_t>((max_args_ + 7) / 8 * 8);
  frame_ = spill_base_ + 8 * static_cast<int32_t>(ra_.num_slots);
  if (frame_ % 16 != 8) frame_ += 8;  // rsp is 16-aligned inside (entered at 8 mod 16)
}

// The trace's own entry (NativeTrace): its frame, and the arguments that
// live in it (globals, exit_vals, ctx; base stays in r12). A trace that
// takes passed values (trace_abi.h) is entered at `passed` with them in
// their argument registers, and at `native` loads them from memory first;
// either way each then moves to its own location (a register the allocator
// gave it from position 0, or its frame slot). Their argument registers
// are scratch here: no move overwrites another's source.
void TraceAssembler::emit_prologue(const Label& native, const Label& passed) {
  a_.bind(native);
  std::vector<IRRef> passed_loads;
  for (IRRef r = 0; r < ir_.size(); ++r)
    if (sload_passed(ir_[r])) passed_loads.push_back(r);
  for (IRRef r : passed_loads) {
    const uint32_t i = sload_passed_reg(ir_[r]);
    const x86::Mem payload = reg_payload(ir_[r].op1);
    if (i < kPassedInts) a_.mov(passed_gpr(i), payload);
    else a_.movsd(passed_xmm(i), payload);
  }
  a_.bind(passed);
  a_.sub(x86::rsp, frame_);
  a_.mov(x86::qword_ptr(x86::rsp, kGlobals), x86::r13);
  a_.mov(x86::qword_ptr(x86::rsp, kExitVals), x86::r14);
  a_.mov(x86::qword_ptr(x86::rsp, kCtx), x86::r15);
  for (IRRef r : passed_loads) {
    const uint32_t i = sload_passed_reg(ir_[r]);
    if (i < kPassedInts) commit(r, passed_gpr(i));
    else commit(r, passed_xmm(i));
  }
}

x86::Gp TraceAssembler::passed_gpr(uint32_t i) {
  static const x86::Gp kRegs[kPassedInts] = {x86::rdx, x86::r11, x86::rax};
  return kRegs[i];
}

x86::Xmm TraceAssembler::passed_xmm(uint32_t i) {
  static const x86::Xmm kRegs[kPassedFloats] = {x86::xmm0, x86::xmm1};
  return kRegs[i - kPassedInts];
}

// Returns `code` (the exit code, trace_abi.h) to the trace's caller.
void TraceAssembler::emit_return(uint32_t code) {
  a_.mov(x86::eax, code);
  a_.add(x86::rsp, frame_);
  a_.ret();
}

// Before a linked exit jumps into the next trace: its arguments back in
// r13-r15 (base is in r12), and the frame gone.
void TraceAssembler::leave_frame_to_next_trace() {
  a_.mov(x86::r13, x86::qword_ptr(x86::rsp, kGlobals));
  a_.mov(x86::r14, x86::qword_ptr(x86::rsp, kExitVals));
  a_.mov(x86::r15, x86::qword_ptr(x86::rsp, kCtx));
  a_.add(x86::rsp, frame_);
}

// Values live across position `at` in registers a C call clobbers.
template <typename F>
void TraceAssembler::for_clobbered_live(uint32_t at, F f) {
  for (const LiveInterval& iv : lv_.intervals) {
    if (iv.start >= at || iv.end < at) continue;
    const uint8_t reg = ra_.reg[iv.ref];
    if (reg == kNoReg) continue;
    if (iv.cls == RegClass::Gpr && ((preserved_mask_ >> reg) & 1u)) continue;
    f(iv);
  }
}

void TraceAssembler::save_live(uint32_t at) {
  for_clobbered_live(at, [&](const LiveInterval& iv) {
    if (iv.cls == RegClass::Gpr) a_.mov(slot_mem(iv.ref), x86::gpq(ra_.reg[iv.ref]));
    else a_.movsd(slot_mem(iv.ref), x86::xmm(ra_.reg[iv.ref]));
  });
}

void TraceAssembler::restore_live(uint32_t at) {
  for_clobbered_live(at, [&](const LiveInterval& iv) {
    if (iv.cls == RegClass::Gpr) a_.mov(x86::gpq(ra_.reg[iv.ref]), slot_mem(iv.ref));
    else a_.movsd(x86::xmm(ra_.reg[iv.ref]), slot_mem(iv.ref));
  });
}

// After save_live: an operand for a C argument register, read from where
// it survives (a preserved register, its slot, or a constant).
void TraceAssembler::load_arg(const x86::Gp& dst, IRRef v) {
  check_ref(v);
  if (is_const(v)) {
    const uint64_t bits = const_bits(v);
    if (bits == 0) a_.xor_(dst.r32(), dst.r32());
    else a_.mov(dst, bits);
  } else if (is_float(v)) {
    a_.mov(dst, slot_mem(v));
  } else if (ra_.reg[v] != kNoReg && ((preserved_mask_ >> ra_.reg[v]) & 1u)) {
    a_.mov(dst, x86::gpq(ra_.reg[v]));
  } else {
    a_.mov(dst, slot_mem(v));
  }
}

void TraceAssembler::load_float_arg(const x86::Xmm& dst, IRRef v) {
  check_ref(v);
  if (!is_float(v)) fail("operand " + std::to_string(v) + " is not a float");
  if (is_const(v)) xmm(v, dst);
  else a_.movsd(dst, slot_mem(v));  // saved by save_live, or spilled
}

void TraceAssembler::call_addr(const void* fn) {
  a_.mov(x86::rax, reinterpret_cast<uint64_t>(fn));
  a_.call(x86::rax);
}

// int64 f(int64, int64) or double f(double[, double]) through the C ABI.
void TraceAssembler::lower_scalar_call(IRRef r, const IRIns& ins, const void* fn, int nargs, bool floats) {
  save_live(r);
  if (floats) {
    load_float_arg(x86::xmm0, ins.op1);
    if (nargs == 2) load_float_arg(x86::xmm1, ins.op2);
  } else {
    load_arg(x86::rdi, ins.op1);
    if (nargs == 2) load_arg(x86::rsi, ins.op2);
  }
  call_addr(fn);
  restore_live(r);
  if (floats) commit(r, x86::xmm0);
  else commit(r, x86::rax);
}

// LPUSH: tessera_jit_list_push(list, payload, tag); false (out of memory)
// exits through the LPUSH's snapshot.
void TraceAssembler::lower_list_push(IRRef r, const IRIns& ins) {
  save_live(r);
  load_arg(x86::rdi, ins.op1);
  load_arg(x86::rsi, ins.op2);  // a float's bits: saved by save_live, or spilled
  a_.mov(x86::edx, static_cast<uint32_t>(tag_for(ir_[ins.op2].type)));
  call_addr(reinterpret_cast<const void*>(&tessera_jit_list_push));
  restore_live(r);  // movs leave the flags alone
  a_.test(x86::al, x86::al);
  jump_to_exit(CondCode::kZ, ins.snap);
}

// CALL: tessera_jit_call (trace_abi.h) with the arguments' tags and
// payloads in the frame's buffer and the result in kResult; it fails (the
// trace exits through the CALL's snapshot) when the callee raises or its
// result is not of the expected type.
void TraceAssembler::lower_call(IRRef r, const IRIns& ins) {
  if (ins.op2 >= env_.calls.size()) fail("call table index " + std::to_string(ins.op2) + " out of range");
  const std::vector<IRRef> args = carg_list(ir_, ins.op1);
  save_live(r);
  for (size_t i = 0; i < args.size(); ++i) {
    check_ref(args[i]);
    const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[args[i]].type));
    a_.mov(x86::byte_ptr(x86::rsp, tags_off_ + static_cast<int32_t>(i)), tag);
    load_arg(x86::rax, args[i]);  // a float's bits: saved by save_live, or spilled
    a_.mov(x86::qword_ptr(x86::rsp, kArgs + 8 * static_cast<int32_t>(i)), x86::rax);
  }
  const uint8_t expect = ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type));
  a_.lea(x86::rax, x86::qword_ptr(x86::rsp, kResult));
  a_.mov(x86::qword_ptr(x86::rsp, kOutArg), x86::rax);
  a_.mov(x86::rdi, x86::qword_ptr(x86::rsp, kCtx));
  // The helper writes its result register through ctx->base, which frame
  // pushes and pops leave stale (trace_abi.h): bring it up to date here.
  a_.mov(x86::qword_ptr(x86::rdi, static_cast<int32_t>(offsetof(JitContext, base))), kBase);
  a_.mov(x86::rsi, reinterpret_cast<uint64_t>(env_.calls[ins.op2]));
  a_.lea(x86::rdx, x86::qword_ptr(x86::rsp, tags_off_));
  a_.lea(x86::rcx, x86::qword_ptr(x86::rsp, kArgs));
  a_.mov(x86::r8d, static_cast<uint32_t>(args.size()));
  a_.mov(x86::r9d, expect);
  call_addr(reinterpret_cast<const void*>(&tessera_jit_call));
  restore_live(r);  // movs leave the flags alone
  a_.test(x86::al, x86::al);
  jump_to_exit(CondCode::kZ, ins.snap);
  if (ins.type == IRType::None) return;
  if (ins.type == IRType::Float) {
    const x86::Xmm d = def_xmm(r);
    a_.movsd(d, x86::qword_ptr(x86::rsp, kResult));
    commit(r, d);
  } else {
    const x86::Gp d = def_gpr(r);
    if (ins.type == IRType::Bool) a_.movzx(d.r32(), x86::byte_ptr(x86::rsp, kResult));
    else a_.mov(d, x86::qword_ptr(x86::rsp, kResult));
    commit(r, d);
  }
  if (env_.calls[ins.op2]->dest_slot >= 0) slot_tags_.erase(static_cast<uint32_t>(env_.calls[ins.op2]->dest_slot));
}

}  // namespace tessera::jit::t1
