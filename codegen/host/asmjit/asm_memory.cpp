// The T1 assembler's accesses to interpreter Values in memory (asm_state.h):
// loads that guard the tag, stores with reference counting, and the
// addresses of list and tensor elements.
//
// A store of an object gives it a reference first, then releases the
// register's old value (if an object): freeing one whose count reached zero
// is the only call into C++, off the path. A register whose tag the trace
// knows (slot_tags_) to be a scalar's needs no release.
#include <cstdint>
#include <string>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/trace_abi.h"

namespace tessera::jit::t1 {

using namespace asmjit;
using x86::CondCode;

namespace {

x86::Mem sized(x86::Mem m, uint32_t bytes) {
  m.setSize(bytes);
  return m;
}

}  // namespace

// Loads the Value at [base + disp], guarding its tag.
void TraceAssembler::load_guarded(IRRef r, const x86::Gp& base, int32_t disp, IRType t, uint16_t snap) {
  const uint8_t tag = static_cast<uint8_t>(tag_for(t));
  a_.cmp(x86::byte_ptr(base, disp + static_cast<int32_t>(Value::kTagOffset)), tag);
  jump_to_exit(CondCode::kNE, snap);
  load_typed(r, base, disp, t);
}

// The payload of a value whose tag is known to be t's.
void TraceAssembler::load_typed(IRRef r, const x86::Gp& base, int32_t disp, IRType t) {
  const x86::Mem payload = x86::qword_ptr(base, disp + static_cast<int32_t>(Value::kPayloadOffset));
  if (t == IRType::Float) {
    const x86::Xmm d = def_xmm(r);
    a_.movsd(d, payload);
    commit(r, d);
    return;
  }
  const x86::Gp d = def_gpr(r);
  if (t == IRType::Nil) a_.xor_(d.r32(), d.r32());
  else if (t == IRType::Bool) a_.movzx(d.r32(), x86::byte_ptr(base, disp + static_cast<int32_t>(Value::kPayloadOffset)));
  else a_.mov(d, payload);
  commit(r, d);
}

void TraceAssembler::load_number(IRRef r, const x86::Gp& base, int32_t disp, uint16_t snap) {
  const x86::Mem tag = x86::byte_ptr(base, disp + static_cast<int32_t>(Value::kTagOffset));
  const x86::Mem payload = x86::qword_ptr(base, disp + static_cast<int32_t>(Value::kPayloadOffset));
  const x86::Xmm d = def_xmm(r);
  Label not_float = a_.newLabel(), done = a_.newLabel();
  a_.cmp(tag, static_cast<uint8_t>(Tag::Float));
  a_.jne(not_float);
  a_.movsd(d, payload);
  a_.jmp(done);
  a_.bind(not_float);
  a_.cmp(tag, static_cast<uint8_t>(Tag::Int));
  jump_to_exit(CondCode::kNE, snap);
  a_.xorps(d, d);  // cvtsi2sd writes only the low half: break the dependency
  a_.cvtsi2sd(d, payload);
  a_.bind(done);
  commit(r, d);
}

// *dst = v: the new object (if any) gains a reference, then the old one
// (if any) loses one; freeing an object whose count reached zero is the
// only call into C++, off the path. `dst` must not use rax, rdx or r10.
void TraceAssembler::store_value(const x86::Mem& dst_tag, const x86::Mem& dst_payload, IRRef v) {
  check_ref(v);
  const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[v].type));
  if (tag >= kFirstObjectTag) {
    const x86::Gp p = gpr(v, x86::r10);
    a_.add(x86::dword_ptr(p, static_cast<int32_t>(env_.obj_refcount_offset)), 1);
  }
  a_.movzx(x86::eax, dst_tag);
  a_.mov(x86::rdx, dst_payload);
  a_.mov(dst_tag, tag);
  store_payload(dst_payload, v, x86::r10);  // rax and rdx hold the old value
  Label release = a_.newLabel(), done = a_.newLabel();
  a_.cmp(x86::al, kFirstObjectTag);
  a_.jae(release);
  a_.bind(done);
  const uint32_t at = cur_;
  cold_.push_back([this, release, done, at] {
    a_.bind(release);
    a_.sub(x86::dword_ptr(x86::rdx, static_cast<int32_t>(env_.obj_refcount_offset)), 1);
    a_.jnz(done);
    save_live(at + 1);
    a_.mov(x86::rdi, x86::rdx);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_free));
    restore_live(at + 1);
    a_.jmp(done);
  });
}

// SSTORE: a slot whose tag is known to be a scalar's needs no reference
// counting, and with the same tag only the payload changes.
void TraceAssembler::store_slot(uint32_t slot, IRRef v) {
  check_ref(v);
  const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[v].type));
  auto known = slot_tags_.find(slot);
  if (known != slot_tags_.end() && known->second < kFirstObjectTag && tag < kFirstObjectTag) {
    if (known->second != tag) a_.mov(reg_tag(slot), tag);
    store_payload(reg_payload(slot), v, x86::r10);
  } else {
    store_value(reg_tag(slot), reg_payload(slot), v);
  }
  slot_tags_[slot] = tag;
}

