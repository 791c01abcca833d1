// Trace IR -> LLVM IR: the main loop (lower_state.h has the shape of the
// generated function and lists the other parts). One walk over the trace
// in order: constants are materialized on use, PHIs are wired up at LOOP and
// at the latch, every other instruction becomes LLVM instructions whose
// result is the instruction's value.
#include "codegen/host/llvm/ir_lowering.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Intrinsics.h>

#include <iterator>
#include <stdexcept>
#include <string>

#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/slot_tags.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_type_check.h"
#include "tracer/ir_value_tags.h"

namespace tessera::jit {

void lower_trace(const TraceIR& ir, const LoweringEnv& env, const std::string& fn_name, llvm::Module& m, bool lines) {
  t2::Lowering(ir, env, m).run(fn_name, lines);
}

}  // namespace tessera::jit

namespace tessera::jit::t2 {

namespace {

// FMATH: the intrinsic that computes each function of tracer/float_math.def,
// or not_intrinsic where T2 calls its helper.
constexpr llvm::Intrinsic::ID kFloatMathIntrinsic[] = {
#define FLOATMATH(Name, fn, t1, t2, impl) llvm::Intrinsic::t2,
#include "tracer/float_math.def"
#undef FLOATMATH
};
static_assert(std::size(kFloatMathIntrinsic) == static_cast<size_t>(FloatMath::NumFns));

}  // namespace

Lowering::Lowering(const TraceIR& ir, const LoweringEnv& env, llvm::Module& m)
    : ir_(ir), env_(env), m_(m), c_(m.getContext()), b_(c_) {
  i1_ = llvm::Type::getInt1Ty(c_);
  i8_ = llvm::Type::getInt8Ty(c_);
  i32_ = llvm::Type::getInt32Ty(c_);
  i64_ = llvm::Type::getInt64Ty(c_);
  f64_ = llvm::Type::getDoubleTy(c_);
  ptr_ = llvm::PointerType::get(c_, 0);
  val_.assign(ir.size(), nullptr);
  cur_proto_ = env.proto;
}

void Lowering::run(const std::string& fn_name, bool lines) {
  const IRRef loop = find_loop();
  std::vector<llvm::Type*> params{ptr_, ptr_, ptr_, ptr_};
  params.resize(kPassedArg[kPassedInts], i64_);
  params.resize(kNativeArgs, f64_);
  auto* fty = llvm::FunctionType::get(i32_, params, false);
  const bool passed = takes_passed_values(ir_);
  f_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, passed ? fn_name + kPassedEntrySuffix : fn_name, m_);
  f_->setCallingConv(kTraceCallingConv);
  f_->setDoesNotThrow();  // the helpers catch everything
  emit_entry_wrapper(fn_name, passed ? emit_memory_entry(fn_name, fty) : f_);
  base_ = f_->getArg(0);
  globals_ = f_->getArg(1);
  exit_vals_ = f_->getArg(2);
  ctx_ = f_->getArg(3);
  base_->setName("base");
  globals_->setName("globals");
  exit_vals_->setName("exit_vals");
  ctx_->setName("ctx");
  // exit_vals is a buffer of the caller's that nothing else reaches.
  f_->addParamAttr(2, llvm::Attribute::NoAlias);

  entry_ = llvm::BasicBlock::Create(c_, "entry", f_);
  b_.SetInsertPoint(entry_);

  // Debug lines (lower_trace's `lines`): a compile unit and a subprogram for
  // the trace's function, and each instruction's line the IR number + 1.
  std::unique_ptr<llvm::DIBuilder> dib;
  llvm::DISubprogram* sp = nullptr;
  if (lines) {
    dib = std::make_unique<llvm::DIBuilder>(m_);
    llvm::DIFile* file = dib->createFile("trace.ir", ".");
    llvm::DICompileUnit* cu = dib->createCompileUnit(llvm::dwarf::DW_LANG_C, file, "tessera-vm", true, "", 0);
    sp = dib->createFunction(cu, f_->getName(), f_->getName(), file, 1,
                             dib->createSubroutineType(dib->getOrCreateTypeArray({})), 1, llvm::DINode::FlagZero,
                             llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
    f_->setSubprogram(sp);
    m_.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
    m_.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
  }

  for (IRRef r = 0; r < ir_.size(); ++r) {
    cur_ = r;
    const IRIns& ins = ir_[r];
    if (sp) b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, r + 1, 0, sp));
    if (ir_is_const(ins.op)) continue;  // materialized on use
    if (r == loop) {
      begin_loop(loop);
      continue;
    }
    if (ins.op == IROp::PHI) continue;  // wired up at LOOP and at the latch
    lower(r, ins);
  }
  if (loop != kNoRef) end_loop();
  else if (!b_.GetInsertBlock()->getTerminator()) b_.CreateUnreachable();
  if (dib) {
    // Instructions made before the first IR instruction (the entry block's)
    // get line 0: no IR instruction.
    for (llvm::BasicBlock& bb : *f_)
      for (llvm::Instruction& i : bb)
        if (!i.getDebugLoc()) i.setDebugLoc(llvm::DILocation::get(c_, 0, 0, sp));
    dib->finalize();
    b_.SetCurrentDebugLocation(llvm::DebugLoc());
  }
}

