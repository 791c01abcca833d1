// The T1 assembler's x86 operand emitter (asm_state.h): where a value lives
// (its register, its frame slot, or a constant), operands and results for
// instructions, moves, and constant data placed after the code.
//
// A value's register comes from the linear-scan allocation; a value without
// one lives in its frame slot. Operands of an instruction are the value's
// register, its slot as a memory operand, or an immediate; a result is
// computed in the value's register or, for a spilled value, in a scratch
// (r11, xmm1) that commit() stores to its slot.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/host/asmjit/asm_state.h"

namespace tessera::jit::t1 {

using namespace asmjit;

namespace {

// Register ids (x86-64 encodings).
enum : uint8_t { RAX = 0, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };

}  // namespace

// The allocatable registers: call-clobbered ones first (most values do not
// cross a call), then those a C call preserves. rax, rdx, r10, r11, xmm0 and
// xmm1 are scratch; r12 is the base (kBase); rsp and rbp are left alone.
RegisterSet t1_registers() {
  RegisterSet s;
  s.gpr = {RCX, RSI, RDI, R8, R9, RBX, R13, R14, R15};
  s.gpr_call_preserved = (1u << RBX) | (1u << R13) | (1u << R14) | (1u << R15);
  for (uint8_t x = 2; x < 16; ++x) s.xmm.push_back(x);
  return s;
}

void TraceAssembler::check_ref(IRRef r) const {
  if (r >= ir_.size()) fail("reference " + std::to_string(r) + " is out of range");
  if (!ir_is_const(ir_[r].op) && !has_value(ir_[r]))
    fail("reference " + std::to_string(r) + " (" + ir_op_info(ir_[r].op).name + ") has no value");
  if (!ir_is_const(ir_[r].op) && cur_ < ir_.size() && r >= cur_ && ir_[cur_].op != IROp::PHI)
    fail("reference " + std::to_string(r) + " is used before its definition");
}

bool TraceAssembler::fits_i32(uint64_t v) {
  const auto s = static_cast<int64_t>(v);
  return s >= INT32_MIN && s <= INT32_MAX;
}

x86::Mem TraceAssembler::slot_mem(IRRef r) const {
  return x86::qword_ptr(x86::rsp, spill_base_ + 8 * static_cast<int32_t>(ra_.slot[r]));
}

// The raw 64-bit payload of a constant.
uint64_t TraceAssembler::const_bits(IRRef r) const {
  const IRIns& k = ir_[r];
  switch (k.op) {
    case IROp::KNIL: return 0;
    case IROp::KBOOL: return k.op1 != 0 ? 1 : 0;
    case IROp::KINT: return static_cast<uint64_t>(ir_.const_int(r));
    case IROp::KFLOAT: {
      double d = ir_.const_float(r);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return bits;
    }
    case IROp::KOBJ: return reinterpret_cast<uint64_t>(ir_.const_ptr(r));
    default: fail("not a constant");
  }
}

// A GPR holding `r` (its own register, or `scratch` loaded with it).
x86::Gp TraceAssembler::gpr(IRRef r, const x86::Gp& scratch) {
  check_ref(r);
  if (is_float(r)) fail("operand " + std::to_string(r) + " is a float where an int or pointer is needed");
  if (is_const(r)) {
    const uint64_t v = const_bits(r);
    if (v == 0) a_.xor_(scratch.r32(), scratch.r32());
    else a_.mov(scratch, v);
    return scratch;
  }
  if (ra_.reg[r] != kNoReg) return x86::gpq(ra_.reg[r]);
  a_.mov(scratch, slot_mem(r));
  return scratch;
}

// A GPR operand, an imm32 or a memory operand for `r` (ALU sources).
Operand TraceAssembler::gpr_src(IRRef r, const x86::Gp& scratch) {
  check_ref(r);
  if (is_float(r)) fail("operand " + std::to_string(r) + " is a float where an int or pointer is needed");
  if (is_const(r)) {
    const uint64_t v = const_bits(r);
    if (fits_i32(v)) return imm(static_cast<int64_t>(v));
    return gpr(r, scratch);
  }
  if (ra_.reg[r] != kNoReg) return x86::gpq(ra_.reg[r]);
  return slot_mem(r);
}

x86::Xmm TraceAssembler::xmm(IRRef r, const x86::Xmm& scratch) {
  check_ref(r);
  if (!is_float(r)) fail("operand " + std::to_string(r) + " is not a float");
  if (is_const(r)) {
    const uint64_t v = const_bits(r);
    if (v == 0) {
      a_.xorps(scratch, scratch);
    } else {
      a_.mov(x86::rax, v);
      a_.movq(scratch, x86::rax);
    }
    return scratch;
  }
  if (ra_.reg[r] != kNoReg) return x86::xmm(ra_.reg[r]);
  a_.movsd(scratch, slot_mem(r));
  return scratch;
}

Operand TraceAssembler::xmm_src(IRRef r, const x86::Xmm& scratch) {
  check_ref(r);
  if (!is_const(r) && ra_.reg[r] == kNoReg) {
    if (!is_float(r)) fail("operand " + std::to_string(r) + " is not a float");
    return slot_mem(r);
  }
  return xmm(r, scratch);
}

void TraceAssembler::commit(IRRef r, const x86::Gp& g) {
  if (ra_.reg[r] == kNoReg) a_.mov(slot_mem(r), g);
  else if (g.id() != ra_.reg[r]) a_.mov(x86::gpq(ra_.reg[r]), g);
}

void TraceAssembler::commit(IRRef r, const x86::Xmm& x) {
  if (ra_.reg[r] == kNoReg) a_.movsd(slot_mem(r), x);
  else if (x.id() != ra_.reg[r]) a_.movapd(x86::xmm(ra_.reg[r]), x);
}

void TraceAssembler::move_gpr(const x86::Gp& d, IRRef v) {
  const x86::Gp s = gpr(v, d);
  if (s.id() != d.id()) a_.mov(d, s);
}

void TraceAssembler::move_xmm(const x86::Xmm& d, IRRef v) {
  const x86::Xmm s = xmm(v, d);
  if (s.id() != d.id()) a_.movapd(d, s);
}

// Stores the payload of `v` at `dst`, through `scratch` where needed.
void TraceAssembler::store_payload(const x86::Mem& dst, IRRef v, const x86::Gp& scratch) {
  check_ref(v);
  if (is_const(v)) {
    const uint64_t bits = const_bits(v);
    if (fits_i32(bits)) {
      a_.mov(dst, imm(static_cast<int64_t>(bits)));
    } else {
      a_.mov(scratch, bits);
      a_.mov(dst, scratch);
    }
  } else if (is_float(v)) {
    a_.movsd(dst, xmm(v, x86::xmm0));
  } else {
    a_.mov(dst, gpr(v, scratch));
  }
}

// Interpreter register `slot` of the base frame: its tag and its payload.
x86::Mem TraceAssembler::reg_tag(uint32_t slot) const {
  return x86::byte_ptr(kBase, static_cast<int32_t>(slot) * kValueSize);
}

x86::Mem TraceAssembler::reg_payload(uint32_t slot) const {
  return x86::qword_ptr(kBase, static_cast<int32_t>(slot) * kValueSize + static_cast<int32_t>(Value::kPayloadOffset));
}

// ORs the tags of registers `slots` (at least one) into al and compares the
// result with the first object tag: tags below Str fit in three bits, so
// `jae` after this is taken when some register may hold an object.
void TraceAssembler::test_object_tags(const std::vector<uint32_t>& slots) {
  a_.movzx(x86::eax, reg_tag(slots[0]));
  for (size_t i = 1; i < slots.size(); ++i) a_.or_(x86::al, reg_tag(slots[i]));
  a_.cmp(x86::al, kFirstObjectTag);
}

TraceAssembler::Loc TraceAssembler::loc_of(IRRef r) const {
  return Loc{value_class(ir_[r]) == RegClass::Xmm, ra_.reg[r], ra_.slot[r]};
}

// The back-edge: every PHI's next value moves into its entry value's
// location, as one parallel move (cycles go through a scratch register).
void TraceAssembler::phi_moves() {
  std::vector<Move> moves;
  for (IRRef r = loop_ + 1; r < ir_.size(); ++r) {
    const IRIns& p = ir_[r];
    if (p.op != IROp::PHI || p.op1 == p.op2) continue;
    cur_ = r;
    check_ref(p.op2);
    if (!is_const(p.op2) && loc_of(p.op2) == loc_of(p.op1)) continue;
    moves.push_back(Move{loc_of(p.op1), p.op2});
  }
  cur_ = static_cast<IRRef>(ir_.size());
  // A move may go once no other pending move reads its destination.
  auto reads = [&](const Move& m, const Loc& l) {
    return !m.from_scratch && !is_const(m.src) && loc_of(m.src) == l;
  };
  while (!moves.empty()) {
    bool progressed = false;
    for (size_t i = 0; i < moves.size(); ++i) {
      bool blocked = false;
      for (size_t j = 0; j < moves.size() && !blocked; ++j)
        if (j != i && reads(moves[j], moves[i].dst)) blocked = true;
      if (blocked) continue;
      emit_move(moves[i]);
      moves.erase(moves.begin() + static_cast<std::ptrdiff_t>(i));
      progressed = true;
      break;
    }
    if (progressed) continue;
    // A cycle: park one source in a scratch register (rdx / xmm1), which
    // nothing else uses here.
    Move& m = moves.front();
    const Loc src = loc_of(m.src);
    // A broken cycle resolves completely before the next is broken, so
    // the scratch is free again here.
    for (const Move& o : moves)
      if (o.from_scratch && o.dst.xmm == src.xmm) fail("PHI moves: scratch register still in use");
    if (src.xmm) {
      if (src.reg != kNoReg) a_.movapd(x86::xmm1, x86::xmm(src.reg));
      else a_.movsd(x86::xmm1, slot_mem(m.src));
    } else {
      if (src.reg != kNoReg) a_.mov(x86::rdx, x86::gpq(src.reg));
      else a_.mov(x86::rdx, slot_mem(m.src));
    }
    // Every move reading that source now reads the scratch.
    for (Move& o : moves)
      if (!o.from_scratch && !is_const(o.src) && loc_of(o.src) == src) o.from_scratch = true;
  }
}

void TraceAssembler::emit_move(const Move& m) {
  const Loc& d = m.dst;
  if (d.xmm) {
    x86::Xmm s = x86::xmm1;
    if (!m.from_scratch) s = xmm(m.src, x86::xmm0);
    if (d.reg != kNoReg) {
      if (s.id() != d.reg) a_.movapd(x86::xmm(d.reg), s);
    } else {
      a_.movsd(x86::qword_ptr(x86::rsp, spill_base_ + 8 * static_cast<int32_t>(d.slot)), s);
    }
    return;
  }
  x86::Gp s = x86::rdx;
  if (!m.from_scratch) s = gpr(m.src, x86::rax);
  if (d.reg != kNoReg) {
    if (s.id() != d.reg) a_.mov(x86::gpq(d.reg), s);
  } else {
    a_.mov(x86::qword_ptr(x86::rsp, spill_base_ + 8 * static_cast<int32_t>(d.slot)), s);
  }
}

// Constant data after the code (slot lists, tensor layouts), 8-aligned.
template <typename Word>
Label TraceAssembler::constant_data(const std::vector<Word>& words) {
  Label l = a_.newLabel();
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  data_.emplace_back(l, std::vector<uint8_t>(bytes, bytes + words.size() * sizeof(Word)));
  return l;
}

Label TraceAssembler::slot_list(const std::vector<uint32_t>& slots) {
  return constant_data(slots);
}

}  // namespace tessera::jit::t1
