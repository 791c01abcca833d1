// Kernel IR → LLVM IR for the host CPU; the design note is in cpu_emitter.h.
#include "codegen/kernel/cpu/cpu_emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir {

namespace {

constexpr int64_t kSumLanes = 16;   // the interpreter's summation order (vector_math.h)
constexpr int64_t kSumBlock = 1024;
constexpr int64_t kMaxTileBytes = 1 << 20;  // all tile buffers of a kernel together

class Emitter {
 public:
  Emitter(const Kernel& k, llvm::Module& m, const CpuTarget& t)
      : k_(k), m_(m), ctx_(m.getContext()), b_(ctx_), W_(t.lanes) {}

  void run(const std::string& fn_name) {
    auto* i64 = b_.getInt64Ty();
    auto* ptr = b_.getPtrTy();
    auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, m_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Value* args = fn_->getArg(0);
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    // Params and dims are read once.
    auto* params = b_.CreateLoad(ptr, args, "params");
    for (size_t i = 0; i < k_.params.size(); ++i)
      param_ptrs_.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, params, i), "p." + k_.params[i].name));
    auto* dims = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, args, 1), "dims");
    for (size_t i = 0; i < k_.dims.size(); ++i) {
      if (i < k_.dim_values.size() && k_.dim_values[i]) dim_vals_.push_back(b_.getInt64(*k_.dim_values[i]));
      else dim_vals_.push_back(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, dims, i), "d." + k_.dims[i]));
    }
    llvm::Value* g[3];
    for (int a = 0; a < 3; ++a) g[a] = b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, args, 2 + a), "g");
    // for p in begin .. end-1: split p into grid coordinates, run the body.
    loop(fn_->getArg(1), fn_->getArg(2), [&](llvm::Value* p) {
      pid_[0] = b_.CreateURem(p, g[0]);
      llvm::Value* rest = b_.CreateUDiv(p, g[0]);
      pid_[1] = b_.CreateURem(rest, g[1]);
      pid_[2] = b_.CreateUDiv(rest, g[1]);
      block(k_.body);
    });
    b_.CreateRetVoid();
  }

 private:
  struct Repr {
    llvm::Value* scalar = nullptr;  // a scalar's value
    llvm::Value* buf = nullptr;     // a tile's buffer
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("cpu emitter: kernel @" + k_.name + ": " + what);
  }

  // ------------------------------------------------------------ types
  llvm::Type* reg_type(Elem e) {
    switch (e) {
      case Elem::I1: return b_.getInt1Ty();
      case Elem::I32: return b_.getInt32Ty();
      case Elem::I64: return b_.getInt64Ty();
      case Elem::F16: return b_.getHalfTy();
      case Elem::BF16: return b_.getInt16Ty();  // raw bits; converted by cast
      case Elem::F32: return b_.getFloatTy();
    }
    return nullptr;
  }
  llvm::Type* mem_type(Elem e) { return e == Elem::I1 ? b_.getInt8Ty() : reg_type(e); }
  llvm::Type* vec(llvm::Type* t) { return llvm::FixedVectorType::get(t, static_cast<unsigned>(W_)); }
  const Type& type(ValueId v) const { return k_.value(v).type; }

  // ------------------------------------------------------------ control flow
  // for (i = lo; i < hi; i += step) body(i), as an LLVM loop (step > 0).
  void loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body, llvm::Value* step = nullptr) {
    if (!step) step = b_.getInt64(1);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "done", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
    i->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    body(i);
    i->addIncoming(b_.CreateAdd(i, step), b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }
  void loop(int64_t n, const std::function<void(llvm::Value*)>& body) { loop(b_.getInt64(0), b_.getInt64(n), body); }

  // Over a tile of n elements in strips of W: body(strip start).
  void strips(int64_t n, const std::function<void(llvm::Value*)>& body) {
    loop(b_.getInt64(0), b_.getInt64(n), body, b_.getInt64(W_));
  }

  // ------------------------------------------------------------ values
  int64_t padded(int64_t n) const {
    const int64_t q = std::max<int64_t>(W_, kSumLanes);
    return (n + q - 1) / q * q;
  }

  llvm::Value* new_buffer(const Type& t) {
    tile_bytes_ += padded(t.numel()) * static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(mem_type(t.elem)));
    if (tile_bytes_ > kMaxTileBytes) fail("its tiles need more than 1 MiB of stack");
    llvm::IRBuilder<> eb(entry_, entry_->begin());
    auto* a = eb.CreateAlloca(llvm::ArrayType::get(mem_type(t.elem), static_cast<uint64_t>(padded(t.numel()))));
    a->setAlignment(llvm::Align(64));
    return a;
  }

  llvm::Value* scalar(ValueId v) {
    auto it = vals_.find(v);
    if (it == vals_.end() || !it->second.scalar) fail("value %" + k_.value(v).name + " is not a computed scalar");
    return it->second.scalar;
  }
  llvm::Value* buf(ValueId v) {
    auto it = vals_.find(v);
    if (it == vals_.end() || !it->second.buf) fail("value %" + k_.value(v).name + " is not a computed tile");
    return it->second.buf;
  }
  llvm::Value* elem_ptr(llvm::Value* base, Elem e, llvm::Value* index) { return b_.CreateGEP(mem_type(e), base, index); }

  // The strip of v starting at `start` as a <W x T> register value.
  llvm::Value* strip(ValueId v, llvm::Value* start) {
    if (auto it = cur_.find(v); it != cur_.end()) return it->second;  // computed in this strip
    const Type& t = type(v);
    if (!t.is_tile()) return b_.CreateVectorSplat(static_cast<unsigned>(W_), scalar(v));
    auto* raw = b_.CreateAlignedLoad(vec(mem_type(t.elem)), elem_ptr(buf(v), t.elem, start), llvm::Align(4));
    return t.elem == Elem::I1 ? b_.CreateICmpNE(raw, llvm::Constant::getNullValue(raw->getType())) : raw;
  }
  void put_strip(ValueId v, llvm::Value* start, llvm::Value* x) {
    const Type& t = type(v);
    if (t.elem == Elem::I1) x = b_.CreateZExt(x, vec(b_.getInt8Ty()));
    b_.CreateAlignedStore(x, elem_ptr(buf(v), t.elem, start), llvm::Align(4));
  }
  // Lanes of the strip at `start` that lie inside a tile of n elements.
  llvm::Value* in_tile(llvm::Value* start, int64_t n) {
    std::vector<llvm::Constant*> iota;
    for (int i = 0; i < W_; ++i) iota.push_back(b_.getInt64(i));
    auto* lanes = b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(W_), start), llvm::ConstantVector::get(iota));
    return b_.CreateICmpSLT(lanes, b_.CreateVectorSplat(static_cast<unsigned>(W_), b_.getInt64(n)));
  }

  // ------------------------------------------------------------ math
  llvm::Value* sleef(const char* fn, std::vector<llvm::Value*> xs) {
    const bool is_scalar = !xs[0]->getType()->isVectorTy();
    if (is_scalar)  // a lane of the vector function, as the interpreter's one-element path
      for (auto*& x : xs) x = b_.CreateVectorSplat(static_cast<unsigned>(W_), x);
    auto* vt = vec(b_.getFloatTy());
    std::vector<llvm::Type*> params(xs.size(), vt);
    const std::string name = std::string("Sleef_") + fn + "f" + std::to_string(W_) + "_u10";
    auto callee = m_.getOrInsertFunction(name, llvm::FunctionType::get(vt, params, false));
    llvm::Value* r = b_.CreateCall(callee, xs);
    return is_scalar ? b_.CreateExtractElement(r, uint64_t{0}) : r;
  }

  llvm::Value* splat_like(llvm::Value* like, llvm::Value* x) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return b_.CreateVectorSplat(vt->getNumElements(), x);
    return x;
  }
  llvm::Value* fconst(llvm::Value* like, double v) { return splat_like(like, llvm::ConstantFP::get(b_.getFloatTy(), v)); }

  llvm::Value* is_nan(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }

  // The operation of `in` on scalars or on strips alike.
  llvm::Value* compute(const Inst& in, const std::vector<llvm::Value*>& x) {
    const Elem e = type(in.operands[0]).elem;
    const bool fl = elem_is_float(e);
    if ((e == Elem::F16 || e == Elem::BF16) && in.op != KOp::Cast && in.op != KOp::Select)
      fail(std::string(op_info(in.op).name) + " on " + elem_name(e) + ": cast to f32 first");
    switch (in.op) {
      case KOp::Neg: return fl ? b_.CreateFNeg(x[0]) : b_.CreateNeg(x[0]);
      case KOp::Abs:
        return fl ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x[0])
                  : b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x[0], b_.getFalse());
      case KOp::Exp: return sleef("exp", {x[0]});
      case KOp::Log: return sleef("log", {x[0]});
      case KOp::Sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]);
      case KOp::Rsqrt: return b_.CreateFDiv(fconst(x[0], 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]));
      case KOp::Tanh: return sleef("tanh", {x[0]});
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
      case KOp::Sin: return sleef("sin", {x[0]});
      case KOp::Cos: return sleef("cos", {x[0]});
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
      default: fail(std::string("no elementwise form of ") + op_info(in.op).name);
    }
  }

  llvm::Value* sigmoid(llvm::Value* x) {
    return b_.CreateFDiv(fconst(x, 1.0), b_.CreateFAdd(fconst(x, 1.0), sleef("exp", {b_.CreateFNeg(x)})));
  }

  llvm::Value* compare(Pred p, bool fl, llvm::Value* a, llvm::Value* b) {
    using P = llvm::CmpInst::Predicate;
    static constexpr P kF[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
    static constexpr P kI[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    const auto i = static_cast<size_t>(p);
    return fl ? b_.CreateFCmp(kF[i], a, b) : b_.CreateICmp(kI[i], a, b);
  }

  llvm::Value* like_type(llvm::Value* like, llvm::Type* scalar) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return llvm::Constant::getNullValue(llvm::FixedVectorType::get(scalar, vt->getNumElements()));
    return llvm::Constant::getNullValue(scalar);
  }
  llvm::Type* same_shape(llvm::Value* like, llvm::Type* scalar) { return like_type(like, scalar)->getType(); }

  // bf16 <-> f32 as the interpreter does (vm/tensor/dtype.cpp): round to
  // nearest even, NaN kept quiet.
  llvm::Value* bf16_to_f32(llvm::Value* h) {
    llvm::Value* w = b_.CreateShl(b_.CreateZExt(h, same_shape(h, b_.getInt32Ty())), splat_like(h, b_.getInt32(16)));
    return b_.CreateBitCast(w, same_shape(h, b_.getFloatTy()));
  }
  llvm::Value* f32_to_bf16(llvm::Value* f) {
    auto c = [&](uint32_t v) { return splat_like(f, b_.getInt32(v)); };
    llvm::Value* x = b_.CreateBitCast(f, same_shape(f, b_.getInt32Ty()));
    llvm::Value* hi = b_.CreateLShr(x, c(16));
    llvm::Value* nan = b_.CreateICmpUGT(b_.CreateAnd(x, c(0x7fffffffu)), c(0x7f800000u));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(x, b_.CreateAdd(c(0x7fffu), b_.CreateAnd(hi, c(1)))), c(16));
    llvm::Value* r = b_.CreateSelect(nan, b_.CreateOr(hi, c(0x40)), rounded);
    return b_.CreateTrunc(r, same_shape(f, b_.getInt16Ty()));
  }

  llvm::Value* cast(llvm::Value* x, Elem from, Elem to) {
    if (from == to) return x;
    llvm::Value* f = x;  // through f32 for the float types
    if (from == Elem::BF16) f = bf16_to_f32(x), from = Elem::F32;
    else if (from == Elem::F16) f = b_.CreateFPExt(x, same_shape(x, b_.getFloatTy())), from = Elem::F32;
    if (from == to) return f;
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

  // ------------------------------------------------------------ instructions
  // A block's instructions in order, except that runs of strip operations on
  // tiles of one size become one loop over the strips (strip_group).
  void block(const Block& blk) {
    size_t i = 0;
    while (i < blk.insts.size()) {
      if (strip_numel(blk.insts[i]) > 0) {
        i = strip_group(blk, i);
        continue;
      }
      inst(blk.insts[i++]);
    }
  }

  bool elementwise(KShape s) const {
    return s == KShape::Unary || s == KShape::Binary || s == KShape::Cmp || s == KShape::Select || s == KShape::Cast;
  }

  // The tile size of an operation computed strip by strip (elementwise,
  // splat, range, loads and stores of tiles), else 0.
  int64_t strip_numel(const Inst& in) const {
    const KShape shape = op_info(in.op).shape;
    if (shape == KShape::Store) return type(in.operands[1]).is_tile() ? type(in.operands[1]).numel() : 0;
    if (!(elementwise(shape) || shape == KShape::Splat || shape == KShape::Range || shape == KShape::Load)) return 0;
    const Type& t = type(in.results[0]);
    return t.is_tile() ? t.numel() : 0;
  }

  // Scalar work that may move ahead of a strip loop: it reads no tile and
  // writes no memory (loads read inputs, which no store of a kernel writes).
  bool hoistable_scalar(const Inst& in) const {
    if (in.results.size() != 1 || type(in.results[0]).is_tile()) return false;
    const KShape shape = op_info(in.op).shape;
    return elementwise(shape) || shape == KShape::Const || shape == KShape::Dim || shape == KShape::ProgramId ||
           shape == KShape::Load;
  }

  // The strip operations of one size from blk.insts[start] on, with the
  // scalar work between them, as one loop: each strip's values stay in
  // registers, and only values used after the run are stored to their
  // buffers. Returns the index after the run.
  size_t strip_group(const Block& blk, size_t start) {
    const int64_t n = strip_numel(blk.insts[start]);
    std::vector<const Inst*> members;
    size_t end = start, j = start;
    for (; j < blk.insts.size(); ++j) {
      const Inst& in = blk.insts[j];
      if (strip_numel(in) == n) {
        members.push_back(&in);
        end = j + 1;
      } else if (!hoistable_scalar(in)) {
        break;
      }
    }
    for (size_t i = start; i < end; ++i)  // the scalars first: no member is a scalar's operand
      if (strip_numel(blk.insts[i]) == 0) inst(blk.insts[i]);
    std::unordered_map<ValueId, int> inside;
    for (const Inst* m : members)
      for (ValueId o : m->operands) ++inside[o];
    std::vector<ValueId> escaping;
    for (const Inst* m : members)
      for (ValueId r : m->results)
        if (uses(r) > inside[r]) {
          vals_[r].buf = new_buffer(type(r));
          escaping.push_back(r);
        }
    auto body = [&](llvm::Value* s) {
      for (const Inst* m : members) {
        llvm::Value* v = strip_op(*m, s, n);
        if (!m->results.empty()) cur_[m->results[0]] = v;
      }
      for (ValueId r : escaping) put_strip(r, s, cur_.at(r));
      cur_.clear();
    };
    // When the run's only effects are stores under one prefix mask (the
    // first N - B lanes), the strips past it compute nothing that is kept:
    // stop there (a tile of 1024 over a 16-element tensor runs 2 strips of 8).
    // The whole strips before it have every lane of that mask set, so their
    // loads and stores under it are plain vector accesses (masked ones cost
    // several times as much, stores on AMD cores most of all); one masked
    // strip ends the run.
    std::optional<ValueId> prefix_mask;
    if (llvm::Value* live = escaping.empty() ? prefix_lanes(members, n, prefix_mask) : nullptr) {
      llvm::Value* whole = b_.CreateAnd(live, b_.getInt64(~static_cast<int64_t>(W_ - 1)));
      full_mask_ = prefix_mask;
      loop(b_.getInt64(0), whole, body, b_.getInt64(W_));
      full_mask_.reset();
      auto* tail = llvm::BasicBlock::Create(ctx_, "strip.tail", fn_);
      auto* after = llvm::BasicBlock::Create(ctx_, "strip.done", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(whole, live), tail, after);
      b_.SetInsertPoint(tail);
      body(whole);
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
    } else {
      strips(n, body);
    }
    return end;
  }

  // The number of leading lanes (at most n) that the stores among `members`
  // keep, when they are all masked by one mask `splat(B) + range < splat(N)`
  // (or `range < splat(N)`); null when not.
  llvm::Value* prefix_lanes(const std::vector<const Inst*>& members, int64_t n, std::optional<ValueId>& mask) {
    for (const Inst* m : members) {
      if (m->op != KOp::Store) continue;
      if (m->operands.size() < 3 || (mask && *mask != m->operands[2])) return nullptr;
      mask = m->operands[2];
    }
    if (!mask) return nullptr;
    const Inst* c = def_of(*mask);
    if (!c || c->op != KOp::Cmp || c->pred != Pred::Lt) return nullptr;
    const Inst* lim = def_of(c->operands[1]);
    if (!lim || lim->op != KOp::Splat) return nullptr;
    const Inst* idx = def_of(c->operands[0]);
    llvm::Value* first = nullptr;  // B
    if (idx && idx->op == KOp::Range) first = b_.getInt64(0);
    else if (auto base = contiguous_base(c->operands[0])) first = scalar(*base);
    if (!first) return nullptr;
    llvm::Value* left = b_.CreateSub(scalar(lim->operands[0]), first);
    left = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, left, b_.getInt64(0));
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, left, b_.getInt64(n));
  }

  int uses(ValueId v) {
    if (uses_.empty()) count_uses(k_.body);
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second;
  }
  void count_uses(const Block& blk) {
    for (const Inst& in : blk.insts) {
      for (ValueId o : in.operands) ++uses_[o];
      if (in.body) count_uses(*in.body);
    }
  }

  // One strip (at `start`, of a tile of n elements) of a strip operation.
  llvm::Value* strip_op(const Inst& in, llvm::Value* s, int64_t n) {
    switch (op_info(in.op).shape) {
      case KShape::Range: {
        std::vector<llvm::Constant*> iota;
        for (int i = 0; i < W_; ++i) iota.push_back(b_.getInt64(i));
        return b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(W_), s), llvm::ConstantVector::get(iota));
      }
      case KShape::Splat: return strip(in.operands[0], s);
      case KShape::Load: return load_strip(in, s, n);
      case KShape::Store: store_strip(in, s, n); return nullptr;
      default: {
        std::vector<llvm::Value*> x;
        for (ValueId o : in.operands) x.push_back(strip(o, s));
        return compute(in, x);
      }
    }
  }

  void inst(const Inst& in) {
    const KShape shape = op_info(in.op).shape;
    if (in.op == KOp::Yield) return;  // For handles it
    if (in.op == KOp::For) return for_loop(in);
    if (in.op == KOp::Store) return store_scalar(in);
    if (in.op == KOp::Reduce) return reduce(in);  // to a scalar or to a tile
    const ValueId r = in.results.at(0);
    const Type& t = type(r);
    if (!t.is_tile()) {
      vals_[r].scalar = scalar_inst(in, shape);
      return;
    }
    vals_[r].buf = new_buffer(t);
    switch (shape) {
      case KShape::Broadcast: return broadcast(in);
      case KShape::Trans: return trans(in);
      case KShape::Dot: return dot(in);
      default: fail(std::string("no tile form of ") + op_info(in.op).name);
    }
  }

  llvm::Value* scalar_inst(const Inst& in, KShape shape) {
    const Type& t = type(in.results[0]);
    switch (shape) {
      case KShape::Const:
        if (elem_is_float(t.elem)) {
          if (t.elem != Elem::F32) fail("constants of " + std::string(elem_name(t.elem)) + ": use f32 and cast");
          return llvm::ConstantFP::get(b_.getFloatTy(), in.fvalue);
        }
        return llvm::ConstantInt::get(reg_type(t.elem), static_cast<uint64_t>(in.ivalue), true);
      case KShape::Dim: return dim_vals_.at(in.index);
      case KShape::ProgramId: return pid_[in.index];
      case KShape::Load: {
        // A masked-off scalar load must not touch memory: branch around it.
        const Param& p = k_.params[in.index];
        auto addr = [&] { return elem_ptr(param_ptrs_[in.index], p.elem, scalar(in.operands[0])); };
        if (in.operands.size() < 2) return b_.CreateLoad(reg_type(p.elem), addr());
        llvm::Value* other = in.operands.size() > 2 ? scalar(in.operands[2]) : llvm::Constant::getNullValue(reg_type(p.elem));
        llvm::BasicBlock* from = b_.GetInsertBlock();
        auto* yes = llvm::BasicBlock::Create(ctx_, "ld", fn_);
        auto* join = llvm::BasicBlock::Create(ctx_, "ld.join", fn_);
        b_.CreateCondBr(scalar(in.operands[1]), yes, join);
        b_.SetInsertPoint(yes);
        llvm::Value* v = b_.CreateLoad(reg_type(p.elem), addr());
        b_.CreateBr(join);
        b_.SetInsertPoint(join);
        auto* phi = b_.CreatePHI(reg_type(p.elem), 2);
        phi->addIncoming(v, yes);
        phi->addIncoming(other, from);
        return phi;
      }
      default: {
        if (!elementwise(shape)) fail(std::string("no scalar form of ") + op_info(in.op).name);
        std::vector<llvm::Value*> x;
        for (ValueId o : in.operands) x.push_back(scalar(o));
        return compute(in, x);
      }
    }
  }

  // offsets = splat(s) + range (either order), 1-D: the scalar s; else null.
  std::optional<ValueId> contiguous_base(ValueId off) {
    const Inst* d = def_of(off);
    if (!d || d->op != KOp::Add || type(off).shape.size() != 1) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const Inst* s = def_of(d->operands[i]);
      const Inst* r = def_of(d->operands[1 - i]);
      if (s && r && s->op == KOp::Splat && r->op == KOp::Range) return s->operands[0];
    }
    return std::nullopt;
  }
  const Inst* def_of(ValueId v) {
    if (defs_.empty()) index_defs(k_.body);
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  void index_defs(const Block& blk) {
    for (const Inst& in : blk.insts) {
      for (ValueId r : in.results) defs_[r] = &in;
      if (in.body) index_defs(*in.body);
    }
  }

  // The lanes of a strip that the IR's mask and the tile's end allow (null:
  // all of them).
  llvm::Value* access_mask(const Inst& in, size_t mask_at, llvm::Value* s, int64_t n) {
    // A whole strip under the run's prefix mask: every lane is inside it and inside the tile.
    if (full_mask_ && in.operands.size() > mask_at && in.operands[mask_at] == *full_mask_) return nullptr;
    llvm::Value* m = in.operands.size() > mask_at ? strip(in.operands[mask_at], s) : nullptr;
    if (n % W_ != 0) {
      llvm::Value* inside = in_tile(s, n);
      m = m ? b_.CreateAnd(m, inside) : inside;
    }
    return m;
  }

  llvm::Value* load_strip(const Inst& in, llvm::Value* s, int64_t n) {
    const Param& p = k_.params[in.index];
    llvm::Type* vt = vec(mem_type(p.elem));
    llvm::Value* mask = access_mask(in, 1, s, n);
    llvm::Value* other = in.operands.size() > 2 ? strip(in.operands[2], s) : llvm::Constant::getNullValue(vt);
    // Bools are bytes in memory and i1 in registers.
    const bool boolean = p.elem == Elem::I1;
    if (boolean && other->getType() != vt) other = b_.CreateZExt(other, vt);
    auto to_reg = [&](llvm::Value* raw) {
      return boolean ? b_.CreateICmpNE(raw, llvm::Constant::getNullValue(vt)) : raw;
    };
    if (auto base = contiguous_base(in.operands[0])) {
      llvm::Value* addr = elem_ptr(param_ptrs_[in.index], p.elem, b_.CreateAdd(scalar(*base), s));
      if (mask) return to_reg(b_.CreateMaskedLoad(vt, addr, llvm::Align(1), mask, other));
      return to_reg(b_.CreateAlignedLoad(vt, addr, llvm::Align(1)));
    }
    llvm::Value* ptrs = b_.CreateGEP(mem_type(p.elem), param_ptrs_[in.index], strip(in.operands[0], s));
    return to_reg(b_.CreateMaskedGather(vt, ptrs, llvm::Align(1), mask, other));
  }

  void store_scalar(const Inst& in) {
    const Param& p = k_.params[in.index];
    auto do_store = [&] {
      b_.CreateStore(scalar(in.operands[1]), elem_ptr(param_ptrs_[in.index], p.elem, scalar(in.operands[0])));
    };
    if (in.operands.size() < 3) return do_store();
    auto* yes = llvm::BasicBlock::Create(ctx_, "st", fn_);
    auto* join = llvm::BasicBlock::Create(ctx_, "st.join", fn_);
    b_.CreateCondBr(scalar(in.operands[2]), yes, join);
    b_.SetInsertPoint(yes);
    do_store();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  void store_strip(const Inst& in, llvm::Value* s, int64_t n) {
    const Param& p = k_.params[in.index];
    llvm::Value* mask = access_mask(in, 2, s, n);
    llvm::Value* v = strip(in.operands[1], s);
    if (type(in.operands[1]).elem == Elem::I1) v = b_.CreateZExt(v, vec(b_.getInt8Ty()));
    if (auto base = contiguous_base(in.operands[0])) {
      llvm::Value* addr = elem_ptr(param_ptrs_[in.index], p.elem, b_.CreateAdd(scalar(*base), s));
      if (mask) b_.CreateMaskedStore(v, addr, llvm::Align(1), mask);
      else b_.CreateAlignedStore(v, addr, llvm::Align(1));
      return;
    }
    llvm::Value* ptrs = b_.CreateGEP(mem_type(p.elem), param_ptrs_[in.index], strip(in.operands[0], s));
    b_.CreateMaskedScatter(v, ptrs, llvm::Align(1), mask);
  }

  // Element i of tile v (a scalar load from its buffer), and the store.
  llvm::Value* at(ValueId v, llvm::Value* i) {
    const Elem e = type(v).elem;
    llvm::Value* x = b_.CreateLoad(mem_type(e), elem_ptr(buf(v), e, i));
    return e == Elem::I1 ? b_.CreateICmpNE(x, b_.getInt8(0)) : x;
  }
  void set_at(ValueId v, llvm::Value* i, llvm::Value* x) {
    const Elem e = type(v).elem;
    if (e == Elem::I1) x = b_.CreateZExt(x, b_.getInt8Ty());
    b_.CreateStore(x, elem_ptr(buf(v), e, i));
  }

  // Row-major strides of a tile shape.
  static std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
    return st;
  }

  void broadcast(const Inst& in) {
    const ValueId r = in.results[0];
    const auto& shape = type(r).shape;
    const auto st = strides_of(shape);
    // source index = out index with the broadcast axis dropped.
    // out index = hi * (n_axis * inner) + i_axis * inner + lo  ->  source hi * inner + lo.
    const int64_t outer = in.index == 0 ? type(r).numel() : st[in.index - 1], inner = st[in.index];
    loop(type(r).numel(), [&](llvm::Value* i) {
      llvm::Value* hi = b_.CreateUDiv(i, b_.getInt64(outer));
      llvm::Value* lo = b_.CreateURem(i, b_.getInt64(inner));
      llvm::Value* src = b_.CreateAdd(b_.CreateMul(hi, b_.getInt64(inner)), lo);
      set_at(r, i, at(in.operands[0], src));
    });
  }

  void trans(const Inst& in) {
    const ValueId r = in.results[0];
    const int64_t rows = type(r).shape[0], cols = type(r).shape[1];
    loop(rows, [&](llvm::Value* i) {
      loop(cols, [&](llvm::Value* j) {
        llvm::Value* src = b_.CreateAdd(b_.CreateMul(j, b_.getInt64(rows)), i);
        set_at(r, b_.CreateAdd(b_.CreateMul(i, b_.getInt64(cols)), j), at(in.operands[0], src));
      });
    });
  }

  // A stack slot for a scalar that loops update.
  llvm::AllocaInst* slot(llvm::Type* t) {
    llvm::IRBuilder<> eb(entry_, entry_->begin());
    return eb.CreateAlloca(t);
  }

  // Folds tile v along one axis: for each (outer, inner) position, the n
  // elements at stride `inner`, in the interpreter's order.
  void reduce(const Inst& in) {
    const ValueId src = in.operands[0];
    const Type& t = type(src);
    const Elem e = t.elem;
    if (e == Elem::F16 || e == Elem::BF16) fail("reduce of " + std::string(elem_name(e)) + ": cast to f32 first");
    const auto st = strides_of(t.shape);
    const int64_t n = t.shape[in.index], inner = st[in.index], outer = t.numel() / (n * inner);
    const ValueId r = in.results[0];
    const bool tile_result = type(r).is_tile();
    if (tile_result) vals_[r].buf = new_buffer(type(r));
    llvm::Value* result_slot = tile_result ? nullptr : slot(reg_type(type(r).elem));
    loop(outer, [&](llvm::Value* o) {
      loop(inner, [&](llvm::Value* j) {
        llvm::Value* first = b_.CreateAdd(b_.CreateMul(o, b_.getInt64(n * inner)), j);
        auto elem_at = [&](llvm::Value* k) { return at(src, b_.CreateAdd(first, b_.CreateMul(k, b_.getInt64(inner)))); };
        llvm::Value* v = fold(in.reduce, e, n, elem_at);
        if (tile_result) set_at(r, b_.CreateAdd(b_.CreateMul(o, b_.getInt64(inner)), j), v);
        else b_.CreateStore(v, result_slot);
      });
    });
    if (!tile_result) vals_[r].scalar = b_.CreateLoad(reg_type(type(r).elem), result_slot);
  }

  llvm::Value* fold(ReduceKind kind, Elem e, int64_t n, const std::function<llvm::Value*(llvm::Value*)>& x) {
    const bool fl = e == Elem::F32;
    llvm::Type* et = reg_type(e);
    if (kind == ReduceKind::Sum && fl) {
      // f32 lanes k % 16 within blocks of 1024, lanes in order in double, blocks in double.
      auto* lanes = slot(llvm::ArrayType::get(b_.getFloatTy(), kSumLanes));
      auto* total = slot(b_.getDoubleTy());
      b_.CreateStore(llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), total);
      loop(b_.getInt64(0), b_.getInt64(n), [&](llvm::Value* blk) {
        for (int64_t l = 0; l < kSumLanes; ++l)
          b_.CreateStore(llvm::ConstantFP::get(b_.getFloatTy(), 0.0), b_.CreateConstGEP2_64(lanes->getAllocatedType(), lanes, 0, l));
        llvm::Value* end = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(blk, b_.getInt64(kSumBlock)), b_.getInt64(n));
        loop(blk, end, [&](llvm::Value* k) {
          llvm::Value* lane = b_.CreateGEP(b_.getFloatTy(), lanes, b_.CreateURem(b_.CreateSub(k, blk), b_.getInt64(kSumLanes)));
          b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getFloatTy(), lane), x(k)), lane);
        });
        llvm::Value* s = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
        for (int64_t l = 0; l < kSumLanes; ++l)
          s = b_.CreateFAdd(s, b_.CreateFPExt(b_.CreateLoad(b_.getFloatTy(), b_.CreateConstGEP2_64(lanes->getAllocatedType(), lanes, 0, l)), b_.getDoubleTy()));
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getDoubleTy(), total), s), total);
      }, b_.getInt64(kSumBlock));
      return b_.CreateFPTrunc(b_.CreateLoad(b_.getDoubleTy(), total), b_.getFloatTy());
    }
    if (kind == ReduceKind::Sum) {
      auto* acc = slot(et);
      b_.CreateStore(llvm::Constant::getNullValue(et), acc);
      loop(n, [&](llvm::Value* k) { b_.CreateStore(b_.CreateAdd(b_.CreateLoad(et, acc), x(k)), acc); });
      return b_.CreateLoad(et, acc);
    }
    // max / min / argmax: the first extreme, the first NaN wins (vector_math's rules).
    auto* best = slot(et);
    auto* best_k = slot(b_.getInt64Ty());
    b_.CreateStore(x(b_.getInt64(0)), best);
    b_.CreateStore(b_.getInt64(0), best_k);
    loop(b_.getInt64(1), b_.getInt64(n), [&](llvm::Value* k) {
      llvm::Value* v = x(k);
      llvm::Value* cur = b_.CreateLoad(et, best);
      llvm::Value* better;
      if (fl) {
        llvm::Value* beats = kind == ReduceKind::Min ? b_.CreateFCmpOLT(v, cur) : b_.CreateFCmpOGT(v, cur);
        better = b_.CreateAnd(b_.CreateFCmpORD(cur, cur), b_.CreateOr(is_nan(v), beats));
      } else {
        better = kind == ReduceKind::Min ? b_.CreateICmpSLT(v, cur) : b_.CreateICmpSGT(v, cur);
      }
      b_.CreateStore(b_.CreateSelect(better, v, cur), best);
      b_.CreateStore(b_.CreateSelect(better, k, b_.CreateLoad(b_.getInt64Ty(), best_k)), best_k);
    });
    return kind == ReduceKind::ArgMax ? b_.CreateLoad(b_.getInt64Ty(), best_k) : b_.CreateLoad(et, best);
  }

  void dot(const Inst& in) {
    const ValueId a = in.operands[0], bm = in.operands[1], c = in.operands[2], r = in.results[0];
    const int64_t M = type(r).shape[0], N = type(r).shape[1], K = type(a).shape[1];
    const Elem ea = type(a).elem;
    if (type(r).elem != Elem::F32) fail("dot accumulates in f32");
    auto f32 = [&](llvm::Value* x) { return cast(x, ea, Elem::F32); };
    auto* acc = slot(b_.getFloatTy());
    loop(M, [&](llvm::Value* i) {
      loop(N, [&](llvm::Value* j) {
        llvm::Value* ij = b_.CreateAdd(b_.CreateMul(i, b_.getInt64(N)), j);
        b_.CreateStore(at(c, ij), acc);
        loop(K, [&](llvm::Value* k) {
          llvm::Value* x = f32(at(a, b_.CreateAdd(b_.CreateMul(i, b_.getInt64(K)), k)));
          llvm::Value* y = f32(at(bm, b_.CreateAdd(b_.CreateMul(k, b_.getInt64(N)), j)));
          b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getFloatTy(), acc), b_.CreateFMul(x, y)), acc);
        });
        set_at(r, ij, b_.CreateLoad(b_.getFloatTy(), acc));
      });
    });
  }

  // Loop-carried scalars live in stack slots, tiles in buffers the body's
  // yield copies into; LLVM's mem2reg turns the slots into phis.
  void for_loop(const Inst& in) {
    const Block& body = *in.body;
    const size_t n_iter = in.operands.size() - 3;
    std::vector<llvm::AllocaInst*> slots(n_iter, nullptr);
    for (size_t i = 0; i < n_iter; ++i) {
      const ValueId init = in.operands[3 + i], arg = body.args[1 + i];
      if (type(init).is_tile()) {
        vals_[arg].buf = new_buffer(type(init));
        copy_tile(buf(init), vals_[arg].buf, type(init));
      } else {
        slots[i] = slot(reg_type(type(init).elem));
        b_.CreateStore(scalar(init), slots[i]);
      }
    }
    loop(scalar(in.operands[0]), scalar(in.operands[1]), [&](llvm::Value* iv) {
      vals_[body.args[0]].scalar = iv;
      for (size_t i = 0; i < n_iter; ++i)
        if (slots[i]) vals_[body.args[1 + i]].scalar = b_.CreateLoad(slots[i]->getAllocatedType(), slots[i]);
      block(body);
      const Inst& y = body.insts.back();
      for (size_t i = 0; i < n_iter; ++i) {
        if (slots[i]) b_.CreateStore(scalar(y.operands[i]), slots[i]);
        else if (y.operands[i] != body.args[1 + i]) copy_tile(buf(y.operands[i]), buf(body.args[1 + i]), type(y.operands[i]));
      }
    }, scalar(in.operands[2]));
    for (size_t i = 0; i < n_iter; ++i) {
      const ValueId res = in.results[i];
      if (slots[i]) vals_[res].scalar = b_.CreateLoad(slots[i]->getAllocatedType(), slots[i]);
      else {
        vals_[res].buf = new_buffer(type(res));
        copy_tile(buf(body.args[1 + i]), vals_[res].buf, type(res));
      }
    }
  }

  void copy_tile(llvm::Value* from, llvm::Value* to, const Type& t) {
    const uint64_t bytes = static_cast<uint64_t>(padded(t.numel())) * m_.getDataLayout().getTypeAllocSize(mem_type(t.elem));
    b_.CreateMemCpy(to, llvm::Align(64), from, llvm::Align(64), bytes);
  }

  const Kernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const int W_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<llvm::Value*> param_ptrs_, dim_vals_;
  llvm::Value* pid_[3] = {};
  std::unordered_map<ValueId, Repr> vals_;
  std::unordered_map<ValueId, const Inst*> defs_;
  std::unordered_map<ValueId, int> uses_;
  std::unordered_map<ValueId, llvm::Value*> cur_;  // values of the strip being emitted
  // Set while the whole strips of a run under a prefix mask are emitted:
  // accesses under this mask need none.
  std::optional<ValueId> full_mask_;
  int64_t tile_bytes_ = 0;
};

}  // namespace

std::unique_ptr<llvm::Module> emit_cpu_kernel(const Kernel& k, const std::string& fn_name, llvm::LLVMContext& ctx,
                                              const CpuTarget& target) {
  auto errors = verify(k);
  if (!errors.empty()) throw std::invalid_argument("cpu emitter: kernel @" + k.name + ": " + errors.front());
  auto m = std::make_unique<llvm::Module>(fn_name, ctx);
  Emitter(k, *m, target).run(fn_name);
  return m;
}

}  // namespace tessera::kir