// The TraceFn for C++: calls the trace and returns its exit code. The
// callee-saved registers the trace may clobber are saved here, once per
// entry from the interpreter rather than once per trace-to-trace hop.
void Lowering::emit_entry_wrapper(const std::string& fn_name, llvm::Function* native) {
  auto* cty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_}, false);
  auto* w = llvm::Function::Create(cty, llvm::Function::ExternalLinkage, fn_name + "_entry", m_);
  w->setDoesNotThrow();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c_, "entry", w));
  std::vector<llvm::Value*> args;
  for (llvm::Argument& a : w->args()) args.push_back(&a);
  for (uint32_t i = 4; i < kNativeArgs; ++i) args.push_back(llvm::PoisonValue::get(native->getArg(i)->getType()));
  w->addParamAttr(2, llvm::Attribute::NoAlias);
  llvm::CallInst* call = b.CreateCall(native->getFunctionType(), native, args);
  call->setCallingConv(kTraceCallingConv);
  b.CreateRet(call);
}

// The entry of a trace that takes passed values for everything but its
// parent's exit (other exits, its own final link, C++): loads them from
// their registers in memory, where the caller wrote them, and goes on into
// the trace. The trace is not inlined into it (the body would be twice).
llvm::Function* Lowering::emit_memory_entry(const std::string& fn_name, llvm::FunctionType* fty) {
  auto* m = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, m_);
  m->setCallingConv(kTraceCallingConv);
  m->setDoesNotThrow();
  f_->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c_, "entry", m));
  std::vector<llvm::Value*> args;
  for (llvm::Argument& a : m->args()) args.push_back(&a);
  for (const IRIns& in : ir_.instructions()) {
    if (!sload_passed(in)) continue;
    llvm::Value* payload = b.CreateConstInBoundsGEP1_64(i8_, m->getArg(0), in.op1 * kValueSize + Value::kPayloadOffset);
    args[kPassedArg[sload_passed_reg(in)]] = b.CreateLoad(type_of(in.type), payload);
  }
  llvm::CallInst* call = b.CreateCall(fty, f_, args);
  call->setCallingConv(kTraceCallingConv);
  call->setTailCallKind(llvm::CallInst::TCK_MustTail);
  b.CreateRet(call);
  return m;
}

std::vector<llvm::Value*> Lowering::native_args(const std::array<llvm::Value*, kPassedValues>& passed) {
  std::vector<llvm::Value*> args{base_, globals_, exit_vals_, ctx_};
  for (uint32_t i = 4; i < kNativeArgs; ++i) args.push_back(llvm::PoisonValue::get(f_->getArg(i)->getType()));
  for (uint32_t i = 0; i < kPassedValues; ++i)
    if (passed[i] != nullptr) args[kPassedArg[i]] = passed[i];
  return args;
}

IRRef Lowering::find_loop() {
  IRRef loop = kNoRef;
  for (IRRef r = 0; r < ir_.size(); ++r) {
    if (ir_[r].op == IROp::LOOP) {
      if (loop != kNoRef) {
        cur_ = r;
        fail("more than one LOOP");
      }
      loop = r;
    }
  }
  // No LOOP: a linear (side) trace, which must end in an EXIT.
  if (loop == kNoRef && (ir_.size() == 0 || ir_[ir_.size() - 1].op != IROp::EXIT))
    throw std::runtime_error("trace has neither a LOOP nor a final EXIT");
  return loop;
}

