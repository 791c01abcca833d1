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
