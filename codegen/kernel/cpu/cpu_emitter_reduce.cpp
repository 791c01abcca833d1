// The CPU emitter's reductions, in the interpreter's order (vector_math.h):
// float sums add element i of a block of 1024 into f32 lane i % 16, a block's
// lanes in order in double, the blocks in double; max, min and argmax give
// the first extreme in element order, or the first NaN.
//
// A 1-D reduction in a run of strip operations (strip_reducible) is folded
// strip by strip inside the run's loop, its operand never stored: sums into
// 16 f32 lanes (a strip of W lanes is W of them), extremes into per-lane
// best values and indices that are combined after the loop, lane by lane,
// by value and then by the smaller index (which gives the first extreme,
// whatever the lanes). Other reductions fold a tile's buffer element by
// element (reduce, fold).
#include "codegen/kernel/cpu/cpu_emitter_internal.h"

namespace tessera::kir::detail {

bool CpuEmitter::strip_reducible(const Inst& in) const {
  const Type& t = type(in.operands[0]);
  if (t.shape.size() != 1 || in.index != 0 || t.elem != Elem::F32) return false;
  return in.reduce != ReduceKind::Sum || W_ <= kSumLanes;
}

void CpuEmitter::begin_strip_reduce(const Inst& in) {
  StripAcc& a = accs_[&in];
  auto* vf = vec(b_.getFloatTy());
  if (in.reduce == ReduceKind::Sum) {
    a.lanes = slot(llvm::ArrayType::get(b_.getFloatTy(), kSumLanes));
    a.total = slot(b_.getDoubleTy());
    b_.CreateStore(llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), a.total);
    zero_lanes(a);
    return;
  }
  a.best = slot(vf);
  a.idx = slot(vec(b_.getInt64Ty()));
  a.have = slot(vec(b_.getInt1Ty()));
  b_.CreateStore(llvm::Constant::getNullValue(vf), a.best);
  b_.CreateStore(llvm::Constant::getNullValue(vec(b_.getInt64Ty())), a.idx);
  b_.CreateStore(llvm::Constant::getNullValue(vec(b_.getInt1Ty())), a.have);
}

void CpuEmitter::zero_lanes(const StripAcc& a) {
  for (int64_t l = 0; l < kSumLanes; ++l)
    b_.CreateStore(llvm::ConstantFP::get(b_.getFloatTy(), 0.0), b_.CreateConstGEP2_64(a.lanes->getAllocatedType(), a.lanes, 0, l));
}

// A block's 16 lanes added in order in double, into the total; the lanes cleared.
void CpuEmitter::flush_lanes(const StripAcc& a) {
  llvm::Value* s = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
  for (int64_t l = 0; l < kSumLanes; ++l) {
    llvm::Value* lane = b_.CreateLoad(b_.getFloatTy(), b_.CreateConstGEP2_64(a.lanes->getAllocatedType(), a.lanes, 0, l));
    s = b_.CreateFAdd(s, b_.CreateFPExt(lane, b_.getDoubleTy()));
  }
  b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getDoubleTy(), a.total), s), a.total);
  zero_lanes(a);
}

void CpuEmitter::strip_reduce_step(const Inst& in, llvm::Value* s, int64_t n) {
  const StripAcc& a = accs_.at(&in);
  llvm::Value* v = strip(in.operands[0], s);
  llvm::Value* inside = n % W_ != 0 ? in_tile(s, n) : nullptr;
  if (in.reduce == ReduceKind::Sum) {
    // Lanes past the tile add exactly +0 (a lane is never -0: it starts at +0).
    if (inside) v = b_.CreateSelect(inside, v, llvm::Constant::getNullValue(v->getType()));
    llvm::Value* at = b_.CreateGEP(b_.getFloatTy(), a.lanes, b_.CreateAnd(s, b_.getInt64(kSumLanes - 1)));
    b_.CreateAlignedStore(b_.CreateFAdd(b_.CreateAlignedLoad(v->getType(), at, llvm::Align(4)), v), at, llvm::Align(4));
    if (n > kSumBlock) {  // a block ends with this strip: into the total
      auto* flush = llvm::BasicBlock::Create(ctx_, "sum.block", fn_);
      auto* next = llvm::BasicBlock::Create(ctx_, "sum.next", fn_);
      llvm::Value* ends = b_.CreateICmpEQ(b_.CreateAnd(b_.CreateAdd(s, b_.getInt64(W_)), b_.getInt64(kSumBlock - 1)), b_.getInt64(0));
      b_.CreateCondBr(ends, flush, next);
      b_.SetInsertPoint(flush);
      flush_lanes(a);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    }
    return;
  }
  // Each lane keeps its first extreme (or first NaN) and its element index.
  auto* vf = vec(b_.getFloatTy());
  auto* vi = vec(b_.getInt64Ty());
  auto* vb = vec(b_.getInt1Ty());
  llvm::Value* best = b_.CreateLoad(vf, a.best);
  llvm::Value* have = b_.CreateLoad(vb, a.have);
  llvm::Value* beats = in.reduce == ReduceKind::Min ? b_.CreateFCmpOLT(v, best) : b_.CreateFCmpOGT(v, best);
  llvm::Value* take = b_.CreateOr(b_.CreateNot(have), b_.CreateAnd(b_.CreateNot(is_nan(best)), b_.CreateOr(is_nan(v), beats)));
  if (inside) take = b_.CreateAnd(take, inside);
  std::vector<llvm::Constant*> iota;
  for (int i = 0; i < W_; ++i) iota.push_back(b_.getInt64(i));
  llvm::Value* index = b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(W_), s), llvm::ConstantVector::get(iota));
  b_.CreateStore(b_.CreateSelect(take, v, best), a.best);
  b_.CreateStore(b_.CreateSelect(take, index, b_.CreateLoad(vi, a.idx)), a.idx);
  b_.CreateStore(inside ? b_.CreateOr(have, inside) : llvm::Constant::getAllOnesValue(vb), a.have);
}

