// The CPU emitter's elementwise operations, on scalars and on strips alike:
// the same f32 operations and SLEEF functions as the interpreter's kernels.
#include "codegen/kernel/cpu/cpu_emitter_internal.h"

#include <string_view>

#include "vm/tensor/vector_math.h"

namespace tessera::kir::detail {

// ------------------------------------------------------------ math
namespace {
// The SLEEF function that is a unary operation's whole f32 form
// (elementwise_ops.def's sleef column), or null where compute() has a case.
const char* sleef_routine(KOp op) {
  switch (op) {
#define TESSERA_UNARY(Name, name, display, builtin, keeps, kflags, fmath, sleef, ...) \
    case KOp::Name: return std::string_view(#sleef) == "inline" ? nullptr : #sleef;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
    default: return nullptr;
  }
}
}  // namespace

llvm::Value* CpuEmitter::sleef(const char* fn, std::vector<llvm::Value*> xs) {
  const bool is_scalar = !xs[0]->getType()->isVectorTy();
  if (is_scalar)  // a lane of the vector function, as the interpreter's one-element path
    for (auto*& x : xs) x = b_.CreateVectorSplat(static_cast<unsigned>(W_), x);
  auto* vt = vec(b_.getFloatTy());
  std::vector<llvm::Type*> params(xs.size(), vt);
  const std::string name = std::string("Sleef_") + fn + "f" + std::to_string(W_) + "_" + vmath::sleef_accuracy(fn);
  auto callee = m_.getOrInsertFunction(name, llvm::FunctionType::get(vt, params, false));
  llvm::Value* r = b_.CreateCall(callee, xs);
  return is_scalar ? b_.CreateExtractElement(r, uint64_t{0}) : r;
}
// SLEEF's sin or cos as the interpreter's primitives call them
// (vector_math.h, kTrigFastMax): the lanes below the limit in magnitude on
// the fast path (the others replaced by 0), and, when there are others,
// those on the slow path, so that no lane's result depends on its
// neighbours (a row's masked-off lanes, or a tile's grouping of elements).
llvm::Value* CpuEmitter::trig(const char* fn, llvm::Value* x) {
  llvm::Value* small = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), fconst(x, vmath::kTrigFastMax));
  llvm::Value* fast = sleef(fn, {b_.CreateSelect(small, x, fconst(x, 0.0))});
  llvm::Value* big = b_.CreateNot(small);
  llvm::Value* any_big = big->getType()->isVectorTy() ? b_.CreateOrReduce(big) : big;
  llvm::BasicBlock* from = b_.GetInsertBlock();
  auto* slow = llvm::BasicBlock::Create(ctx_, "trig.slow", fn_);
  auto* join = llvm::BasicBlock::Create(ctx_, "trig.join", fn_);
  b_.CreateCondBr(any_big, slow, join);
  b_.SetInsertPoint(slow);
  llvm::Value* mixed = b_.CreateSelect(small, fast, sleef(fn, {x}));
  llvm::BasicBlock* slow_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* r = b_.CreatePHI(x->getType(), 2);
  r->addIncoming(fast, from);
  r->addIncoming(mixed, slow_end);
  return r;
}
// The operation of `in` on scalars or on strips alike.
llvm::Value* CpuEmitter::compute(const Inst& in, const std::vector<llvm::Value*>& x) {
  const Elem e = type(in.operands[0]).elem;
  const bool fl = elem_is_float(e);
  if ((e == Elem::F16 || e == Elem::BF16) && in.op != KOp::Cast && in.op != KOp::Select)
    fail(std::string(op_info(in.op).name) + " on " + elem_name(e) + ": cast to f32 first");
  switch (in.op) {
    case KOp::Neg: return fl ? b_.CreateFNeg(x[0]) : b_.CreateNeg(x[0]);
    case KOp::Abs:
      return fl ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x[0])
                : b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x[0], b_.getFalse());
    case KOp::Sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]);
    case KOp::Rsqrt: return b_.CreateFDiv(fconst(x[0], 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]));
    case KOp::Sigmoid: return sigmoid(x[0]);
    case KOp::Relu: {
      llvm::Value* keep = b_.CreateOr(b_.CreateFCmpOGT(x[0], fconst(x[0], 0.0)), is_nan(x[0]));
      return b_.CreateSelect(keep, x[0], fconst(x[0], 0.0));
    }
    case KOp::Gelu: {
      llvm::Value* erf = sleef("erf", {b_.CreateFMul(x[0], fconst(x[0], 0.70710678118654752))});
      return b_.CreateFMul(b_.CreateFMul(fconst(x[0], 0.5), x[0]), b_.CreateFAdd(fconst(x[0], 1.0), erf));
    }
    case KOp::Silu: return b_.CreateFMul(x[0], sigmoid(x[0]));
    case KOp::Exp2: return sleef("exp2", {x[0]});
    case KOp::Sin: return trig("sin", x[0]);
    case KOp::Cos: return trig("cos", x[0]);
    case KOp::Softplus: {  // max(x, 0) + log1p(e^-|x|), as the interpreter's vector form
      llvm::Value* pos = b_.CreateSelect(b_.CreateFCmpOGT(x[0], fconst(x[0], 0.0)), x[0], fconst(x[0], 0.0));
      llvm::Value* e = sleef("exp", {b_.CreateFNeg(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x[0]))});
      return b_.CreateFAdd(pos, sleef("log1p", {e}));
    }
    case KOp::Add: return fl ? b_.CreateFAdd(x[0], x[1]) : b_.CreateAdd(x[0], x[1]);
    case KOp::Sub: return fl ? b_.CreateFSub(x[0], x[1]) : b_.CreateSub(x[0], x[1]);
    case KOp::Mul: return fl ? b_.CreateFMul(x[0], x[1]) : b_.CreateMul(x[0], x[1]);
    case KOp::Div:
    case KOp::Rem: {
      if (fl) return b_.CreateFDiv(x[0], x[1]);
      // Index math: a zero or -1 divisor must not trap; give 0 and -a (truncating).
      llvm::Value* zero = llvm::Constant::getNullValue(x[1]->getType());
      llvm::Value* one = b_.CreateSub(zero, b_.CreateNot(zero));  // 1 of the type (splat)
      llvm::Value* m1 = b_.CreateNot(zero);                       // -1
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(b_.CreateICmpEQ(x[1], zero), b_.CreateICmpEQ(x[1], m1)), one, x[1]);
      llvm::Value* q = in.op == KOp::Div ? b_.CreateSDiv(x[0], safe) : b_.CreateSRem(x[0], safe);
      llvm::Value* special = in.op == KOp::Div ? b_.CreateNeg(x[0]) : zero;
      q = b_.CreateSelect(b_.CreateICmpEQ(x[1], m1), special, q);
      return b_.CreateSelect(b_.CreateICmpEQ(x[1], zero), zero, q);
    }
    case KOp::Min:
    case KOp::Max: {
      if (!fl) return b_.CreateBinaryIntrinsic(in.op == KOp::Min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax, x[0], x[1]);
      // NaN propagates; ties keep a (vector_math's nan_aware).
      llvm::Value* pick = in.op == KOp::Min ? b_.CreateFCmpOLT(x[1], x[0]) : b_.CreateFCmpOGT(x[1], x[0]);
      llvm::Value* r = b_.CreateSelect(pick, x[1], x[0]);
      return b_.CreateSelect(b_.CreateOr(is_nan(x[0]), is_nan(x[1])), b_.CreateFAdd(x[0], x[1]), r);
    }
    case KOp::Pow: return sleef("pow", {x[0], x[1]});
    case KOp::Cmp: return compare(in.pred, fl, x[0], x[1]);
    case KOp::Select: return b_.CreateSelect(x[0], x[1], x[2]);
    case KOp::Cast: return cast(x[0], e, type(in.results[0]).elem);
    default:
      if (const char* fn = sleef_routine(in.op)) return sleef(fn, {x[0]});
      fail(std::string("no elementwise form of ") + op_info(in.op).name);
  }
}
llvm::Value* CpuEmitter::sigmoid(llvm::Value* x) {
  return b_.CreateFDiv(fconst(x, 1.0), b_.CreateFAdd(fconst(x, 1.0), sleef("exp", {b_.CreateFNeg(x)})));
}
llvm::Value* CpuEmitter::compare(Pred p, bool fl, llvm::Value* a, llvm::Value* b) {
  using P = llvm::CmpInst::Predicate;
  static constexpr P kF[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
  static constexpr P kI[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
  const auto i = static_cast<size_t>(p);
  return fl ? b_.CreateFCmp(kF[i], a, b) : b_.CreateICmp(kI[i], a, b);
}
// bf16 <-> f32 as the interpreter does (vm/tensor/dtype.cpp): round to
// nearest even, NaN kept quiet.
llvm::Value* CpuEmitter::bf16_to_f32(llvm::Value* h) {
  llvm::Value* w = b_.CreateShl(b_.CreateZExt(h, same_shape(h, b_.getInt32Ty())), splat_like(h, b_.getInt32(16)));
  return b_.CreateBitCast(w, same_shape(h, b_.getFloatTy()));
}
llvm::Value* CpuEmitter::f32_to_bf16(llvm::Value* f) {
  auto c = [&](uint32_t v) { return splat_like(f, b_.getInt32(v)); };
  llvm::Value* x = b_.CreateBitCast(f, same_shape(f, b_.getInt32Ty()));
  llvm::Value* hi = b_.CreateLShr(x, c(16));
  llvm::Value* nan = b_.CreateICmpUGT(b_.CreateAnd(x, c(0x7fffffffu)), c(0x7f800000u));
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(x, b_.CreateAdd(c(0x7fffu), b_.CreateAnd(hi, c(1)))), c(16));
  llvm::Value* r = b_.CreateSelect(nan, b_.CreateOr(hi, c(0x40)), rounded);
  return b_.CreateTrunc(r, same_shape(f, b_.getInt16Ty()));
}
llvm::Value* CpuEmitter::cast(llvm::Value* x, Elem from, Elem to) {
  if (from == to) return x;
  llvm::Value* f = x;  // through f32 for the float types
  if (from == Elem::BF16) f = bf16_to_f32(x), from = Elem::F32;
  else if (from == Elem::F16) f = b_.CreateFPExt(x, same_shape(x, b_.getFloatTy())), from = Elem::F32;
  if (from == to) return f;
  if (to == Elem::F64) {
    auto* dt = same_shape(f, b_.getDoubleTy());
    if (from == Elem::F32) return b_.CreateFPExt(f, dt);
    return from == Elem::I1 ? b_.CreateUIToFP(f, dt) : b_.CreateSIToFP(f, dt);
  }
  if (from == Elem::F64) {
    if (to == Elem::I1) return b_.CreateFCmpUNE(f, like_type(f, b_.getDoubleTy()));
    if (!elem_is_float(to))  // saturating, NaN -> 0
      return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {same_shape(f, reg_type(to)), f->getType()}, {f});
    f = b_.CreateFPTrunc(f, same_shape(f, b_.getFloatTy())), from = Elem::F32;  // rounded once to f32
    if (to == Elem::F32) return f;
  }
  if (elem_is_float(to)) {
    if (from != Elem::F32) {  // int or bool to f32
      auto* ft = same_shape(f, b_.getFloatTy());
      f = from == Elem::I1 ? b_.CreateUIToFP(f, ft) : b_.CreateSIToFP(f, ft);
    }
    if (to == Elem::F32) return f;
    if (to == Elem::F16) return b_.CreateFPTrunc(f, same_shape(f, b_.getHalfTy()));
    return f32_to_bf16(f);
  }
  if (to == Elem::I1)
    return from == Elem::F32 ? b_.CreateFCmpUNE(f, like_type(f, b_.getFloatTy()))
                             : b_.CreateICmpNE(f, like_type(f, reg_type(from)));
  llvm::Type* it = same_shape(f, reg_type(to));
  if (from == Elem::F32)  // saturating, NaN -> 0, as TensorObj::set_i
    return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {it, f->getType()}, {f});
  return from == Elem::I1 ? b_.CreateZExt(f, it) : b_.CreateSExtOrTrunc(f, it);
}


llvm::Value* CpuEmitter::splat_like(llvm::Value* like, llvm::Value* x) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
    return b_.CreateVectorSplat(vt->getNumElements(), x);
  return x;
}

llvm::Value* CpuEmitter::like_type(llvm::Value* like, llvm::Type* scalar) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
    return llvm::Constant::getNullValue(llvm::FixedVectorType::get(scalar, vt->getNumElements()));
  return llvm::Constant::getNullValue(scalar);
}
}  // namespace tessera::kir::detail