llvm::Type* Lowering::type_of(IRType t) {
  switch (t) {
    case IRType::Bool: return i1_;
    case IRType::Float: return f64_;
    case IRType::Int:
    case IRType::Nil:
    case IRType::DType: return i64_;  // nil's payload is 0; a dtype's is its number
    case IRType::None: fail("an instruction of type None has no value");
    default: return ptr_;
  }
}

llvm::Value* Lowering::const_of(IRRef r) {
  const IRIns& k = ir_[r];
  switch (k.op) {
    case IROp::KNIL: return llvm::ConstantInt::get(i64_, 0);
    case IROp::KBOOL: return llvm::ConstantInt::get(i1_, k.op1 != 0);
    case IROp::KINT: return llvm::ConstantInt::get(i64_, static_cast<uint64_t>(ir_.const_int(r)));
    case IROp::KFLOAT: return llvm::ConstantFP::get(f64_, ir_.const_float(r));
    case IROp::KOBJ: return ptr_const(ir_.const_ptr(r));
    default: fail("not a constant");
  }
}

llvm::Constant* Lowering::ptr_const(const void* p) {
  return llvm::ConstantExpr::getIntToPtr(
      llvm::ConstantInt::get(i64_, reinterpret_cast<uint64_t>(p)), ptr_);
}

// The LLVM value of reference `r` at the current point.
llvm::Value* Lowering::value_of(IRRef r) {
  if (r >= ir_.size()) fail("reference " + std::to_string(r) + " is out of range");
  if (val_[r] != nullptr) return val_[r];
  if (ir_is_const(ir_[r].op)) return const_of(r);
  fail("reference " + std::to_string(r) + " (" + ir_op_info(ir_[r].op).name +
       ") has no value here (used before its definition, or produces none)");
}

// The raw 64-bit payload of a typed value (the exit_vals / helper format).
llvm::Value* Lowering::to_payload(llvm::Value* v) {
  llvm::Type* t = v->getType();
  if (t == i1_) return b_.CreateZExt(v, i64_);
  if (t == f64_) return b_.CreateBitCast(v, i64_);
  if (t == ptr_) return b_.CreatePtrToInt(v, i64_);
  return v;
}

llvm::Value* Lowering::from_payload(llvm::Value* p, IRType t) {
  llvm::Type* ty = type_of(t);
  if (ty == i1_) return b_.CreateICmpNE(p, llvm::ConstantInt::get(i64_, 0));
  if (ty == f64_) return b_.CreateBitCast(p, f64_);
  if (ty == ptr_) return b_.CreateIntToPtr(p, ptr_);
  return p;
}

llvm::Value* Lowering::byte_gep(llvm::Value* p, uint64_t off) {
  return off == 0 ? p : b_.CreateConstInBoundsGEP1_64(i8_, p, off);
}

llvm::Value* Lowering::slot_addr(llvm::Value* array, uint32_t index) {
  return byte_gep(array, uint64_t{index} * kValueSize);
}

void Lowering::expect_type(IRRef r, llvm::Type* t, const char* what) {
  if (value_of(r)->getType() != t) fail(std::string("operand ") + std::to_string(r) + " is not " + what);
}

void Lowering::lower(IRRef r, const IRIns& ins) {
  // Operand and result types: ir.def's columns, as the verifier checks them.
  if (std::string e = ir_type_error(ir_, r); !e.empty()) fail(e);
  llvm::Value* v = nullptr;
  if (const TraceHelper* h = called_helper(ins)) {
    v = lower_helper_call(ins, *h);
    update_slot_tags(slot_tags_, ir_, ins);  // a CALL's result slot
  } else {
    v = lower_inline(ins);
  }
  // LREF is a raw address: keep it whatever type the recorder gave it.
  if (v != nullptr && ins.op != IROp::LREF && ins.op != IROp::TREF && v->getType() != type_of(ins.type))
    fail(std::string("result type does not match the instruction's type ") + ir_type_name(ins.type));
  val_[r] = v;
}

// The helper `ins` calls (trace_helpers.h), or nullptr where it is code of
// its own: FMATH of a function LLVM has an intrinsic for.
const TraceHelper* Lowering::called_helper(const IRIns& ins) {
  if (ins.op == IROp::FMATH && ins.op2 < static_cast<uint32_t>(FloatMath::NumFns) &&
      kFloatMathIntrinsic[ins.op2] != llvm::Intrinsic::not_intrinsic)
    return nullptr;
  return trace_helper_of(ins);
}