void CpuEmitter::end_strip_reduce(const Inst& in, int64_t n) {
  const StripAcc& a = accs_.at(&in);
  const ValueId r = in.results[0];
  if (in.reduce == ReduceKind::Sum) {
    if (n <= kSumBlock || n % kSumBlock != 0) flush_lanes(a);  // the last, partial block
    llvm::Value* sum = b_.CreateLoad(b_.getDoubleTy(), a.total);
    vals_[r].scalar = type(r).elem == Elem::F64 ? sum : b_.CreateFPTrunc(sum, b_.getFloatTy());
    return;
  }
  // The lanes' candidates combined: a NaN before any number, then the
  // extreme; among equals (NaNs, or +0 and -0), the smaller index.
  llvm::Value* best = b_.CreateLoad(vec(b_.getFloatTy()), a.best);
  llvm::Value* idx = b_.CreateLoad(vec(b_.getInt64Ty()), a.idx);
  llvm::Value* have = b_.CreateLoad(vec(b_.getInt1Ty()), a.have);
  llvm::Value* bv = llvm::ConstantFP::get(b_.getFloatTy(), 0.0);
  llvm::Value* bi = b_.getInt64(0);
  llvm::Value* bh = b_.getFalse();
  for (int l = 0; l < W_; ++l) {
    llvm::Value* v = b_.CreateExtractElement(best, uint64_t(l));
    llvm::Value* i = b_.CreateExtractElement(idx, uint64_t(l));
    llvm::Value* h = b_.CreateExtractElement(have, uint64_t(l));
    llvm::Value* earlier = b_.CreateICmpSLT(i, bi);
    llvm::Value* v_nan = is_nan(v);
    llvm::Value* b_nan = is_nan(bv);
    llvm::Value* beats = in.reduce == ReduceKind::Min ? b_.CreateFCmpOLT(v, bv) : b_.CreateFCmpOGT(v, bv);
    llvm::Value* ties = b_.CreateAnd(b_.CreateFCmpOEQ(v, bv), earlier);
    llvm::Value* nan_wins = b_.CreateAnd(v_nan, b_.CreateOr(b_.CreateNot(b_nan), earlier));
    llvm::Value* num_wins = b_.CreateAnd(b_.CreateNot(b_.CreateOr(v_nan, b_nan)), b_.CreateOr(beats, ties));
    llvm::Value* better = b_.CreateAnd(h, b_.CreateOr(b_.CreateNot(bh), b_.CreateOr(nan_wins, num_wins)));
    bv = b_.CreateSelect(better, v, bv);
    bi = b_.CreateSelect(better, i, bi);
    bh = b_.CreateOr(bh, h);
  }
  vals_[r].scalar = in.reduce == ReduceKind::ArgMax ? bi : bv;
}

// Folds tile v along one axis: for each (outer, inner) position, the n
// elements at stride `inner`, in the interpreter's order.
void CpuEmitter::reduce(const Inst& in) {
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
      llvm::Value* v = fold(in.reduce, e, type(r).elem, n, elem_at);
      if (tile_result) set_at(r, b_.CreateAdd(b_.CreateMul(o, b_.getInt64(inner)), j), v);
      else b_.CreateStore(v, result_slot);
    });
  });
  if (!tile_result) vals_[r].scalar = b_.CreateLoad(reg_type(type(r).elem), result_slot);
}

llvm::Value* CpuEmitter::fold(ReduceKind kind, Elem e, Elem acc, int64_t n,
                              const std::function<llvm::Value*(llvm::Value*)>& x) {
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
    llvm::Value* sum = b_.CreateLoad(b_.getDoubleTy(), total);
    return acc == Elem::F64 ? sum : b_.CreateFPTrunc(sum, b_.getFloatTy());
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

}  // namespace tessera::kir::detail
