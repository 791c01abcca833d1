// Interpreter Values in memory, in the LLVM lowering (lower_state.h): loads
// that guard the tag, stores with Value's reference counting inline (only
// freeing an object calls into C++), and the addresses of list and tensor
// elements.
#include <llvm/IR/MDBuilder.h>

#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_value_tags.h"

namespace tessera::jit::t2 {

// Loads a Value at `addr`, guarding that its tag matches `t`.
llvm::Value* Lowering::load_guarded(llvm::Value* addr, IRType t, uint16_t snap) {
  const uint8_t tag = static_cast<uint8_t>(tag_for(t));
  llvm::Value* got = b_.CreateLoad(i8_, byte_gep(addr, tessera::Value::kTagOffset));
  guard(b_.CreateICmpEQ(got, llvm::ConstantInt::get(i8_, tag)), snap);
  return load_typed(addr, t);
}

llvm::Value* Lowering::load_number(llvm::Value* addr, uint16_t snap) {
  llvm::Value* tag = b_.CreateLoad(i8_, byte_gep(addr, tessera::Value::kTagOffset));
  llvm::Value* is_float = b_.CreateICmpEQ(tag, llvm::ConstantInt::get(i8_, static_cast<uint8_t>(Tag::Float)));
  llvm::Value* is_int = b_.CreateICmpEQ(tag, llvm::ConstantInt::get(i8_, static_cast<uint8_t>(Tag::Int)));
  guard(b_.CreateOr(is_float, is_int), snap);
  llvm::Value* bits = b_.CreateLoad(i64_, byte_gep(addr, tessera::Value::kPayloadOffset));
  llvm::Value* as_float = b_.CreateBitCast(bits, f64_);
  return b_.CreateSelect(is_float, as_float, b_.CreateSIToFP(bits, f64_));
}

// The payload of a value whose tag is known to be t's.
llvm::Value* Lowering::load_typed(llvm::Value* addr, IRType t) {
  if (t == IRType::Nil) return llvm::ConstantInt::get(i64_, 0);
  llvm::Value* p = byte_gep(addr, tessera::Value::kPayloadOffset);
  llvm::Type* ty = type_of(t);
  if (ty == i1_) return b_.CreateICmpNE(b_.CreateLoad(i8_, p), llvm::ConstantInt::get(i8_, 0));
  return b_.CreateLoad(ty, p);
}

// SSTORE: where the slot's current tag is known to be a scalar's (an SLOAD
// guarded it, or the trace stored it), no reference counting is needed,
// and with the same tag only the payload changes.
void Lowering::store_slot(uint32_t slot, IRRef v) {
  llvm::Value* dst = slot_addr(base_, slot);
  const uint8_t tag = static_cast<uint8_t>(tag_for(type_of_ref(v)));
  const uint8_t obj = static_cast<uint8_t>(Tag::Str);
  auto known = slot_tags_.find(slot);
  if (known != slot_tags_.end() && known->second < obj && tag < obj) {
    if (known->second != tag) b_.CreateStore(llvm::ConstantInt::get(i8_, tag), dst);
    b_.CreateStore(to_payload(value_of(v)),
                   b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset));
  } else {
    store_value(dst, v);
  }
  slot_tags_[slot] = tag;
}

// *dst = v with Value's reference counting, inline: the new object (if
// any) gains a reference first, then the old one (if any) loses one; only
// freeing an object whose count reached zero calls into C++.
void Lowering::store_value(llvm::Value* dst, IRRef v) {
  const IRType t = type_of_ref(v);
  const uint8_t tag = static_cast<uint8_t>(tag_for(t));
  llvm::Value* payload = to_payload(value_of(v));
  llvm::Value* payload_addr = b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset);
  llvm::Value* old_tag = b_.CreateLoad(i8_, dst);
  llvm::Value* old_payload = b_.CreateLoad(i64_, payload_addr);
  if (tag >= static_cast<uint8_t>(Tag::Str)) add_refcount(payload, 1);
  b_.CreateStore(llvm::ConstantInt::get(i8_, tag), dst);
  b_.CreateStore(payload, payload_addr);

  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* release = llvm::BasicBlock::Create(c_, "store.release", fn);
  auto* free = llvm::BasicBlock::Create(c_, "store.free", fn);
  auto* done = llvm::BasicBlock::Create(c_, "store.done", fn);
  llvm::Value* old_is_obj =
      b_.CreateICmpUGE(old_tag, llvm::ConstantInt::get(i8_, static_cast<uint8_t>(Tag::Str)));
  b_.CreateCondBr(old_is_obj, release, done);
  b_.SetInsertPoint(release);
  llvm::Value* left = add_refcount(old_payload, -1);
  llvm::MDBuilder md(c_);
  b_.CreateCondBr(b_.CreateICmpEQ(left, llvm::ConstantInt::get(i32_, 0)), free, done,
                  md.createBranchWeights(1, 1u << 10));
  b_.SetInsertPoint(free);
  call_helper(trace_helper("tessera_jit_free"), {old_payload});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

