// Recursion in the LLVM lowering (lower_state.h): FPUSH, RETGUARD and FPOP
// push and pop the interpreter's own frames in place (FrameRegion,
// trace_abi.h), as the asmjit tier does (docs/jit.md, Recursion). FPUSH and
// FPOP replace base_; JitContext::base is written only before the helper
// calls that read it.
#include <cstddef>
#include <cstdint>

#include "codegen/host/caller_base_distance.h"
#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_value_tags.h"
#include "vm/bytecode/bytecode.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit::t2 {

// The run's FrameRegion, inside the JitContext (trace_abi.h).
llvm::Value* Lowering::frame_region() {
  return field(ctx_, offsetof(JitContext, frames));
}

// FrameRegion::top, kept in SSA from one frame operation to the next (LLVM
// cannot tell that the slot stores in between leave it alone; reloading it
// puts a store-to-load round trip on every return's critical path).
// Forgotten at LOOP (iterations may differ) and at helper calls.
llvm::Value* Lowering::frame_top(llvm::Value* fr) {
  if (top_ == nullptr) top_ = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, top)));
  return top_;
}

void Lowering::set_frame_top(llvm::Value* fr, llvm::Value* top) {
  b_.CreateStore(top, field(fr, offsetof(FrameRegion, top)));
  top_ = top;
}

const FunctionProto* Lowering::const_proto(IRRef r) {
  if (ir_[r].op != IROp::KOBJ || ir_[r].type != IRType::Func) fail("operand must be a function constant");
  return static_cast<const FunctionProto*>(ir_.const_ptr(r));
}

// The new base frame: later slot accesses, exits and helpers use it
// (ctx->base is written only before the helper calls that read it).
void Lowering::set_base(llvm::Value* nb) {
  base_ = nb;
  slot_tags_.clear();  // other registers now
}

void Lowering::push_frame(const IRIns& ins) {
  const FunctionProto* callee = const_proto(ins.op1);
  if (cur_proto_ == nullptr) fail("FPUSH needs the function of the base frame (LoweringEnv::proto)");
  if (ins.snap >= ir_.snapshots().size()) fail("FPUSH without a valid snapshot");
  // The caller resumes after the CALL (snapshot.h).
  const uint32_t ret_pc = fpush_call_pc(ir_.snapshots()[ins.snap]) + 1;
  llvm::Value* fr = frame_region();
  llvm::Value* top = frame_top(fr);
  llvm::Value* limit = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, limit)));
  llvm::Value* callee_base = slot_addr(base_, ins.op2 + 1);
  // Room for the callee's registers and for any trace run from its frame
  // (push_limit accounts for both: FrameRegion).
  llvm::Value* push_limit = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, push_limit)));
  llvm::Value* ok =
      b_.CreateAnd(b_.CreateICmpULT(b_.CreatePtrToInt(top, i64_), b_.CreatePtrToInt(limit, i64_)),
                   b_.CreateICmpULE(b_.CreatePtrToInt(callee_base, i64_), b_.CreatePtrToInt(push_limit, i64_)));
  guard(ok, ins.snap);
  llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -static_cast<int64_t>(sizeof(CallFrame)));
  b_.CreateStore(ptr_const(cur_proto_->code.data() + ret_pc), field(caller, offsetof(CallFrame, pc)));
  b_.CreateStore(ptr_const(callee), field(top, offsetof(CallFrame, proto)));
  b_.CreateStore(ptr_const(callee->code.data()), field(top, offsetof(CallFrame, pc)));
  llvm::Value* stack = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, stack)));
  llvm::Value* index = b_.CreateLShr(b_.CreateSub(b_.CreatePtrToInt(callee_base, i64_), b_.CreatePtrToInt(stack, i64_)), 4);
  b_.CreateStore(b_.CreateTrunc(index, i32_), field(top, offsetof(CallFrame, base)));
  set_frame_top(fr, b_.CreateConstGEP1_64(i8_, top, sizeof(CallFrame)));
  set_base(callee_base);
  cur_proto_ = callee;
}

void Lowering::return_guard(const IRIns& ins) {
  const FunctionProto* caller_proto = const_proto(ins.op1);
  llvm::Value* fr = frame_region();
  llvm::Value* top = frame_top(fr);
  llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -2 * static_cast<int64_t>(sizeof(CallFrame)));
  // The caller is the expected one: its resume pc names the function too
  // (no two functions share code). With only one frame this reads the
  // sentinel below the bottom frame, whose pc is null (CallFrameStack).
  llvm::Value* pc = b_.CreateLoad(ptr_, field(caller, offsetof(CallFrame, pc)));
  guard(b_.CreateICmpEQ(pc, ptr_const(caller_proto->code.data() + ins.op2)), ins.snap);
  returning_to_ = caller_proto;
  returning_pc_ = ins.op2;
}

void Lowering::pop_frame(const IRIns& ins) {
  if (cur_proto_ == nullptr || returning_to_ == nullptr)
    fail("FPOP needs the function of the base frame and a RETGUARD before it");
  // As RET: the caller's CALL register gets the result (its reference
  // taken before the callee's registers let go of theirs), the callee's
  // objects are released, the frame is popped.
  store_value(b_.CreateConstGEP1_64(i8_, base_, -static_cast<int64_t>(kValueSize)), ins.op1);
  // One test of all the callee's registers whose tag is not known (their
  // tags OR-ed, as in write_registers); the helper clears them only when
  // some register holds an object.
  const uint32_t n = static_cast<uint32_t>(cur_proto_->nregs);
  llvm::Value* tags = nullptr;
  for (uint32_t i = 0; i < n && n <= 64; ++i) {
    auto known = slot_tags_.find(i);
    if (known != slot_tags_.end() && known->second < static_cast<uint8_t>(Tag::Str)) continue;
    llvm::Value* t = b_.CreateLoad(i8_, slot_addr(base_, i));
    tags = tags ? b_.CreateOr(tags, t) : t;
  }
  const TraceHelper& clear = trace_helper("tessera_jit_clear_registers");
  if (n > 64) {
    call_helper(clear, {base_, llvm::ConstantInt::get(i32_, n)});
  } else {
    if_objects(tags, "pop.clear", [&] { call_helper(clear, {base_, llvm::ConstantInt::get(i32_, n)}); });
  }
  llvm::Value* fr = frame_region();
  llvm::Value* top = frame_top(fr);
  set_frame_top(fr, b_.CreateConstGEP1_64(i8_, top, -static_cast<int64_t>(sizeof(CallFrame))));
  const int64_t below = caller_base_distance(*returning_to_, returning_pc_);
  if (below > 0) {
    set_base(b_.CreateConstGEP1_64(i8_, base_, -below * static_cast<int64_t>(kValueSize)));
  } else {
    llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -2 * static_cast<int64_t>(sizeof(CallFrame)));
    llvm::Value* index = b_.CreateZExt(b_.CreateLoad(i32_, field(caller, offsetof(CallFrame, base))), i64_);
    llvm::Value* stack = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, stack)));
    set_base(b_.CreateGEP(i8_, stack, b_.CreateShl(index, 4)));
  }
  cur_proto_ = returning_to_;
  returning_to_ = nullptr;
}

}  // namespace tessera::jit::t2
