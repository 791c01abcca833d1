// The CPU emitter's param loads and stores: vector accesses where offsets
// are contiguous, gathers and scatters otherwise, masked where needed.
#include "codegen/kernel/cpu/cpu_emitter_internal.h"

namespace tessera::kir::detail {

// The lanes of a strip that the IR's mask and the tile's end allow (null:
// all of them).
llvm::Value* CpuEmitter::access_mask(const Inst& in, size_t mask_at, llvm::Value* s, int64_t n) {
  // A whole strip under the run's prefix mask: every lane is inside it and inside the tile.
  if (full_mask_ && in.operands.size() > mask_at && in.operands[mask_at] == *full_mask_) return nullptr;
  llvm::Value* m = in.operands.size() > mask_at ? strip(in.operands[mask_at], s) : nullptr;
  if (n % W_ != 0) {
    llvm::Value* inside = in_tile(s, n);
    m = m ? b_.CreateAnd(m, inside) : inside;
  }
  return m;
}
llvm::Value* CpuEmitter::load_strip(const Inst& in, llvm::Value* s, int64_t n) {
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
// Element by element, each load behind a branch (outside the matrix there
// may be no memory): the CPU runs no block load in production (a fused
// attention's step is the interpreter's kernel there), so this is the
// simple form that checks the IR's semantics.
void CpuEmitter::block_load(const Inst& in) {
  const Param& p = k_.params[in.index];
  const ValueId r = in.results[0];
  const int64_t cols = type(r).shape[1];
  llvm::Value* base = scalar(in.operands[0]);
  llvm::Value* r0 = scalar(in.operands[1]);
  llvm::Value* c0 = scalar(in.operands[2]);
  llvm::Value* nrows = scalar(in.operands[3]);
  llvm::Value* ncols = scalar(in.operands[4]);
  llvm::Value* stride = scalar(in.operands[5]);
  llvm::Type* mt = mem_type(p.elem);
  loop(type(r).shape[0], [&](llvm::Value* i) {
    loop(cols, [&](llvm::Value* j) {
      llvm::Value* mr = b_.CreateAdd(r0, in.transposed ? j : i);
      llvm::Value* mc = b_.CreateAdd(c0, in.transposed ? i : j);
      llvm::Value* inside = b_.CreateAnd(b_.CreateICmpSLT(mr, nrows), b_.CreateICmpSLT(mc, ncols));
      llvm::BasicBlock* from = b_.GetInsertBlock();
      auto* yes = llvm::BasicBlock::Create(ctx_, "blk", fn_);
      auto* join = llvm::BasicBlock::Create(ctx_, "blk.join", fn_);
      b_.CreateCondBr(inside, yes, join);
      b_.SetInsertPoint(yes);
      llvm::Value* at_elem = b_.CreateAdd(base, b_.CreateAdd(b_.CreateMul(mr, stride), mc));
      llvm::Value* v = b_.CreateLoad(mt, elem_ptr(param_ptrs_[in.index], p.elem, at_elem));
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      auto* phi = b_.CreatePHI(mt, 2);
      phi->addIncoming(v, yes);
      phi->addIncoming(llvm::Constant::getNullValue(mt), from);
      llvm::Value* x = p.elem == Elem::I1 ? b_.CreateICmpNE(phi, b_.getInt8(0)) : static_cast<llvm::Value*>(phi);
      set_at(r, b_.CreateAdd(b_.CreateMul(i, b_.getInt64(cols)), j), x);
    });
  });
}
void CpuEmitter::store_scalar(const Inst& in) {
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
void CpuEmitter::store_strip(const Inst& in, llvm::Value* s, int64_t n) {
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

}  // namespace tessera::kir::detail
