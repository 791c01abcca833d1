// Helper calls of the LLVM lowering (lower_state.h): the C helpers of
// trace_abi.h, whose addresses are embedded as constants. All memory
// effects on interpreter state that generated code does not do inline go
// through them; none throws (each catches everything).
#include <llvm/IR/MDBuilder.h>

#include <string>
#include <vector>

#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/trace_abi.h"
#include "tracer/ir_value_tags.h"

namespace tessera::jit::t2 {

llvm::CallInst* Lowering::call_addr(const void* fn, llvm::FunctionType* fty, llvm::ArrayRef<llvm::Value*> args,
                                    bool pure) {
  llvm::CallInst* ci = b_.CreateCall(fty, ptr_const(fn), args);
  ci->setDoesNotThrow();
  if (pure) {
    // Pure scalar functions: lets LLVM CSE and hoist them.
    ci->setDoesNotAccessMemory();
    ci->addFnAttr(llvm::Attribute::WillReturn);
  }
  return ci;
}

llvm::Value* Lowering::call_ff(double (*fn)(double, double), llvm::Value* a, llvm::Value* b) {
  auto* fty = llvm::FunctionType::get(f64_, {f64_, f64_}, false);
  return call_addr(reinterpret_cast<const void*>(fn), fty, {a, b}, true);
}

llvm::Value* Lowering::call_f(double (*fn)(double), llvm::Value* a) {
  auto* fty = llvm::FunctionType::get(f64_, {f64_}, false);
  return call_addr(reinterpret_cast<const void*>(fn), fty, {a}, true);
}

llvm::Value* Lowering::lower_call(const IRIns& ins) {
  if (ins.op2 >= env_.calls.size()) fail("call table index " + std::to_string(ins.op2) + " out of range");
  const std::vector<IRRef> args = carg_list(ir_, ins.op1);
  const uint32_t n = static_cast<uint32_t>(args.size());

  // Argument buffers live in the entry block's frame, so a call inside the
  // loop does not grow the stack on each iteration.
  llvm::IRBuilder<> ab(entry_, entry_->begin());
  const uint32_t cap = n == 0 ? 1 : n;
  llvm::Value* tags = ab.CreateAlloca(llvm::ArrayType::get(i8_, cap), nullptr, "call.tags");
  llvm::Value* pays = ab.CreateAlloca(llvm::ArrayType::get(i64_, cap), nullptr, "call.payloads");
  llvm::Value* result = ab.CreateAlloca(i64_, nullptr, "call.result");
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t tag = static_cast<uint8_t>(tag_for(type_of_ref(args[i])));
    b_.CreateStore(llvm::ConstantInt::get(i8_, tag), b_.CreateConstInBoundsGEP1_64(i8_, tags, i));
    b_.CreateStore(to_payload(value_of(args[i])), b_.CreateConstInBoundsGEP1_64(i64_, pays, i));
  }
  const uint8_t expect = ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type));
  auto* fty = llvm::FunctionType::get(i8_, {ptr_, ptr_, ptr_, ptr_, i32_, i8_, ptr_}, false);
  // The helper writes its result register through ctx->base, which frame
  // pushes and pops leave stale (trace_abi.h): bring it up to date here.
  b_.CreateStore(base_, field(ctx_, offsetof(JitContext, base)));
  top_ = nullptr;  // see frame_top()
  llvm::CallInst* ci = call_addr(
      reinterpret_cast<const void*>(&tessera_jit_call), fty,
      {ctx_, ptr_const(env_.calls[ins.op2]), tags, pays, llvm::ConstantInt::get(i32_, n),
       llvm::ConstantInt::get(i8_, expect), result},
      false);
  ci->addParamAttr(5, llvm::Attribute::ZExt);
  ci->addRetAttr(llvm::Attribute::ZExt);
  guard(b_.CreateICmpNE(ci, llvm::ConstantInt::get(i8_, 0)), ins.snap);
  if (ins.type == IRType::None) return nullptr;
  return from_payload(b_.CreateLoad(i64_, result), ins.type);
}

// A store into a global that a trace assumed constant invalidates that
// trace: the watch byte is read when the store runs (traces compiled
// later may watch globals this trace stores).
void Lowering::report_global_store(uint32_t index) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* report = llvm::BasicBlock::Create(c_, "global.watched", fn);
  auto* done = llvm::BasicBlock::Create(c_, "global.done", fn);
  llvm::Value* w = b_.CreateLoad(i8_, byte_gep(ptr_const(env_.global_watch), index));
  llvm::MDBuilder md(c_);
  b_.CreateCondBr(b_.CreateICmpNE(w, llvm::ConstantInt::get(i8_, 0)), report, done,
                  md.createBranchWeights(1, 1u << 10));
  b_.SetInsertPoint(report);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr_, i32_}, false);
  call_addr(reinterpret_cast<const void*>(&tessera_jit_global_stored), fty,
            {ctx_, llvm::ConstantInt::get(i32_, index)}, false);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

}  // namespace tessera::jit::t2