void TraceAssembler::report_global_store(uint32_t index) {
  a_.mov(x86::rax, reinterpret_cast<uint64_t>(env_.global_watch + index));
  a_.cmp(x86::byte_ptr(x86::rax), 0);
  Label report = a_.newLabel(), done = a_.newLabel();
  a_.jne(report);
  a_.bind(done);
  const uint32_t at = cur_;
  cold_.push_back([this, report, done, at, index] {
    a_.bind(report);
    save_live(at + 1);
    a_.mov(x86::rdi, x86::qword_ptr(x86::rsp, kCtx));
    a_.mov(x86::esi, index);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_global_stored));
    restore_live(at + 1);
    a_.jmp(done);
  });
}

// r11 = address of element `index` of list `list`.
void TraceAssembler::element_addr(IRRef list, IRRef index) {
  const x86::Gp l = gpr(list, x86::r11);
  a_.mov(x86::r11, x86::qword_ptr(l, static_cast<int32_t>(env_.list.items_offset + env_.list.begin_offset)));
  const x86::Gp i = gpr(index, x86::r10);
  if (i.id() != x86::r10.id()) a_.mov(x86::r10, i);
  a_.shl(x86::r10, 4);  // * sizeof(Value)
  a_.add(x86::r11, x86::r10);
}

DType TraceAssembler::tensor_dtype(IRRef tidx) {
  if (tidx >= ir_.size() || ir_[tidx].op != IROp::TIDX) fail("tensor element index must be a TIDX");
  return static_cast<DType>(ir_[tidx].op2);
}

// A tensor whose elements a device holds is copied back before the trace
// touches them (vm/tensor/device_copy.h): a test of its device copy inline,
// the call on the cold path.
void TraceAssembler::fetch_if_on_device(IRRef tensor) {
  const x86::Gp t = gpr(tensor, x86::r11);
  a_.cmp(x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.device_copy_offset)), 0);
  Label fetch = a_.newLabel(), done = a_.newLabel();
  a_.jne(fetch);
  a_.bind(done);
  const uint32_t at = cur_;
  cold_.push_back([this, fetch, done, at, tensor] {
    a_.bind(fetch);
    save_live(at);
    load_arg(x86::rdi, tensor);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_tensor_fetch));
    restore_live(at);
    a_.jmp(done);
  });
}

// A memory operand for element `tidx` of `tensor` (through r11 and r10).
x86::Mem TraceAssembler::tensor_element(IRRef tensor, IRRef tidx) {
  fetch_if_on_device(tensor);
  const DType d = tensor_dtype(tidx);
  const uint32_t shift = d == DType::I64 ? 3 : d == DType::Bool ? 0 : 2;
  const x86::Gp t = gpr(tensor, x86::r11);
  a_.mov(x86::r11, x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.data_offset)));
  const x86::Gp i = gpr(tidx, x86::r10);
  return x86::ptr(x86::r11, i, shift);
}

void TraceAssembler::lower_tload(IRRef r, const IRIns& ins) {
  const x86::Mem m = tensor_element(ins.op1, ins.op2);
  switch (tensor_dtype(ins.op2)) {
    case DType::F32: {
      if (ins.type != IRType::Float) fail("TLOAD of f32 must produce a float");
      const x86::Xmm d = def_xmm(r);
      a_.cvtss2sd(d, sized(m, 4));
      commit(r, d);
      return;
    }
    case DType::I32: a_.movsxd(x86::rax, sized(m, 4)); break;
    case DType::I64: a_.mov(x86::rax, sized(m, 8)); break;
    case DType::Bool:
      a_.cmp(sized(m, 1), 0);
      a_.setne(x86::al);
      a_.movzx(x86::eax, x86::al);
      break;
    default: fail("TLOAD of an unsupported dtype");
  }
  if (ins.type == IRType::Float) fail("TLOAD of an integer dtype must not produce a float");
  commit(r, x86::rax);
}

void TraceAssembler::lower_tstore(const IRIns& ins) {
  if (ins.op1 >= ir_.size() || ir_[ins.op1].op != IROp::TREF) fail("TSTORE's op1 must be a TREF");
  check_ref(ins.op2);
  const x86::Gp addr = gpr(ins.op1, x86::r11);
  const IRType vt = ir_[ins.op2].type;
  // The conversions of TensorObj::set_f / set_i.
  switch (tensor_dtype(ir_[ins.op1].op2)) {
    case DType::F32: {
      if (vt != IRType::Int && vt != IRType::Float) fail("TSTORE into f32 needs a number");
      x86::Xmm x = x86::xmm0;
      if (vt == IRType::Int) {
        a_.xorps(x86::xmm0, x86::xmm0);
        a_.cvtsi2sd(x86::xmm0, gpr(ins.op2, x86::rax));
      } else {
        x = xmm(ins.op2, x86::xmm0);
      }
      a_.cvtsd2ss(x86::xmm1, x);
      a_.movss(x86::dword_ptr(addr), x86::xmm1);
      return;
    }
    case DType::I32:
      if (vt != IRType::Int) fail("TSTORE into i32 needs an int");
      a_.mov(x86::dword_ptr(addr), gpr(ins.op2, x86::rax).r32());
      return;
    case DType::I64:
      if (vt != IRType::Int) fail("TSTORE into i64 needs an int");
      a_.mov(x86::qword_ptr(addr), gpr(ins.op2, x86::rax));
      return;
    case DType::Bool:
      if (vt != IRType::Bool) fail("TSTORE into bool needs a bool");
      a_.mov(x86::byte_ptr(addr), gpr(ins.op2, x86::rax).r8());
      return;
    default: fail("TSTORE of an unsupported dtype");
  }
}

}  // namespace tessera::jit::t1