// Adds `delta` to the reference count of the object at address `payload`
// and returns the new count.
llvm::Value* Lowering::add_refcount(llvm::Value* payload, int delta) {
  llvm::Value* rc = byte_gep(b_.CreateIntToPtr(payload, ptr_), env_.obj_refcount_offset);
  llvm::Value* n = b_.CreateAdd(b_.CreateLoad(i32_, rc), llvm::ConstantInt::getSigned(i32_, delta));
  b_.CreateStore(n, rc);
  return n;
}

llvm::Value* Lowering::list_begin(llvm::Value* list) {
  return b_.CreateLoad(ptr_, byte_gep(list, env_.list.items_offset + env_.list.begin_offset));
}

llvm::Value* Lowering::list_storage(IRRef list) {
  if (in_loop_) {
    auto hoisted = loop_storage_.find(list);
    if (hoisted != loop_storage_.end()) return hoisted->second;
  }
  return list_begin(value_of(list));
}

// Where no instruction of the loop body may resize a list (only the helpers
// ir.def marks clob do: calls, pushes, frame pops), the storage pointer of a
// list the body indexes and that is the same object in every iteration (defined
// before LOOP, not carried by a PHI) is read once, before the loop. LLVM cannot
// prove this itself: an element store may, for all it knows, write the header.
void Lowering::hoist_list_storage(IRRef loop) {
  if (ir_.loop_body_clobbers_memory()) return;
  std::vector<bool> carried(ir_.size(), false);
  for (const LoopPhi& ph : phis_) carried[ph.a] = true;
  for (IRRef r = loop + 1; r < ir_.size(); ++r) {
    const IRIns& in = ir_[r];
    if (in.op != IROp::LLOAD && in.op != IROp::LLOADN && in.op != IROp::LREF) continue;
    if (in.op1 >= loop || carried[in.op1] || loop_storage_.count(in.op1)) continue;
    loop_storage_[in.op1] = list_begin(value_of(in.op1));
  }
}

// An index `x + K` or `x - K` (a stencil's u[i - 1], u[i + 1]) is addressed
// as (x << 4) + 16 * K, so the accesses of one loop share the shift of x and
// fold K into the addressing mode. LLVM does not do it itself when the index
// has other uses (an exit's snapshot keeps i - 1), and sizeof(Value) = 16 is
// past x86's largest scale.
llvm::Value* Lowering::element_addr(IRRef list, IRRef index) {
  llvm::Value* begin = list_storage(list);
  const IRIns& ix = ir_[index];
  int64_t k = 0;
  IRRef x = index;
  // Only an index computed here, in the same region: in the loop, an index
  // defined before LOOP may be loop-carried (its PHI's), and its operand's
  // value here is not the one it was computed from.
  const bool same_region = !in_loop_ || index > loop_;
  if (same_region && (ix.op == IROp::ADD || ix.op == IROp::SUB) && ir_[ix.op2].op == IROp::KINT &&
      !ir_is_const(ir_[ix.op1].op)) {
    x = ix.op1;
    k = ir_.const_int(ix.op2);
    if (ix.op == IROp::SUB) k = static_cast<int64_t>(0 - static_cast<uint64_t>(k));
  } else if (same_region && ix.op == IROp::ADD && ir_[ix.op1].op == IROp::KINT && !ir_is_const(ir_[ix.op2].op)) {
    x = ix.op2;
    k = ir_.const_int(ix.op1);
  }
  llvm::Value* off = b_.CreateShl(value_of(x), 4);  // * sizeof(Value)
  if (k != 0) off = b_.CreateAdd(off, llvm::ConstantInt::get(i64_, static_cast<uint64_t>(k) << 4));
  return b_.CreateGEP(i8_, begin, off);
}

DType Lowering::tensor_dtype(IRRef tidx) {
  if (tidx >= ir_.size() || ir_[tidx].op != IROp::TIDX) fail("tensor element index must be a TIDX");
  return static_cast<DType>(ir_[tidx].op2);
}

// A tensor whose elements a device holds is copied back before the trace
// touches them (vm/tensor/device_copy.h): a test of its device copy, and the
// call on an unlikely branch.
void Lowering::fetch_if_on_device(llvm::Value* tensor) {
  llvm::Value* copy = b_.CreateLoad(ptr_, byte_gep(tensor, env_.tensor.device_copy_offset));
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* fetch = llvm::BasicBlock::Create(c_, "tensor.fetch", fn);
  auto* done = llvm::BasicBlock::Create(c_, "tensor.here", fn);
  llvm::MDBuilder md(c_);
  b_.CreateCondBr(b_.CreateIsNotNull(copy), fetch, done, md.createBranchWeights(1, 1u << 10));
  b_.SetInsertPoint(fetch);
  call_helper(trace_helper("tessera_jit_tensor_fetch"), {tensor});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value* Lowering::tensor_element_addr(IRRef tensor, IRRef tidx) {
  const DType d = tensor_dtype(tidx);
  const uint64_t size = d == DType::I64 ? 8 : d == DType::Bool ? 1 : 4;
  fetch_if_on_device(value_of(tensor));
  llvm::Value* data = b_.CreateLoad(ptr_, byte_gep(value_of(tensor), env_.tensor.data_offset));
  return b_.CreateGEP(i8_, data, b_.CreateMul(value_of(tidx), llvm::ConstantInt::get(i64_, size)));
}

}  // namespace tessera::jit::t2
