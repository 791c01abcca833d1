// The T1 assembler's recursion (asm_state.h): FPUSH, RETGUARD and FPOP push
// and pop the interpreter's own frames in place (FrameRegion, trace_abi.h),
// as the LLVM tier does (docs/jit.md, Recursion). FPUSH and FPOP move kBase
// to the new base frame; JitContext::base is written only before the helper
// calls that read it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/caller_base_distance.h"
#include "codegen/host/trace_abi.h"
#include "vm/bytecode/bytecode.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit::t1 {

using namespace asmjit;
using x86::CondCode;

const FunctionProto* TraceAssembler::const_proto(IRRef r) {
  if (r >= ir_.size() || ir_[r].op != IROp::KOBJ || ir_[r].type != IRType::Func)
    fail("operand must be a function constant");
  return static_cast<const FunctionProto*>(ir_.const_ptr(r));
}

// rdx = &ctx->frames (the run's FrameRegion, trace_abi.h)
void TraceAssembler::load_frames() {
  a_.mov(x86::rdx, x86::qword_ptr(x86::rsp, kCtx));
  a_.add(x86::rdx, static_cast<int32_t>(offsetof(JitContext, frames)));
}

// (ctx->base is written only before the helper calls that read it.)
void TraceAssembler::set_base_from(const x86::Gp& nb) {
  if (nb.id() != kBase.id()) a_.mov(kBase, nb);
  slot_tags_.clear();  // other registers now
}

void TraceAssembler::push_frame(const IRIns& ins) {
  const FunctionProto* callee = const_proto(ins.op1);
  if (cur_proto_ == nullptr) fail("FPUSH needs the function of the base frame (LoweringEnv::proto)");
  if (ins.snap >= ir_.snapshots().size()) fail("FPUSH without a valid snapshot");
  const uint32_t ret_pc = fpush_call_pc(ir_.snapshots()[ins.snap]) + 1;  // after the CALL (snapshot.h)
  const int32_t callee_off = static_cast<int32_t>(ins.op2 + 1) * kValueSize;
  load_frames();
  // Room for a frame and for the callee's registers and any trace run
  // from its frame: top < limit, callee_base <= push_limit.
  a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
  a_.cmp(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, limit))));
  jump_to_exit(CondCode::kAE, ins.snap);
  a_.lea(x86::r11, x86::ptr(kBase, callee_off));
  a_.cmp(x86::r11, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, push_limit))));
  jump_to_exit(CondCode::kA, ins.snap);
  // caller = top - 1 frame: its pc resumes after the CALL.
  constexpr int32_t kFrame = sizeof(CallFrame);
  a_.mov(x86::r10, reinterpret_cast<uint64_t>(cur_proto_->code.data() + ret_pc));
  a_.mov(x86::qword_ptr(x86::rax, -kFrame + static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
  a_.mov(x86::r10, reinterpret_cast<uint64_t>(callee));
  a_.mov(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, proto))), x86::r10);
  a_.mov(x86::r10, reinterpret_cast<uint64_t>(callee->code.data()));
  a_.mov(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
  // base index = (callee_base - stack) / 16
  a_.mov(x86::r10, x86::r11);
  a_.sub(x86::r10, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, stack))));
  a_.shr(x86::r10, 4);
  a_.mov(x86::dword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, base))), x86::r10d);
  a_.add(x86::rax, kFrame);
  a_.mov(x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))), x86::rax);
  set_base_from(x86::r11);
  cur_proto_ = callee;
}

void TraceAssembler::return_guard(const IRIns& ins) {
  const FunctionProto* caller_proto = const_proto(ins.op1);
  constexpr int32_t kFrame = sizeof(CallFrame);
  load_frames();
  // The caller is the expected one: its resume pc names the function too
  // (no two functions share code). With only one frame this reads the
  // sentinel below the bottom frame, whose pc is null (CallFrameStack).
  a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
  a_.sub(x86::rax, 2 * kFrame);
  a_.mov(x86::r10, reinterpret_cast<uint64_t>(caller_proto->code.data() + ins.op2));
  a_.cmp(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
  jump_to_exit(CondCode::kNE, ins.snap);
  returning_to_ = caller_proto;
  returning_pc_ = ins.op2;
}

void TraceAssembler::pop_frame(IRRef r, const IRIns& ins) {
  if (cur_proto_ == nullptr || returning_to_ == nullptr)
    fail("FPOP needs the function of the base frame and a RETGUARD before it");
  // As RET: the caller's CALL register gets the result, the callee's
  // objects are released, the frame is popped.
  store_value(x86::byte_ptr(kBase, -kValueSize), x86::qword_ptr(kBase, -kValueSize + 8), ins.op1);
  const uint32_t n = static_cast<uint32_t>(cur_proto_->nregs);
  std::vector<uint32_t> unknown;
  for (uint32_t i = 0; i < n; ++i) {
    auto known = slot_tags_.find(i);
    if (n <= 64 && known != slot_tags_.end() && known->second < kFirstObjectTag) continue;
    unknown.push_back(i);
  }
  if (!unknown.empty()) {
    Label clear = a_.newLabel(), done = a_.newLabel();
    if (n > 64) {
      a_.jmp(clear);
    } else {
      test_object_tags(unknown);
      a_.jae(clear);
    }
    a_.bind(done);
    cold_.push_back([this, clear, done, r, n] {
      a_.bind(clear);
      save_live(r + 1);
      a_.mov(x86::rdi, kBase);
      a_.mov(x86::esi, n);
      call_addr(reinterpret_cast<const void*>(&tessera_jit_clear_registers));
      restore_live(r + 1);
      a_.jmp(done);
    });
  }
  constexpr int32_t kFrame = sizeof(CallFrame);
  load_frames();
  a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
  a_.sub(x86::rax, kFrame);
  a_.mov(x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))), x86::rax);
  // The caller's base: a fixed distance below when a CALL pushed the frame
  // (caller_base_distance), else read from the caller's frame.
  if (const uint32_t below = caller_base_distance(*returning_to_, returning_pc_); below > 0) {
    a_.sub(kBase, static_cast<int32_t>(below) * kValueSize);
    set_base_from(kBase);
  } else {
    a_.mov(x86::r10d, x86::dword_ptr(x86::rax, -kFrame + static_cast<int32_t>(offsetof(CallFrame, base))));
    a_.shl(x86::r10, 4);
    a_.add(x86::r10, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, stack))));
    set_base_from(x86::r10);
  }
  cur_proto_ = returning_to_;
  returning_to_ = nullptr;
}

}  // namespace tessera::jit::t1
