// Helper calls of the LLVM lowering (lower_state.h): the C helpers of
// trace_abi.h, whose addresses are embedded as constants. All memory
// effects on interpreter state that generated code does not do inline go
// through them; none throws (each catches everything).
#include <llvm/IR/MDBuilder.h>

#include <string>
#include <vector>

#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_value_tags.h"

namespace tessera::jit::t2 {

llvm::Type* Lowering::helper_type(HelperType t) {
  switch (t) {
    case HelperType::Void: return llvm::Type::getVoidTy(c_);
    case HelperType::I8: return i8_;
    case HelperType::I32: return i32_;
    case HelperType::I64: return i64_;
    case HelperType::F64: return f64_;
    case HelperType::Ptr: return ptr_;
  }
  fail("unknown helper type");
}

// A call of helper `h` (trace_helpers.h): its signature from the table,
// bools and tags zero-extended (the C ABI's), pure ones free to CSE and hoist.
llvm::CallInst* Lowering::call_helper(const TraceHelper& h, llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> params;
  for (uint8_t i = 0; i < h.nargs; ++i) params.push_back(helper_type(h.types[i]));
  auto* fty = llvm::FunctionType::get(helper_type(h.ret), params, false);
  llvm::CallInst* ci = b_.CreateCall(fty, ptr_const(h.address), args);
  ci->setDoesNotThrow();
  if (h.pure) {
    ci->setDoesNotAccessMemory();
    ci->addFnAttr(llvm::Attribute::WillReturn);
  }
  for (uint8_t i = 0; i < h.nargs; ++i)
    if (h.types[i] == HelperType::I8) ci->addParamAttr(i, llvm::Attribute::ZExt);
  if (h.ret == HelperType::I8) ci->addRetAttr(llvm::Attribute::ZExt);
  return ci;
}

// Every helper-call instruction (ir.def's HELPER column): its arguments by
// the table's sources, then its result or the guard on its success.
llvm::Value* Lowering::lower_helper_call(const IRIns& ins, const TraceHelper& h) {
  const bool calls_target = ins.op == IROp::CALL;
  if (calls_target && ins.op2 >= env_.calls.size())
    fail("call table index " + std::to_string(ins.op2) + " out of range");
  // A CALL's arguments go through buffers in the entry block's frame, so a
  // call inside the loop does not grow the stack on each iteration.
  llvm::Value* tags = nullptr;
  llvm::Value* pays = nullptr;
  llvm::Value* result = nullptr;
  uint32_t n = 0;
  if (calls_target) {
    const std::vector<IRRef> args = carg_list(ir_, ins.op1);
    n = static_cast<uint32_t>(args.size());
    llvm::IRBuilder<> ab(entry_, entry_->begin());
    const uint32_t cap = n == 0 ? 1 : n;
    tags = ab.CreateAlloca(llvm::ArrayType::get(i8_, cap), nullptr, "call.tags");
    pays = ab.CreateAlloca(llvm::ArrayType::get(i64_, cap), nullptr, "call.payloads");
    result = ab.CreateAlloca(i64_, nullptr, "call.result");
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t tag = static_cast<uint8_t>(tag_for(type_of_ref(args[i])));
      b_.CreateStore(llvm::ConstantInt::get(i8_, tag), b_.CreateConstInBoundsGEP1_64(i8_, tags, i));
      b_.CreateStore(to_payload(value_of(args[i])), b_.CreateConstInBoundsGEP1_64(i64_, pays, i));
    }
  }
  auto operand = [&](IRRef r, HelperType t) {
    llvm::Value* v = value_of(r);
    return t == HelperType::I64 ? to_payload(v) : v;
  };
  std::vector<llvm::Value*> args;
  for (uint8_t i = 0; i < h.nargs; ++i) {
    switch (h.args[i]) {
      case HelperArg::Op1: args.push_back(operand(ins.op1, h.types[i])); break;
      case HelperArg::Op2: args.push_back(operand(ins.op2, h.types[i])); break;
      case HelperArg::Op2Tag:
        args.push_back(llvm::ConstantInt::get(i8_, static_cast<uint8_t>(tag_for(ir_[ins.op2].type))));
        break;
      case HelperArg::Ctx:
        // The helper writes its result register through ctx->base, which
        // frame pushes and pops leave stale (trace_abi.h): bring it up to date.
        b_.CreateStore(base_, field(ctx_, offsetof(JitContext, base)));
        top_ = nullptr;  // see frame_top()
        args.push_back(ctx_);
        break;
      case HelperArg::Target: args.push_back(ptr_const(env_.calls[ins.op2])); break;
      case HelperArg::ArgTags: args.push_back(tags); break;
      case HelperArg::ArgPayloads: args.push_back(pays); break;
      case HelperArg::ArgCount: args.push_back(llvm::ConstantInt::get(i32_, n)); break;
      case HelperArg::ExpectTag: {
        const uint8_t expect = ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type));
        args.push_back(llvm::ConstantInt::get(i8_, expect));
        break;
      }
      case HelperArg::ResultOut: args.push_back(result); break;
      case HelperArg::Internal: fail(std::string(h.name) + " is not called for an instruction");
    }
    if (args.back() == nullptr) fail(std::string(h.name) + ": argument " + std::to_string(i) + " has no source here");
  }
  llvm::CallInst* ci = call_helper(h, args);
  if (h.result == HelperResult::Value)
    return h.ret == HelperType::I8 ? b_.CreateICmpNE(ci, llvm::ConstantInt::get(i8_, 0)) : ci;  // a C bool: i1
  if (h.result == HelperResult::Ok) guard(b_.CreateICmpNE(ci, llvm::ConstantInt::get(i8_, 0)), ins.snap);
  if (result == nullptr || ins.type == IRType::None) return nullptr;
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
  call_helper(trace_helper("tessera_jit_global_stored"), {ctx_, llvm::ConstantInt::get(i32_, index)});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

}  // namespace tessera::jit::t2
