// The CPU emitter's operations on whole tiles: reductions in the
// interpreter's order, dot, broadcast, trans; counted loops.
#include "codegen/kernel/cpu/cpu_emitter_internal.h"

namespace tessera::kir::detail {

void CpuEmitter::broadcast(const Inst& in) {
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
void CpuEmitter::trans(const Inst& in) {
  const ValueId r = in.results[0];
  const int64_t rows = type(r).shape[0], cols = type(r).shape[1];
  loop(rows, [&](llvm::Value* i) {
    loop(cols, [&](llvm::Value* j) {
      llvm::Value* src = b_.CreateAdd(b_.CreateMul(j, b_.getInt64(rows)), i);
      set_at(r, b_.CreateAdd(b_.CreateMul(i, b_.getInt64(cols)), j), at(in.operands[0], src));
    });
  });
}
// f32 tiles: the vector-math micro-kernel (tessera_kernel_dot_f32, the
// interpreter's own, kernel_runtime.h) on the result's buffer, which starts
// as the accumulator; half-precision tiles: widened element by element in
// the same order (each product rounded, added in order of k).
void CpuEmitter::dot(const Inst& in) {
  const ValueId a = in.operands[0], bm = in.operands[1], c = in.operands[2], r = in.results[0];
  const int64_t M = type(r).shape[0], N = type(r).shape[1], K = type(a).shape[1];
  const Elem ea = type(a).elem;
  if (type(r).elem != Elem::F32) fail("dot accumulates in f32");
  if (ea == Elem::F32) {
    copy_tile(buf(c), buf(r), type(r));
    auto* i64 = b_.getInt64Ty();
    auto* ptr = b_.getPtrTy();
    auto callee = m_.getOrInsertFunction("tessera_kernel_dot_f32",
                                         llvm::FunctionType::get(b_.getVoidTy(), {i64, i64, i64, ptr, ptr, ptr}, false));
    b_.CreateCall(callee, {b_.getInt64(M), b_.getInt64(N), b_.getInt64(K), buf(a), buf(bm), buf(r)});
    return;
  }
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
void CpuEmitter::for_loop(const Inst& in) {
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
void CpuEmitter::copy_tile(llvm::Value* from, llvm::Value* to, const Type& t) {
  const uint64_t bytes = static_cast<uint64_t>(padded(t.numel())) * m_.getDataLayout().getTypeAllocSize(mem_type(t.elem));
  b_.CreateMemCpy(to, llvm::Align(64), from, llvm::Align(64), bytes);
}

}  // namespace tessera::kir::detail
