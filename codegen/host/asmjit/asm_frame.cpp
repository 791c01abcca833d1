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
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/slot_tags.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"

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

// Every helper-call instruction (ir.def's HELPER column) through the C ABI:
// the arguments by the table's sources (trace_helpers.h) into the integer
// and float argument registers in order, the seventh integer one on the
// stack; then the value in rax or xmm0, or the exit when the helper
// reports a failure. A CALL's arguments go through the frame's buffers
// (tags and payloads) and its result through kResult.
void TraceAssembler::lower_helper_call(IRRef r, const IRIns& ins, const TraceHelper& h) {
  static const x86::Gp kIntArgs[] = {x86::rdi, x86::rsi, x86::rdx, x86::rcx, x86::r8, x86::r9};
  static const x86::Xmm kFloatArgs[] = {x86::xmm0, x86::xmm1};
  const bool calls_target = ins.op == IROp::CALL;
  if (calls_target && ins.op2 >= env_.calls.size()) fail("call table index " + std::to_string(ins.op2) + " out of range");
  save_live(r);
  uint32_t n = 0;
  if (calls_target) {
    const std::vector<IRRef> args = carg_list(ir_, ins.op1);
    n = static_cast<uint32_t>(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      check_ref(args[i]);
      const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[args[i]].type));
      a_.mov(x86::byte_ptr(x86::rsp, tags_off_ + static_cast<int32_t>(i)), tag);
      load_arg(x86::rax, args[i]);  // a float's bits: saved by save_live, or spilled
      a_.mov(x86::qword_ptr(x86::rsp, kArgs + 8 * static_cast<int32_t>(i)), x86::rax);
    }
  }
  // Which register each argument takes; the stack argument is written
  // first, as rax carries it.
  uint8_t ints = 0, floats = 0;
  std::array<int8_t, TraceHelper::kMaxArgs> reg{};
  for (uint8_t i = 0; i < h.nargs; ++i) reg[i] = static_cast<int8_t>(h.types[i] == HelperType::F64 ? floats++ : ints++);
  if (floats > std::size(kFloatArgs) || ints > std::size(kIntArgs) + 1) fail(std::string(h.name) + ": too many arguments");
  for (uint8_t i = 0; i < h.nargs; ++i) {
    if (h.types[i] == HelperType::F64 || reg[i] < static_cast<int8_t>(std::size(kIntArgs))) continue;
    if (h.args[i] != HelperArg::ResultOut) fail(std::string(h.name) + ": only the result's address goes on the stack");
    a_.lea(x86::rax, x86::qword_ptr(x86::rsp, kResult));
    a_.mov(x86::qword_ptr(x86::rsp, kOutArg), x86::rax);
  }
  for (uint8_t i = 0; i < h.nargs; ++i) {
    if (h.types[i] == HelperType::F64) {
      load_float_arg(kFloatArgs[reg[i]], h.args[i] == HelperArg::Op1 ? ins.op1 : ins.op2);
      continue;
    }
    if (reg[i] >= static_cast<int8_t>(std::size(kIntArgs))) continue;  // on the stack
    const x86::Gp d = kIntArgs[reg[i]];
    switch (h.args[i]) {
      case HelperArg::Op1: load_arg(d, ins.op1); break;
      case HelperArg::Op2: load_arg(d, ins.op2); break;  // a float's bits: saved by save_live, or spilled
      case HelperArg::Op2Tag: a_.mov(d.r32(), static_cast<uint32_t>(tag_for(ir_[ins.op2].type))); break;
      case HelperArg::Ctx:
        // The helper writes its result register through ctx->base, which
        // frame pushes and pops leave stale (trace_abi.h): bring it up to date.
        a_.mov(d, x86::qword_ptr(x86::rsp, kCtx));
        a_.mov(x86::qword_ptr(d, static_cast<int32_t>(offsetof(JitContext, base))), kBase);
        break;
      case HelperArg::Target: a_.mov(d, reinterpret_cast<uint64_t>(env_.calls[ins.op2])); break;
      case HelperArg::ArgTags: a_.lea(d, x86::qword_ptr(x86::rsp, tags_off_)); break;
      case HelperArg::ArgPayloads: a_.lea(d, x86::qword_ptr(x86::rsp, kArgs)); break;
      case HelperArg::ArgCount: a_.mov(d.r32(), n); break;
      case HelperArg::ExpectTag:
        a_.mov(d.r32(), ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type)));
        break;
      case HelperArg::ResultOut:
      case HelperArg::Internal: fail(std::string(h.name) + ": argument " + std::to_string(i) + " has no source here");
    }
  }
  call_addr(h.address);
  restore_live(r);  // movs leave the flags alone
  if (h.result == HelperResult::Value) {
    if (h.ret == HelperType::F64) {
      commit(r, x86::xmm0);
      return;
    }
    // A C bool is defined in al only: the IR's bool is the whole register, 0 or 1.
    if (h.ret == HelperType::I8) a_.movzx(x86::eax, x86::al);
    commit(r, x86::rax);
    return;
  }
  if (h.result == HelperResult::Ok) {
    a_.test(x86::al, x86::al);
    jump_to_exit(CondCode::kZ, ins.snap);
  }
  // The helper wrote its result slot (if any) whatever the CALL's type.
  update_slot_tags(slot_tags_, ir_, ins);
  if (!calls_target || ins.type == IRType::None) return;
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
}

}  // namespace tessera::jit::t1