llvm::Value* Lowering::lower_inline(const IRIns& ins) {
  llvm::Value* v = nullptr;
  auto A = [&] { return value_of(ins.op1); };
  auto B = [&] { return value_of(ins.op2); };
  switch (ins.op) {
    case IROp::SLOAD:
      if (sload_passed(ins)) {
        // In a register (trace_abi.h); its slot in memory holds what the
        // parent's exit left there: a scalar or nil (it released an
        // object), of a tag not known here (Undef).
        v = f_->getArg(kPassedArg[sload_passed_reg(ins)]);
      } else {
        v = ins.op2 == kSloadParentTyped ? load_typed(slot_addr(base_, ins.op1), ins.type)
                                         : load_guarded(slot_addr(base_, ins.op1), ins.type, ins.snap);
      }
      update_slot_tags(slot_tags_, ir_, ins);
      break;
    case IROp::GLOAD: v = load_guarded(slot_addr(globals_, ins.op1), ins.type, ins.snap); break;
    case IROp::SSTORE: store_slot(ins.op1, ins.op2); break;
    case IROp::GSTORE:
      store_value(slot_addr(globals_, ins.op1), ins.op2);
      if (env_.global_watch != nullptr) report_global_store(ins.op1);
      break;

    case IROp::ADD: v = b_.CreateAdd(A(), B()); break;
    case IROp::SUB: v = b_.CreateSub(A(), B()); break;
    case IROp::MUL: v = b_.CreateMul(A(), B()); break;
    case IROp::NEG: v = b_.CreateSub(llvm::ConstantInt::get(i64_, 0), A()); break;
    case IROp::IDIV: v = floored_divmod(A(), B()).first; break;
    case IROp::IMOD: v = floored_divmod(A(), B()).second; break;

    case IROp::FADD: v = b_.CreateFAdd(A(), B()); break;
    case IROp::FSUB: v = b_.CreateFSub(A(), B()); break;
    case IROp::FMUL: v = b_.CreateFMul(A(), B()); break;
    case IROp::FDIV: v = b_.CreateFDiv(A(), B()); break;
    case IROp::FNEG: v = b_.CreateFNeg(A()); break;
    case IROp::FMATH: v = b_.CreateIntrinsic(kFloatMathIntrinsic[ins.op2], {f64_}, {A()}); break;
    case IROp::CONV: v = b_.CreateSIToFP(A(), f64_); break;
    case IROp::F32RND:
      v = b_.CreateFPExt(b_.CreateFPTrunc(A(), llvm::Type::getFloatTy(c_)), f64_);
      break;

    case IROp::LT:
    case IROp::LE:
    case IROp::GT:
    case IROp::GE:
    case IROp::EQ:
    case IROp::NE:
    case IROp::ULT: v = compare(ins.op, ins.op1, ins.op2); break;
    case IROp::NOT: v = b_.CreateXor(A(), llvm::ConstantInt::get(i1_, 1)); break;

    case IROp::GUARDT: guard(A(), ins.snap); break;
    case IROp::EXIT: {
      b_.CreateBr(exit_block(ins.snap));
      // Anything after an EXIT is unreachable; give it a block of its own.
      b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "after.exit", f_));
      break;
    }
    case IROp::GUARDF:
      guard(b_.CreateXor(A(), llvm::ConstantInt::get(i1_, 1)), ins.snap);
      break;

    case IROp::LLEN: {
      llvm::Value* items = byte_gep(A(), env_.list.items_offset);
      llvm::Value* begin = b_.CreatePtrToInt(b_.CreateLoad(ptr_, byte_gep(items, env_.list.begin_offset)), i64_);
      llvm::Value* end = b_.CreatePtrToInt(b_.CreateLoad(ptr_, byte_gep(items, env_.list.end_offset)), i64_);
      v = b_.CreateLShr(b_.CreateSub(end, begin), 4);  // / sizeof(Value)
      break;
    }
    case IROp::LLOAD:
      v = load_guarded(element_addr(ins.op1, ins.op2), ins.type, ins.snap);
      break;
    case IROp::LLOADN:
      v = load_number(element_addr(ins.op1, ins.op2), ins.snap);
      break;
    case IROp::LREF:
      v = element_addr(ins.op1, ins.op2);
      break;
    case IROp::LSTORE:
      store_value(A(), ins.op2);
      break;

    case IROp::IMIN:
      v = b_.CreateSelect(b_.CreateICmpSLT(A(), B()), A(), B());
      break;
    case IROp::IMAX:
      v = b_.CreateSelect(b_.CreateICmpSGT(A(), B()), A(), B());
      break;
    case IROp::SLEN:
      v = b_.CreateLoad(i64_, byte_gep(A(), env_.str.length_offset));
      break;
    case IROp::SBYTE: {
      llvm::Value* at = b_.CreateInBoundsGEP(i8_, byte_gep(A(), env_.str.data_offset), B());
      v = b_.CreateZExt(b_.CreateLoad(i8_, at), i64_);
      break;
    }
    case IROp::SCHAR: {
      // ctx->one_byte_strings[b]'s payload (a Value is 16 bytes).
      llvm::Value* table = b_.CreateLoad(ptr_, field(ctx_, offsetof(JitContext, one_byte_strings)));
      llvm::Value* entry = b_.CreateInBoundsGEP(i8_, table, b_.CreateShl(A(), 4));
      v = b_.CreateLoad(ptr_, byte_gep(entry, Value::kPayloadOffset));
      break;
    }

    case IROp::FPUSH: push_frame(ins); break;
    case IROp::RETGUARD: return_guard(ins); break;
    case IROp::FPOP: pop_frame(ins); break;

    case IROp::TDTYPE:
      v = b_.CreateZExt(b_.CreateLoad(i8_, byte_gep(A(), env_.tensor.dtype_offset)), i64_);
      break;
    case IROp::TDIM: {
      llvm::Value* dims = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_begin_offset));
      v = b_.CreateLoad(i64_, b_.CreateConstInBoundsGEP1_64(i64_, dims, ins.op2));
      break;
    }
    case IROp::TRANK: {
      llvm::Value* begin = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_begin_offset));
      llvm::Value* end = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_end_offset));
      v = b_.CreateExactSDiv(b_.CreateSub(b_.CreatePtrToInt(end, i64_), b_.CreatePtrToInt(begin, i64_)),
                             llvm::ConstantInt::get(i64_, 8));
      break;
    }
    case IROp::TIDX: v = A(); break;
    case IROp::TREF:
      v = tensor_element_addr(ins.op1, ins.op2);
      break;
    case IROp::TLOAD: {
      llvm::Value* addr = tensor_element_addr(ins.op1, ins.op2);
      switch (tensor_dtype(ins.op2)) {
        case DType::F32: v = b_.CreateFPExt(b_.CreateLoad(llvm::Type::getFloatTy(c_), addr), f64_); break;
        case DType::I32: v = b_.CreateSExt(b_.CreateLoad(i32_, addr), i64_); break;
        case DType::I64: v = b_.CreateLoad(i64_, addr); break;
        case DType::Bool: v = b_.CreateICmpNE(b_.CreateLoad(i8_, addr), llvm::ConstantInt::get(i8_, 0)); break;
        default: fail("TLOAD of an unsupported dtype");
      }
      break;
    }
    case IROp::TSTORE: {
      llvm::Value* addr = A();
      llvm::Value* x = B();
      // The conversions of TensorObj::set_f / set_i.
      switch (tensor_dtype(ir_[ins.op1].op2)) {
        case DType::F32:
          if (x->getType() != i64_ && x->getType() != f64_) fail("TSTORE into f32 needs a number");
          if (x->getType() == i64_) x = b_.CreateSIToFP(x, f64_);  // set_i: via double
          b_.CreateStore(b_.CreateFPTrunc(x, llvm::Type::getFloatTy(c_)), addr);
          break;
        case DType::I32: expect_type(ins.op2, i64_, "an int"); b_.CreateStore(b_.CreateTrunc(x, i32_), addr); break;
        case DType::I64: expect_type(ins.op2, i64_, "an int"); b_.CreateStore(x, addr); break;
        case DType::Bool: expect_type(ins.op2, i1_, "a bool"); b_.CreateStore(b_.CreateZExt(x, i8_), addr); break;
        default: fail("TSTORE of an unsupported dtype");
      }
      break;
    }

    case IROp::CARG: break;  // consumed by its CALL
    case IROp::VNEWLIST:
    case IROp::VNEWTENSOR: break;  // no code: exits that name it build the object
    default: fail("opcode not supported by the LLVM backend");
  }
  return v;
}

// Int division, floored and never trapping: b == 0 gives 0 (the recorder
// guards it, this is belt and braces);
// b == -1 gives the wrapping negation and remainder 0 (x86 idiv faults on
// INT64_MIN / -1). Both are handled by dividing by 1 and selecting.
std::pair<llvm::Value*, llvm::Value*> Lowering::floored_divmod(llvm::Value* a, llvm::Value* b) {
  auto* zero = llvm::ConstantInt::get(i64_, 0);
  auto* one = llvm::ConstantInt::get(i64_, 1);
  auto* minus1 = llvm::ConstantInt::getSigned(i64_, -1);
  llvm::Value* is0 = b_.CreateICmpEQ(b, zero);
  llvm::Value* ism1 = b_.CreateICmpEQ(b, minus1);
  llvm::Value* special = b_.CreateOr(is0, ism1);
  llvm::Value* d = b_.CreateSelect(special, one, b);
  llvm::Value* q = b_.CreateSDiv(a, d);
  llvm::Value* r = b_.CreateSRem(a, d);
  // Truncated -> floored: when the remainder is non-zero and its sign
  // differs from the divisor's, step the quotient down and the remainder
  // up by the divisor.
  llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                     b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  q = b_.CreateSelect(adjust, b_.CreateSub(q, one), q);
  r = b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  q = b_.CreateSelect(is0, zero, b_.CreateSelect(ism1, b_.CreateSub(zero, a), q));
  r = b_.CreateSelect(special, zero, r);
  return {q, r};
}

llvm::Value* Lowering::compare(IROp op, IRRef x, IRRef y) {
  llvm::Value* a = value_of(x);
  llvm::Value* b = value_of(y);
  if (op == IROp::ULT) return b_.CreateICmpULT(a, b);
  if (a->getType() == f64_) {
    switch (op) {
      case IROp::LT: return b_.CreateFCmpOLT(a, b);
      case IROp::LE: return b_.CreateFCmpOLE(a, b);
      case IROp::GT: return b_.CreateFCmpOGT(a, b);
      case IROp::GE: return b_.CreateFCmpOGE(a, b);
      case IROp::EQ: return b_.CreateFCmpOEQ(a, b);
      default: return b_.CreateFCmpUNE(a, b);  // NE: true when unordered
    }
  }
  // Ints order signed; bools and pointers (identity) unsigned.
  const bool is_signed = type_of_ref(x) == IRType::Int;
  switch (op) {
    case IROp::LT: return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case IROp::LE: return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case IROp::GT: return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case IROp::GE: return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    case IROp::EQ: return b_.CreateICmpEQ(a, b);
    default: return b_.CreateICmpNE(a, b);
  }
}

void Lowering::begin_loop(IRRef loop) {
  loop_ = loop;
  top_ = nullptr;  // see frame_top()
  // Every PHI(a, b): `a` (before LOOP) is loop-carried; inside the body all
  // uses of `a` see the phi.
  for (IRRef r = loop + 1; r < ir_.size(); ++r) {
    const IRIns& p = ir_[r];
    if (p.op != IROp::PHI) continue;
    cur_ = r;
    if (p.op1 >= loop) fail("PHI's op1 must be defined before LOOP");
    if (ir_is_const(ir_[p.op1].op))
      fail("PHI's op1 is a constant; constants are shared, so it cannot be loop-carried");
    phis_.push_back({p.op1, p.op2, nullptr});
  }
  cur_ = loop;
  slot_tags_ = loop_header_slot_tags(ir_);
  hoist_list_storage(loop);
  preheader_ = b_.GetInsertBlock();
  header_ = llvm::BasicBlock::Create(c_, "loop", f_);
  b_.CreateBr(header_);
  b_.SetInsertPoint(header_);
  for (auto& ph : phis_) {
    llvm::Value* init = value_of(ph.a);
    ph.phi = b_.CreatePHI(init->getType(), 2);
    ph.phi->addIncoming(init, preheader_);
    val_[ph.a] = ph.phi;
  }
  in_loop_ = true;
}

void Lowering::end_loop() {
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (auto& ph : phis_) {
    cur_ = ph.a;
    llvm::Value* next = value_of(ph.b);
    if (next->getType() != ph.phi->getType()) fail("PHI operands have different types");
    ph.phi->addIncoming(next, latch);
  }
  b_.CreateBr(header_);
}

}  // namespace tessera::jit::t2
