#include "codegen/host/asmjit/trace_assembler.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/host/asmjit/linear_scan.h"
#include "codegen/host/asmjit/live_intervals.h"
#include "tracer/ir_value_tags.h"
#include "codegen/host/trace_abi.h"
#include "vm/bytecode/bytecode.h"
#include "vm/core/value.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit::t1 {
namespace {

using namespace asmjit;
using x86::CondCode;

constexpr int32_t kValueSize = 16;
static_assert(sizeof(Value) == kValueSize);
constexpr uint8_t kFirstObjectTag = static_cast<uint8_t>(Tag::Str);

// Register ids (x86-64 encodings).
enum : uint8_t { RAX = 0, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };

// The allocatable registers: call-clobbered ones first (most values do not
// cross a call), then those a C call preserves.
RegisterSet t1_registers() {
  RegisterSet s;
  s.gpr = {RCX, RSI, RDI, R8, R9, RBX, R13, R14, R15};
  s.gpr_call_preserved = (1u << RBX) | (1u << R13) | (1u << R14) | (1u << R15);
  for (uint8_t x = 2; x < 16; ++x) s.xmm.push_back(x);
  return s;
}

const x86::Gp kBase = x86::r12;

// Frame layout, from rsp after the prologue.
constexpr int32_t kOutArg = 0;     // the 7th argument of tessera_jit_call (on the stack)
constexpr int32_t kResult = 8;     // tessera_jit_call's result word
constexpr int32_t kGlobals = 16;   // the trace's arguments 2-4, saved
constexpr int32_t kExitVals = 24;
constexpr int32_t kCtx = 32;
constexpr int32_t kArgs = 40;      // call payloads, then tags


x86::Mem sized(x86::Mem m, uint32_t bytes) {
  m.setSize(bytes);
  return m;
}

CondCode negate(CondCode c) { return static_cast<CondCode>(static_cast<uint8_t>(c) ^ 1u); }

// Two-operand arithmetic: one x86 instruction each (dst op= src).
struct BinaryRow {
  IROp op;
  x86::Inst::Id inst;
  bool commutative;
};
constexpr BinaryRow kBinary[] = {
    {IROp::ADD, x86::Inst::kIdAdd, true},    {IROp::SUB, x86::Inst::kIdSub, false},
    {IROp::MUL, x86::Inst::kIdImul, true},   {IROp::FADD, x86::Inst::kIdAddsd, true},
    {IROp::FSUB, x86::Inst::kIdSubsd, false}, {IROp::FMUL, x86::Inst::kIdMulsd, true},
    {IROp::FDIV, x86::Inst::kIdDivsd, false},
};

// Comparisons: the condition that holds after `cmp op1, op2` (ints, signed),
// for unsigned operands (bools, pointers), and after `ucomisd` of floats
// (swapped: LT and LE compare op2 with op1 so that "above" excludes NaN).
struct CompareRow {
  IROp op;
  CondCode signed_cc, unsigned_cc, float_cc;
  bool float_swap;
};
constexpr CompareRow kCompare[] = {
    {IROp::LT, CondCode::kL, CondCode::kB, CondCode::kA, true},
    {IROp::LE, CondCode::kLE, CondCode::kBE, CondCode::kAE, true},
    {IROp::GT, CondCode::kG, CondCode::kA, CondCode::kA, false},
    {IROp::GE, CondCode::kGE, CondCode::kAE, CondCode::kAE, false},
    {IROp::EQ, CondCode::kE, CondCode::kE, CondCode::kE, false},
    {IROp::NE, CondCode::kNE, CondCode::kNE, CondCode::kNE, false},
    {IROp::ULT, CondCode::kB, CondCode::kB, CondCode::kB, false},
};
const BinaryRow* binary_row(IROp op) {
  for (const BinaryRow& r : kBinary)
    if (r.op == op) return &r;
  return nullptr;
}
const CompareRow* compare_row(IROp op) {
  for (const CompareRow& r : kCompare)
    if (r.op == op) return &r;
  return nullptr;
}

using FloatFn = double (*)(double);
FloatFn float_math_fn(FloatMath f) {
  switch (f) {
    case FloatMath::Exp: return &tessera_jit_exp;
    case FloatMath::Log: return &tessera_jit_log;
    case FloatMath::Sin: return &tessera_jit_sin;
    case FloatMath::Cos: return &tessera_jit_cos;
    case FloatMath::Tanh: return &tessera_jit_tanh;
    default: return nullptr;
  }
}

// A condition left in the flags by a comparison, for a fused guard.
struct Flags {
  CondCode cc;
  // Float EQ/NE: unordered (PF=1) counts as "not equal".
  bool float_eq = false;  // the condition is EQ of floats
  bool float_ne = false;  // the condition is NE of floats
};

class Assembler {
 public:
  Assembler(const TraceIR& ir, const LoweringEnv& env, x86::Assembler& a) : ir_(ir), env_(env), a_(a) {}

  AssemblyStats run(const Label& native, const Label& entry) {
    lv_ = compute_liveness(ir_, *env_.exit_plans);
    ra_ = linear_scan(ir_, lv_, t1_registers());
    preserved_mask_ = t1_registers().gpr_call_preserved;
    find_loop();
    max_args_ = 1;
    for (IRRef r = 0; r < ir_.size(); ++r)  // a CALL's arguments
      if (ir_[r].op == IROp::CALL) max_args_ = std::max(max_args_, static_cast<uint32_t>(carg_list(ir_, ir_[r].op1).size()));
    for (const ExitPlan& p : *env_.exit_plans)  // the values of an exit that builds objects
      if (p.builds_objects()) max_args_ = std::max(max_args_, static_cast<uint32_t>(p.values.size()));
    tags_off_ = kArgs + 8 * static_cast<int32_t>(max_args_);
    spill_base_ = tags_off_ + static_cast<int32_t>((max_args_ + 7) / 8 * 8);
    frame_ = spill_base_ + 8 * static_cast<int32_t>(ra_.num_slots);
    if (frame_ % 16 != 8) frame_ += 8;  // rsp is 16-aligned inside (entered at 8 mod 16)
    cur_proto_ = env_.proto;

    emit_entry_wrapper(native, entry);
    a_.bind(native);
    a_.sub(x86::rsp, frame_);
    a_.mov(x86::qword_ptr(x86::rsp, kGlobals), x86::r13);
    a_.mov(x86::qword_ptr(x86::rsp, kExitVals), x86::r14);
    a_.mov(x86::qword_ptr(x86::rsp, kCtx), x86::r15);
    poll_tier_up(/*at_entry=*/true);

    for (IRRef r = 0; r < ir_.size(); ++r) {
      cur_ = r;
      const IRIns& ins = ir_[r];
      if (ir_is_const(ins.op) || ins.op == IROp::PHI || ins.op == IROp::CARG || ir_is_sunk_allocation(ins.op)) continue;
      if (r == loop_) {
        begin_loop();
        continue;
      }
      if (fused_.count(r)) continue;
      lower(r, ins);
    }
    cur_ = static_cast<IRRef>(ir_.size());
    if (loop_ != kNoRef) {
      phi_moves();
      poll_tier_up(/*at_entry=*/false);
      a_.jmp(loop_label_);
    } else if (ir_.size() == 0 || ir_[ir_.size() - 1].op != IROp::EXIT) {
      throw std::runtime_error("trace has neither a LOOP nor a final EXIT");
    }
    // Out of line: exit stubs and cold paths (each may add more cold code).
    for (size_t i = 0; i < cold_.size(); ++i) cold_[i]();
    for (auto& [label, bytes] : data_) {
      a_.align(AlignMode::kData, 8);
      a_.bind(label);
      a_.embed(bytes.data(), bytes.size());
    }
    AssemblyStats st;
    st.values = static_cast<uint32_t>(lv_.intervals.size());
    st.spilled = ra_.spilled;
    return st;
  }

 private:
  // --- errors
  [[noreturn]] void fail(const std::string& msg) const { throw_at_instruction(ir_, cur_, msg); }

  void find_loop() {
    for (IRRef r = 0; r < ir_.size(); ++r) {
      if (ir_[r].op != IROp::LOOP) continue;
      cur_ = r;
      if (loop_ != kNoRef) fail("more than one LOOP");
      loop_ = r;
    }
    for (IRRef r = 0; r < ir_.size(); ++r) {
      const IRIns& p = ir_[r];
      if (p.op != IROp::PHI) continue;
      cur_ = r;
      if (loop_ == kNoRef || r < loop_) fail("PHI outside a loop body");
      if (p.op1 >= loop_) fail("PHI's op1 must be defined before LOOP");
      if (p.op1 >= ir_.size() || p.op2 >= ir_.size()) fail("PHI operand out of range");
      if (ir_is_const(ir_[p.op1].op)) fail("PHI's op1 is a constant; constants are shared, so it cannot be loop-carried");
      if (!has_value(ir_[p.op1])) fail("PHI's op1 has no value");
      if (value_class(ir_[p.op1]) != (ir_[p.op2].type == IRType::Float ? RegClass::Xmm : RegClass::Gpr))
        fail("PHI operands have different types");
    }
    cur_ = kNoRef;
  }


  // The C-convention wrapper: rbx and r12-r15 are the C callee-saved
  // registers the trace may use (it leaves rbp alone); five pushes keep the
  // stack 16-aligned at the call.
  void emit_entry_wrapper(const Label& native, const Label& entry) {
    a_.bind(entry);
    a_.push(x86::rbx);
    a_.push(x86::r12);
    a_.push(x86::r13);
    a_.push(x86::r14);
    a_.push(x86::r15);
    a_.mov(x86::r12, x86::rdi);
    a_.mov(x86::r13, x86::rsi);
    a_.mov(x86::r14, x86::rdx);
    a_.mov(x86::r15, x86::rcx);
    a_.call(native);
    a_.pop(x86::r15);
    a_.pop(x86::r14);
    a_.pop(x86::r13);
    a_.pop(x86::r12);
    a_.pop(x86::rbx);
    a_.ret();
  }

  // --- values and locations
  void check_ref(IRRef r) const {
    if (r >= ir_.size()) fail("reference " + std::to_string(r) + " is out of range");
    if (!ir_is_const(ir_[r].op) && !has_value(ir_[r]))
      fail("reference " + std::to_string(r) + " (" + ir_op_info(ir_[r].op).name + ") has no value");
    if (!ir_is_const(ir_[r].op) && cur_ < ir_.size() && r >= cur_ && ir_[cur_].op != IROp::PHI)
      fail("reference " + std::to_string(r) + " is used before its definition");
  }
  bool is_const(IRRef r) const { return ir_is_const(ir_[r].op); }
  bool in_reg(IRRef r) const { return !is_const(r) && ra_.reg[r] != kNoReg; }
  x86::Mem slot_mem(IRRef r) const {
    return x86::qword_ptr(x86::rsp, spill_base_ + 8 * static_cast<int32_t>(ra_.slot[r]));
  }
  // The raw 64-bit payload of a constant.
  uint64_t const_bits(IRRef r) const {
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
  bool is_float(IRRef r) const { return !is_const(r) ? value_class(ir_[r]) == RegClass::Xmm : ir_[r].op == IROp::KFLOAT; }
  static bool fits_i32(uint64_t v) {
    const auto s = static_cast<int64_t>(v);
    return s >= INT32_MIN && s <= INT32_MAX;
  }

  // A GPR holding `r` (its own register, or `scratch` loaded with it).
  x86::Gp gpr(IRRef r, const x86::Gp& scratch) {
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
  Operand gpr_src(IRRef r, const x86::Gp& scratch) {
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
  x86::Xmm xmm(IRRef r, const x86::Xmm& scratch) {
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
  Operand xmm_src(IRRef r, const x86::Xmm& scratch) {
    check_ref(r);
    if (!is_const(r) && ra_.reg[r] == kNoReg) {
      if (!is_float(r)) fail("operand " + std::to_string(r) + " is not a float");
      return slot_mem(r);
    }
    return xmm(r, scratch);
  }

  // Where instruction r's result is computed: its register, or a scratch
  // that commit() then stores to its slot.
  x86::Gp def_gpr(IRRef r) { return ra_.reg[r] != kNoReg ? x86::gpq(ra_.reg[r]) : x86::r11; }
  x86::Xmm def_xmm(IRRef r) { return ra_.reg[r] != kNoReg ? x86::xmm(ra_.reg[r]) : x86::xmm1; }
  void commit(IRRef r, const x86::Gp& g) {
    if (ra_.reg[r] == kNoReg) a_.mov(slot_mem(r), g);
    else if (g.id() != ra_.reg[r]) a_.mov(x86::gpq(ra_.reg[r]), g);
  }
  void commit(IRRef r, const x86::Xmm& x) {
    if (ra_.reg[r] == kNoReg) a_.movsd(slot_mem(r), x);
    else if (x.id() != ra_.reg[r]) a_.movapd(x86::xmm(ra_.reg[r]), x);
  }

  // Stores the payload of `v` at `dst` (scratch: rax).
  void store_payload(const x86::Mem& dst, IRRef v) {
    check_ref(v);
    if (is_const(v)) {
      const uint64_t bits = const_bits(v);
      if (fits_i32(bits)) {
        a_.mov(dst, imm(static_cast<int64_t>(bits)));
      } else {
        a_.mov(x86::rax, bits);
        a_.mov(dst, x86::rax);
      }
    } else if (is_float(v)) {
      a_.movsd(dst, xmm(v, x86::xmm0));
    } else {
      a_.mov(dst, gpr(v, x86::rax));
    }
  }

  // --- helper calls
  // Values live across position `at` in registers a C call clobbers.
  template <typename F>
  void for_clobbered_live(uint32_t at, F f) {
    for (const LiveInterval& iv : lv_.intervals) {
      if (iv.start >= at || iv.end < at) continue;
      const uint8_t reg = ra_.reg[iv.ref];
      if (reg == kNoReg) continue;
      if (iv.cls == RegClass::Gpr && ((preserved_mask_ >> reg) & 1u)) continue;
      f(iv);
    }
  }
  void save_live(uint32_t at) {
    for_clobbered_live(at, [&](const LiveInterval& iv) {
      if (iv.cls == RegClass::Gpr) a_.mov(slot_mem(iv.ref), x86::gpq(ra_.reg[iv.ref]));
      else a_.movsd(slot_mem(iv.ref), x86::xmm(ra_.reg[iv.ref]));
    });
  }
  void restore_live(uint32_t at) {
    for_clobbered_live(at, [&](const LiveInterval& iv) {
      if (iv.cls == RegClass::Gpr) a_.mov(x86::gpq(ra_.reg[iv.ref]), slot_mem(iv.ref));
      else a_.movsd(x86::xmm(ra_.reg[iv.ref]), slot_mem(iv.ref));
    });
  }
  // After save_live: an operand for a C argument register, read from where
  // it survives (a preserved register, its slot, or a constant).
  void load_arg(const x86::Gp& dst, IRRef v) {
    check_ref(v);
    if (is_const(v)) {
      const uint64_t bits = const_bits(v);
      if (bits == 0) a_.xor_(dst.r32(), dst.r32());
      else a_.mov(dst, bits);
    } else if (is_float(v)) {
      a_.mov(dst, slot_mem(v));
    } else if (ra_.reg[v] != kNoReg && ((preserved_mask_ >> ra_.reg[v]) & 1u)) {
      a_.mov(dst, x86::gpq(ra_.reg[v]));
    } else {
      a_.mov(dst, slot_mem(v));
    }
  }
  void load_float_arg(const x86::Xmm& dst, IRRef v) {
    check_ref(v);
    if (!is_float(v)) fail("operand " + std::to_string(v) + " is not a float");
    if (is_const(v)) xmm(v, dst);
    else a_.movsd(dst, slot_mem(v));  // saved by save_live, or spilled
  }
  void call_addr(const void* fn) {
    a_.mov(x86::rax, reinterpret_cast<uint64_t>(fn));
    a_.call(x86::rax);
  }
  // --- tier-up polling (LoweringEnv::tier_up_counter)
  // At the start of every trace and at a loop's back-edge (every PHI
  // already holds its next value): count down; at zero, leave through the
  // tier-up exit, which writes the loop-carried values (each PHI's entry
  // SLOAD slot; nothing at the start) and returns kTierUpExit. Counting
  // entries too upgrades loops that are mostly entered through links and
  // left through exits, rarely reaching their own back-edge (nbody's outer
  // loop). Loops whose PHIs do not all start from an entry SLOAD do not poll
  // at the back-edge.
  void poll_tier_up(bool at_entry) {
    if (env_.tier_up_counter == nullptr || env_.linking.links == nullptr) return;
    std::vector<SnapshotEntry> carried;
    for (IRRef r = at_entry || loop_ == kNoRef ? ir_.size() : loop_ + 1; r < ir_.size(); ++r) {
      const IRIns& p = ir_[r];
      if (p.op != IROp::PHI) continue;
      const IRIns& entry = ir_[p.op1];
      if (entry.op != IROp::SLOAD || entry.op2 != 0) return;
      carried.push_back(SnapshotEntry{entry.op1, p.op1});
    }
    std::sort(carried.begin(), carried.end(),
              [](const SnapshotEntry& x, const SnapshotEntry& y) { return x.slot < y.slot; });
    Label up = a_.newLabel();
    a_.mov(x86::rax, reinterpret_cast<uint64_t>(env_.tier_up_counter));
    a_.sub(x86::dword_ptr(x86::rax), 1);
    a_.jz(up);
    const uint32_t at = static_cast<uint32_t>(ir_.size());
    tier_up_plans_.push_back(plan_tier_up_exit(ir_, carried));
    const ExitPlan* plan = &tier_up_plans_.back();
    cold_.push_back([this, up, plan, at] {
      a_.bind(up);
      const uint32_t saved_cur = cur_;
      cur_ = at;
      write_registers(*plan);
      a_.mov(x86::eax, env_.linking.code_base | kTierUpExit);
      a_.add(x86::rsp, frame_);
      a_.ret();
      cur_ = saved_cur;
    });
  }

  // --- exits
  Label exit_label(uint16_t snap) {
    if (snap == kNoSnap) fail("guard without a snapshot");
    if (snap >= ir_.snapshots().size()) fail("snapshot #" + std::to_string(snap) + " does not exist");
    auto it = exits_.find(snap);
    if (it != exits_.end()) return it->second;
    Label l = a_.newLabel();
    exits_.emplace(snap, l);
    const uint32_t at = cur_;
    cold_.push_back([this, snap, l, at] { emit_exit(snap, l, at); });
    return l;
  }

  // One exit stub, emitting the snapshot's exit plan (deopt/exit_plan.h):
  // its values go to exit_vals (unlinked), or into the registers (linked:
  // with reference counting, batched as in the LLVM tier; a plan that builds
  // sunk objects through tessera_jit_restore_exit), then a return or a jump
  // into the linked trace.
  void emit_exit(uint16_t snap, const Label& l, uint32_t at) {
    a_.bind(l);
    const uint32_t saved_cur = cur_;
    cur_ = at;
    const ExitPlan& plan = env_.exit_plan(snap);
    for (const ExitValue& v : plan.values) check_ref(v.ref);
    if (env_.linking.links == nullptr) {
      a_.mov(x86::r11, x86::qword_ptr(x86::rsp, kExitVals));
      for (size_t i = 0; i < plan.values.size(); ++i)
        store_payload(x86::qword_ptr(x86::r11, static_cast<int32_t>(8 * i)), plan.values[i].ref);
      a_.mov(x86::eax, snap);
      a_.add(x86::rsp, frame_);
      a_.ret();
      cur_ = saved_cur;
      return;
    }
    if (plan.builds_objects()) restore_with_helper(plan);
    else write_registers(plan);
    a_.mov(x86::rax, reinterpret_cast<uint64_t>(env_.linking.links + snap));
    a_.mov(x86::rax, x86::qword_ptr(x86::rax));
    Label back = a_.newLabel();
    a_.test(x86::rax, x86::rax);
    a_.jz(back);
    leave_frame_to_next_trace();
    a_.jmp(x86::rax);
    a_.bind(back);
    a_.mov(x86::eax, env_.linking.code_base | snap);
    a_.add(x86::rsp, frame_);
    a_.ret();
    cur_ = saved_cur;
  }

  void leave_frame_to_next_trace() {
    a_.mov(x86::r13, x86::qword_ptr(x86::rsp, kGlobals));
    a_.mov(x86::r14, x86::qword_ptr(x86::rsp, kExitVals));
    a_.mov(x86::r15, x86::qword_ptr(x86::rsp, kCtx));
    a_.add(x86::rsp, frame_);
  }

  x86::Mem reg_tag(uint32_t slot) { return x86::byte_ptr(kBase, static_cast<int32_t>(slot) * kValueSize); }
  x86::Mem reg_payload(uint32_t slot) {
    return x86::qword_ptr(kBase, static_cast<int32_t>(slot) * kValueSize + static_cast<int32_t>(Value::kPayloadOffset));
  }

  // A plan without objects, inline: new objects gain their reference; one
  // test of the OR-ed old tags of the overwritten registers decides whether
  // the release helper runs (off the path); then plain stores.
  void write_registers(const ExitPlan& plan) {
    for (const ExitWrite& w : plan.writes) {
      const IRRef v = plan.values[w.value].ref;
      if (static_cast<uint8_t>(tag_for(ir_[v].type)) >= kFirstObjectTag) {
        x86::Gp p = gpr(v, x86::rax);
        a_.add(x86::dword_ptr(p, static_cast<int32_t>(env_.obj_refcount_offset)), 1);
      }
    }
    const std::vector<uint32_t>& unknown = plan.release_checked;
    if (!unknown.empty()) {
      a_.movzx(x86::eax, reg_tag(unknown[0]));
      for (size_t i = 1; i < unknown.size(); ++i) a_.or_(x86::al, reg_tag(unknown[i]));
      Label release = a_.newLabel(), done = a_.newLabel();
      a_.cmp(x86::al, kFirstObjectTag);
      a_.jae(release);
      a_.bind(done);
      Label list = slot_list(unknown);
      const uint32_t n = static_cast<uint32_t>(unknown.size());
      const uint32_t at = cur_;
      cold_.push_back([this, release, done, list, n, &plan, at] {
        a_.bind(release);
        const uint32_t saved = cur_;
        cur_ = at;
        save_values(plan, true);
        a_.mov(x86::rdi, kBase);
        a_.lea(x86::rsi, x86::ptr(list));
        a_.mov(x86::edx, n);
        call_addr(reinterpret_cast<const void*>(&tessera_jit_release_slots));
        save_values(plan, false);
        cur_ = saved;
        a_.jmp(done);
      });
    }
    for (const ExitWrite& w : plan.writes) {
      const IRRef v = plan.values[w.value].ref;
      a_.mov(reg_tag(w.slot), static_cast<uint8_t>(tag_for(ir_[v].type)));
      store_payload(reg_payload(w.slot), v);
    }
  }

  // A plan that builds objects: every value goes to the argument buffer and
  // one helper runs the plan. Nothing the trace holds in a register is read
  // after the call.
  void restore_with_helper(const ExitPlan& plan) {
    for (size_t i = 0; i < plan.values.size(); ++i)
      store_payload(x86::qword_ptr(x86::rsp, kArgs + 8 * static_cast<int32_t>(i)), plan.values[i].ref);
    a_.mov(x86::rdi, reinterpret_cast<uint64_t>(&plan));
    a_.mov(x86::rsi, kBase);
    a_.lea(x86::rdx, x86::qword_ptr(x86::rsp, kArgs));
    call_addr(reinterpret_cast<const void*>(&tessera_jit_restore_exit));
  }

  // Saves (or restores) the call-clobbered registers of a plan's values
  // around the release helper in an exit stub.
  void save_values(const ExitPlan& plan, bool save) {
    std::unordered_set<IRRef> done;
    for (const ExitValue& ev : plan.values) {
      const IRRef v = ev.ref;
      if (is_const(v) || ra_.reg[v] == kNoReg || !done.insert(v).second) continue;
      const uint8_t reg = ra_.reg[v];
      if (is_float(v)) {
        if (save) a_.movsd(slot_mem(v), x86::xmm(reg));
        else a_.movsd(x86::xmm(reg), slot_mem(v));
      } else if (!((preserved_mask_ >> reg) & 1u)) {
        if (save) a_.mov(slot_mem(v), x86::gpq(reg));
        else a_.mov(x86::gpq(reg), slot_mem(v));
      }
    }
  }

  // Constant data after the code (slot lists, tensor layouts), 8-aligned.
  template <typename Word>
  Label constant_data(const std::vector<Word>& words) {
    Label l = a_.newLabel();
    const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
    data_.emplace_back(l, std::vector<uint8_t>(bytes, bytes + words.size() * sizeof(Word)));
    return l;
  }
  Label slot_list(const std::vector<uint32_t>& slots) { return constant_data(slots); }

  void jump_to_exit(CondCode cc, uint16_t snap) { a_.j(cc, exit_label(snap)); }

  // --- guards
  // Leaves unless the Bool `cond` is `want`.
  void guard_bool(IRRef cond, bool want, uint16_t snap) {
    check_ref(cond);
    if (fusable(cond)) {
      const Flags f = compare_flags(cond);
      // Exit when the condition's truth differs from `want`.
      if (f.float_eq || f.float_ne) {
        const bool exit_when_eq = f.float_eq != want;  // exit when "ordered equal"
        if (exit_when_eq) {
          Label ok = a_.newLabel();
          a_.jp(ok);
          jump_to_exit(CondCode::kE, snap);
          a_.bind(ok);
        } else {
          jump_to_exit(CondCode::kP, snap);
          jump_to_exit(CondCode::kNE, snap);
        }
        return;
      }
      jump_to_exit(want ? negate(f.cc) : f.cc, snap);
      return;
    }
    if (is_const(cond)) {
      if ((const_bits(cond) != 0) != want) a_.jmp(exit_label(snap));
      return;
    }
    if (in_reg(cond)) {
      const x86::Gp g = x86::gpq(ra_.reg[cond]);
      a_.test(g.r32(), g.r32());
    } else {
      a_.cmp(x86::byte_ptr(x86::rsp, spill_base_ + 8 * static_cast<int32_t>(ra_.slot[cond])), 0);
    }
    jump_to_exit(want ? CondCode::kZ : CondCode::kNZ, snap);
  }

  // A comparison read only by the guard right after it is not materialized:
  // the guard branches on the flags.
  bool fusable(IRRef cond) const {
    return !is_const(cond) && compare_row(ir_[cond].op) != nullptr && lv_.uses[cond] == 1 && cond + 1 == cur_;
  }
  void mark_fused(IRRef r) {
    if (r + 1 < ir_.size()) {
      const IRIns& next = ir_[r + 1];
      if ((next.op == IROp::GUARDT || next.op == IROp::GUARDF) && next.op1 == r && lv_.uses[r] == 1) fused_.insert(r);
    }
  }

  // Emits the compare of instruction `cond` and says which flags hold it.
  Flags compare_flags(IRRef cond) {
    const IRIns& ins = ir_[cond];
    const CompareRow* row = compare_row(ins.op);
    check_ref(ins.op1);
    check_ref(ins.op2);
    if (is_float(ins.op1) != is_float(ins.op2)) fail("comparison of operands of different types");
    Flags f{};
    if (is_float(ins.op1) && ins.op != IROp::ULT) {
      IRRef x = ins.op1, y = ins.op2;
      if (row->float_swap) std::swap(x, y);
      const x86::Xmm xa = xmm(x, x86::xmm0);
      const Operand yb = xmm_src(y, x86::xmm1);
      a_.emit(x86::Inst::kIdUcomisd, xa, yb);
      f.cc = row->float_cc;
      f.float_eq = ins.op == IROp::EQ;
      f.float_ne = ins.op == IROp::NE;
      return f;
    }
    const x86::Gp xa = gpr(ins.op1, x86::rax);
    const Operand yb = gpr_src(ins.op2, x86::rdx);
    a_.emit(x86::Inst::kIdCmp, xa, yb);
    const bool is_signed = type_of(ins.op1) == IRType::Int;
    f.cc = ins.op == IROp::ULT ? CondCode::kB : is_signed ? row->signed_cc : row->unsigned_cc;
    return f;
  }
  IRType type_of(IRRef r) const { return ir_[r].type; }

  void lower_compare(IRRef r) {
    const Flags f = compare_flags(r);
    const x86::Gp d = def_gpr(r);
    if (f.float_eq || f.float_ne) {
      // EQ: ZF=1 and PF=0; NE: ZF=0 or PF=1.
      a_.set(f.float_eq ? CondCode::kE : CondCode::kNE, x86::al);
      a_.set(f.float_eq ? CondCode::kNP : CondCode::kP, x86::dl);
      if (f.float_eq) a_.and_(x86::al, x86::dl);
      else a_.or_(x86::al, x86::dl);
    } else {
      a_.set(f.cc, x86::al);
    }
    a_.movzx(d.r32(), x86::al);
    commit(r, d);
  }

  // --- arithmetic
  void lower_binary(IRRef r, const IRIns& ins, const BinaryRow& row) {
    if (is_float_op(ins.op)) {
      const x86::Xmm d = def_xmm(r);
      const bool b_in_d = in_reg(ins.op2) && ra_.reg[ins.op2] == d.id() && ins.op1 != ins.op2;
      if (b_in_d && row.commutative) {
        a_.emit(row.inst, d, xmm_src(ins.op1, x86::xmm0));
      } else if (b_in_d) {
        const x86::Xmm t = x86::xmm0;
        move_xmm(t, ins.op1);
        a_.emit(row.inst, t, d);
        commit(r, t);
        return;
      } else {
        move_xmm(d, ins.op1);
        a_.emit(row.inst, d, xmm_src(ins.op2, x86::xmm0));
      }
      commit(r, d);
      return;
    }
    const x86::Gp d = def_gpr(r);
    const bool b_in_d = in_reg(ins.op2) && ra_.reg[ins.op2] == d.id() && ins.op1 != ins.op2;
    if (b_in_d && row.commutative) {
      a_.emit(row.inst, d, gpr_src(ins.op1, x86::rax));
    } else if (b_in_d) {
      move_gpr(x86::rax, ins.op1);
      a_.emit(row.inst, x86::rax, d);
      commit(r, x86::rax);
      return;
    } else {
      move_gpr(d, ins.op1);
      Operand b = gpr_src(ins.op2, x86::rax);
      if (row.op == IROp::MUL && b.isImm()) b = gpr(ins.op2, x86::rax);  // imul r, imm is a 3-operand form
      a_.emit(row.inst, d, b);
    }
    commit(r, d);
  }
  static bool is_float_op(IROp op) {
    return op == IROp::FADD || op == IROp::FSUB || op == IROp::FMUL || op == IROp::FDIV;
  }
  void move_gpr(const x86::Gp& d, IRRef v) {
    const x86::Gp s = gpr(v, d);
    if (s.id() != d.id()) a_.mov(d, s);
  }
  void move_xmm(const x86::Xmm& d, IRRef v) {
    const x86::Xmm s = xmm(v, d);
    if (s.id() != d.id()) a_.movapd(d, s);
  }

  // Floored division and modulo (Python semantics), never trapping: b == 0
  // gives 0 (the recorder guards it), b == -1 the wrapping negation and 0
  // (x86 idiv faults on INT64_MIN / -1).
  void lower_divmod(IRRef r, const IRIns& ins) {
    move_gpr(x86::rax, ins.op1);
    move_gpr(x86::r11, ins.op2);
    Label minus1 = a_.newLabel(), zero = a_.newLabel(), done = a_.newLabel();
    a_.cmp(x86::r11, -1);
    a_.je(minus1);
    a_.test(x86::r11, x86::r11);
    a_.je(zero);
    a_.cqo();
    a_.idiv(x86::r11);
    // Truncated -> floored: a non-zero remainder whose sign differs from
    // the divisor's moves the quotient down and the remainder up by b.
    a_.test(x86::rdx, x86::rdx);
    a_.je(done);
    a_.mov(x86::r10, x86::rdx);
    a_.xor_(x86::r10, x86::r11);
    a_.jns(done);
    a_.sub(x86::rax, 1);
    a_.add(x86::rdx, x86::r11);
    a_.jmp(done);
    a_.bind(minus1);
    a_.neg(x86::rax);
    a_.xor_(x86::edx, x86::edx);
    a_.jmp(done);
    a_.bind(zero);
    a_.xor_(x86::eax, x86::eax);
    a_.xor_(x86::edx, x86::edx);
    a_.bind(done);
    commit(r, ins.op == IROp::IDIV ? x86::rax : x86::rdx);
  }

  // int64 f(int64, int64) or double f(double[, double]) through the C ABI.
  void lower_scalar_call(IRRef r, const IRIns& ins, const void* fn, int nargs, bool floats) {
    save_live(r);
    if (floats) {
      load_float_arg(x86::xmm0, ins.op1);
      if (nargs == 2) load_float_arg(x86::xmm1, ins.op2);
    } else {
      load_arg(x86::rdi, ins.op1);
      if (nargs == 2) load_arg(x86::rsi, ins.op2);
    }
    call_addr(fn);
    restore_live(r);
    if (floats) commit(r, x86::xmm0);
    else commit(r, x86::rax);
  }

  // --- stores with reference counting
  // *dst = v: the new object (if any) gains a reference, then the old one
  // (if any) loses one; freeing an object whose count reached zero is the
  // only call into C++, off the path. `dst` must not use rax, rdx or r10.
  void store_value(const x86::Mem& dst_tag, const x86::Mem& dst_payload, IRRef v) {
    check_ref(v);
    const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[v].type));
    if (tag >= kFirstObjectTag) {
      const x86::Gp p = gpr(v, x86::r10);
      a_.add(x86::dword_ptr(p, static_cast<int32_t>(env_.obj_refcount_offset)), 1);
    }
    a_.movzx(x86::eax, dst_tag);
    a_.mov(x86::rdx, dst_payload);
    a_.mov(dst_tag, tag);
    store_payload_keep(dst_payload, v);
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
  // store_payload without touching rax and rdx (they hold the old value).
  void store_payload_keep(const x86::Mem& dst, IRRef v) {
    if (is_const(v)) {
      const uint64_t bits = const_bits(v);
      if (fits_i32(bits)) {
        a_.mov(dst, imm(static_cast<int64_t>(bits)));
      } else {
        a_.mov(x86::r10, bits);
        a_.mov(dst, x86::r10);
      }
    } else if (is_float(v)) {
      a_.movsd(dst, xmm(v, x86::xmm0));
    } else {
      a_.mov(dst, gpr(v, x86::r10));
    }
  }

  // SSTORE: a slot whose tag is known to be a scalar's needs no reference
  // counting, and with the same tag only the payload changes.
  void store_slot(uint32_t slot, IRRef v) {
    check_ref(v);
    const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[v].type));
    auto known = slot_tags_.find(slot);
    if (known != slot_tags_.end() && known->second < kFirstObjectTag && tag < kFirstObjectTag) {
      if (known->second != tag) a_.mov(reg_tag(slot), tag);
      store_payload_keep(reg_payload(slot), v);
    } else {
      store_value(reg_tag(slot), reg_payload(slot), v);
    }
    slot_tags_[slot] = tag;
  }

  void report_global_store(uint32_t index) {
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

  // Loads the Value at [base + disp], guarding its tag.
  void load_guarded(IRRef r, const x86::Gp& base, int32_t disp, IRType t, uint16_t snap) {
    const uint8_t tag = static_cast<uint8_t>(tag_for(t));
    a_.cmp(x86::byte_ptr(base, disp + static_cast<int32_t>(Value::kTagOffset)), tag);
    jump_to_exit(CondCode::kNE, snap);
    load_typed(r, base, disp, t);
  }
  // The payload of a value whose tag is known to be t's.
  void load_typed(IRRef r, const x86::Gp& base, int32_t disp, IRType t) {
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

  // --- lists and tensors
  // r11 = address of element `index` of list `list`.
  void element_addr(IRRef list, IRRef index) {
    const x86::Gp l = gpr(list, x86::r11);
    a_.mov(x86::r11, x86::qword_ptr(l, static_cast<int32_t>(env_.list.items_offset + env_.list.begin_offset)));
    const x86::Gp i = gpr(index, x86::r10);
    if (i.id() != x86::r10.id()) a_.mov(x86::r10, i);
    a_.shl(x86::r10, 4);  // * sizeof(Value)
    a_.add(x86::r11, x86::r10);
  }
  DType tensor_dtype(IRRef tidx) {
    if (tidx >= ir_.size() || ir_[tidx].op != IROp::TIDX) fail("tensor element index must be a TIDX");
    return static_cast<DType>(ir_[tidx].op2);
  }
  // A memory operand for element `tidx` of `tensor` (through r11 and r10).
  x86::Mem tensor_element(IRRef tensor, IRRef tidx) {
    const DType d = tensor_dtype(tidx);
    const uint32_t shift = d == DType::I64 ? 3 : d == DType::Bool ? 0 : 2;
    const x86::Gp t = gpr(tensor, x86::r11);
    a_.mov(x86::r11, x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.data_offset)));
    const x86::Gp i = gpr(tidx, x86::r10);
    return x86::ptr(x86::r11, i, shift);
  }

  // --- tessera_jit_call
  void lower_call(IRRef r, const IRIns& ins) {
    if (ins.op2 >= env_.calls.size()) fail("call table index " + std::to_string(ins.op2) + " out of range");
    const std::vector<IRRef> args = carg_list(ir_, ins.op1);
    save_live(r);
    for (size_t i = 0; i < args.size(); ++i) {
      check_ref(args[i]);
      const uint8_t tag = static_cast<uint8_t>(tag_for(ir_[args[i]].type));
      a_.mov(x86::byte_ptr(x86::rsp, tags_off_ + static_cast<int32_t>(i)), tag);
      const x86::Mem dst = x86::qword_ptr(x86::rsp, kArgs + 8 * static_cast<int32_t>(i));
      if (!is_const(args[i]) && is_float(args[i])) {
        a_.mov(x86::rax, slot_mem(args[i]));  // saved by save_live, or spilled
        a_.mov(dst, x86::rax);
      } else {
        load_arg(x86::rax, args[i]);
        a_.mov(dst, x86::rax);
      }
    }
    const uint8_t expect = ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type));
    a_.lea(x86::rax, x86::qword_ptr(x86::rsp, kResult));
    a_.mov(x86::qword_ptr(x86::rsp, kOutArg), x86::rax);
    a_.mov(x86::rdi, x86::qword_ptr(x86::rsp, kCtx));
    // The helper writes its result register through ctx->base, which frame
    // pushes and pops leave stale (trace_abi.h): bring it up to date here.
    a_.mov(x86::qword_ptr(x86::rdi, static_cast<int32_t>(offsetof(JitContext, base))), kBase);
    a_.mov(x86::rsi, reinterpret_cast<uint64_t>(env_.calls[ins.op2]));
    a_.lea(x86::rdx, x86::qword_ptr(x86::rsp, tags_off_));
    a_.lea(x86::rcx, x86::qword_ptr(x86::rsp, kArgs));
    a_.mov(x86::r8d, static_cast<uint32_t>(args.size()));
    a_.mov(x86::r9d, expect);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_call));
    restore_live(r);  // movs leave the flags alone
    a_.test(x86::al, x86::al);
    jump_to_exit(CondCode::kZ, ins.snap);
    if (ins.type == IRType::None) return;
    if (ins.type == IRType::Float) {
      const x86::Xmm d = def_xmm(r);
      a_.movsd(d, x86::qword_ptr(x86::rsp, kResult));
      commit(r, d);
    } else {
      const x86::Gp d = def_gpr(r);
      if (ins.type == IRType::Bool) a_.movzx(d.r32(), x86::byte_ptr(x86::rsp, kResult));
      else a_.mov(d, x86::qword_ptr(x86::rsp, kResult));
      commit(r, d);
    }
    if (env_.calls[ins.op2]->dest_slot >= 0) slot_tags_.erase(static_cast<uint32_t>(env_.calls[ins.op2]->dest_slot));
  }

  // --- recursion: frames pushed and popped in place (FrameRegion)
  const FunctionProto* const_proto(IRRef r) {
    if (r >= ir_.size() || ir_[r].op != IROp::KOBJ || ir_[r].type != IRType::Func)
      fail("operand must be a function constant");
    return static_cast<const FunctionProto*>(ir_.const_ptr(r));
  }
  // rdx = &ctx->frames (the run's FrameRegion, trace_abi.h)
  void load_frames() {
    a_.mov(x86::rdx, x86::qword_ptr(x86::rsp, kCtx));
    a_.add(x86::rdx, static_cast<int32_t>(offsetof(JitContext, frames)));
  }
  // (ctx->base is written only before the helper calls that read it.)
  void set_base_from(const x86::Gp& nb) {
    if (nb.id() != kBase.id()) a_.mov(kBase, nb);
    slot_tags_.clear();  // other registers now
  }

  void push_frame(const IRIns& ins) {
    const FunctionProto* callee = const_proto(ins.op1);
    if (cur_proto_ == nullptr) fail("FPUSH needs the function of the base frame (LoweringEnv::proto)");
    if (ins.snap >= ir_.snapshots().size()) fail("FPUSH without a valid snapshot");
    const uint32_t ret_pc = ir_.snapshots()[ins.snap].pc + 1;
    const int32_t callee_off = static_cast<int32_t>(ins.op2 + 1) * kValueSize;
    load_frames();
    // Room for a frame and for the callee's registers and any trace run
    // from its frame: top < limit, callee_base <= push_limit.
    a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
    a_.cmp(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, limit))));
    jump_to_exit(CondCode::kAE, ins.snap);
    a_.lea(x86::r11, x86::ptr(kBase, callee_off));
    a_.cmp(x86::r11, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, push_limit))));
    jump_to_exit(CondCode::kA, ins.snap);
    // caller = top - 1 frame: its pc resumes after the CALL.
    constexpr int32_t kFrame = sizeof(CallFrame);
    a_.mov(x86::r10, reinterpret_cast<uint64_t>(cur_proto_->code.data() + ret_pc));
    a_.mov(x86::qword_ptr(x86::rax, -kFrame + static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
    a_.mov(x86::r10, reinterpret_cast<uint64_t>(callee));
    a_.mov(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, proto))), x86::r10);
    a_.mov(x86::r10, reinterpret_cast<uint64_t>(callee->code.data()));
    a_.mov(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
    // base index = (callee_base - stack) / 16
    a_.mov(x86::r10, x86::r11);
    a_.sub(x86::r10, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, stack))));
    a_.shr(x86::r10, 4);
    a_.mov(x86::dword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, base))), x86::r10d);
    a_.add(x86::rax, kFrame);
    a_.mov(x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))), x86::rax);
    set_base_from(x86::r11);
    cur_proto_ = callee;
  }

  void return_guard(const IRIns& ins) {
    const FunctionProto* caller_proto = const_proto(ins.op1);
    constexpr int32_t kFrame = sizeof(CallFrame);
    load_frames();
    // The caller is the expected one: its resume pc names the function too
    // (no two functions share code). With only one frame this reads the
    // sentinel below the bottom frame, whose pc is null (CallFrameStack).
    a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
    a_.sub(x86::rax, 2 * kFrame);
    a_.mov(x86::r10, reinterpret_cast<uint64_t>(caller_proto->code.data() + ins.op2));
    a_.cmp(x86::qword_ptr(x86::rax, static_cast<int32_t>(offsetof(CallFrame, pc))), x86::r10);
    jump_to_exit(CondCode::kNE, ins.snap);
    returning_to_ = caller_proto;
    returning_pc_ = ins.op2;
  }

  void pop_frame(IRRef r, const IRIns& ins) {
    if (cur_proto_ == nullptr || returning_to_ == nullptr)
      fail("FPOP needs the function of the base frame and a RETGUARD before it");
    // As RET: the caller's CALL register gets the result, the callee's
    // objects are released, the frame is popped.
    store_value(x86::byte_ptr(kBase, -kValueSize), x86::qword_ptr(kBase, -kValueSize + 8), ins.op1);
    const uint32_t n = static_cast<uint32_t>(cur_proto_->nregs);
    std::vector<uint32_t> unknown;
    for (uint32_t i = 0; i < n; ++i) {
      auto known = slot_tags_.find(i);
      if (n <= 64 && known != slot_tags_.end() && known->second < kFirstObjectTag) continue;
      unknown.push_back(i);
    }
    if (!unknown.empty()) {
      Label clear = a_.newLabel(), done = a_.newLabel();
      if (n > 64) {
        a_.jmp(clear);
      } else {
        a_.movzx(x86::eax, reg_tag(unknown[0]));
        for (size_t i = 1; i < unknown.size(); ++i) a_.or_(x86::al, reg_tag(unknown[i]));
        a_.cmp(x86::al, kFirstObjectTag);
        a_.jae(clear);
      }
      a_.bind(done);
      cold_.push_back([this, clear, done, r, n] {
        a_.bind(clear);
        save_live(r + 1);
        a_.mov(x86::rdi, kBase);
        a_.mov(x86::esi, n);
        call_addr(reinterpret_cast<const void*>(&tessera_jit_clear_registers));
        restore_live(r + 1);
        a_.jmp(done);
      });
    }
    constexpr int32_t kFrame = sizeof(CallFrame);
    load_frames();
    a_.mov(x86::rax, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))));
    a_.sub(x86::rax, kFrame);
    a_.mov(x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, top))), x86::rax);
    // The caller's base: a fixed distance below when a CALL pushed the frame
    // (caller_base_distance), else read from the caller's frame.
    if (const uint32_t below = caller_base_distance(*returning_to_, returning_pc_); below > 0) {
      a_.sub(kBase, static_cast<int32_t>(below) * kValueSize);
      set_base_from(kBase);
    } else {
      a_.mov(x86::r10d, x86::dword_ptr(x86::rax, -kFrame + static_cast<int32_t>(offsetof(CallFrame, base))));
      a_.shl(x86::r10, 4);
      a_.add(x86::r10, x86::qword_ptr(x86::rdx, static_cast<int32_t>(offsetof(FrameRegion, stack))));
      set_base_from(x86::r10);
    }
    cur_proto_ = returning_to_;
    returning_to_ = nullptr;
  }

  // --- loop structure
  void begin_loop() {
    // Slot tags known at the loop header: those no iteration changes.
    for (IRRef r = loop_ + 1; r < ir_.size(); ++r) {
      const IRIns& in = ir_[r];
      if (in.op == IROp::SSTORE && in.op2 < ir_.size()) {
        auto it = slot_tags_.find(in.op1);
        if (it != slot_tags_.end() && ir_[in.op2].type != IRType::None &&
            it->second != static_cast<uint8_t>(tag_for(ir_[in.op2].type)))
          slot_tags_.erase(it);
      } else if (in.op == IROp::CALL && in.op2 < env_.calls.size() && env_.calls[in.op2]->dest_slot >= 0) {
        slot_tags_.erase(static_cast<uint32_t>(env_.calls[in.op2]->dest_slot));
      } else if (in.op == IROp::FPUSH || in.op == IROp::FPOP) {
        slot_tags_.clear();
      }
    }
    loop_label_ = a_.newLabel();
    a_.align(AlignMode::kCode, 16);
    a_.bind(loop_label_);
  }

  // The back-edge: every PHI's next value moves into its entry value's
  // location, as one parallel move (cycles go through a scratch register).
  struct Loc {
    bool xmm;
    uint8_t reg;    // kNoReg: the stack slot
    uint32_t slot;
    bool operator==(const Loc& o) const { return xmm == o.xmm && reg == o.reg && (reg != kNoReg || slot == o.slot); }
  };
  struct Move {
    Loc dst;
    IRRef src;       // a value or a constant
    bool from_scratch = false;
  };
  Loc loc_of(IRRef r) const { return Loc{value_class(ir_[r]) == RegClass::Xmm, ra_.reg[r], ra_.slot[r]}; }

  void phi_moves() {
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
  void emit_move(const Move& m) {
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

  // --- one instruction
  void lower(IRRef r, const IRIns& ins) {
    if (const BinaryRow* row = binary_row(ins.op)) {
      lower_binary(r, ins, *row);
      return;
    }
    if (compare_row(ins.op) != nullptr) {
      mark_fused(r);
      if (!fused_.count(r)) lower_compare(r);
      return;
    }
    switch (ins.op) {
      case IROp::SLOAD:
        if (ins.op2 == 2) load_typed(r, kBase, static_cast<int32_t>(ins.op1) * kValueSize, ins.type);
        else load_guarded(r, kBase, static_cast<int32_t>(ins.op1) * kValueSize, ins.type, ins.snap);
        slot_tags_[ins.op1] = static_cast<uint8_t>(tag_for(ins.type));
        break;
      case IROp::GLOAD:
        a_.mov(x86::rdx, x86::qword_ptr(x86::rsp, kGlobals));
        load_guarded(r, x86::rdx, static_cast<int32_t>(ins.op1) * kValueSize, ins.type, ins.snap);
        break;
      case IROp::SSTORE: store_slot(ins.op1, ins.op2); break;
      case IROp::GSTORE: {
        a_.mov(x86::r11, x86::qword_ptr(x86::rsp, kGlobals));
        const int32_t off = static_cast<int32_t>(ins.op1) * kValueSize;
        store_value(x86::byte_ptr(x86::r11, off), x86::qword_ptr(x86::r11, off + 8), ins.op2);
        if (env_.global_watch != nullptr) report_global_store(ins.op1);
        break;
      }

      case IROp::NEG: {
        const x86::Gp d = def_gpr(r);
        move_gpr(d, ins.op1);
        a_.neg(d);
        commit(r, d);
        break;
      }
      case IROp::IDIV:
      case IROp::IMOD: lower_divmod(r, ins); break;
      case IROp::IPOW:
        lower_scalar_call(r, ins, reinterpret_cast<const void*>(&tessera_jit_int_pow), 2, false);
        break;
      case IROp::FNEG: {
        const x86::Xmm d = def_xmm(r);
        move_xmm(d, ins.op1);
        a_.mov(x86::rax, uint64_t{1} << 63);
        a_.movq(x86::xmm0, x86::rax);
        a_.xorpd(d, x86::xmm0);
        commit(r, d);
        break;
      }
      case IROp::FFLOORDIV:
        lower_scalar_call(r, ins, reinterpret_cast<const void*>(&tessera_jit_float_floordiv), 2, true);
        break;
      case IROp::FMOD: lower_scalar_call(r, ins, reinterpret_cast<const void*>(&tessera_jit_float_mod), 2, true); break;
      case IROp::FPOW: lower_scalar_call(r, ins, reinterpret_cast<const void*>(&tessera_jit_float_pow), 2, true); break;
      case IROp::FMATH: {
        if (ins.op2 == static_cast<uint32_t>(FloatMath::Sqrt)) {
          const x86::Xmm d = def_xmm(r);
          a_.emit(x86::Inst::kIdSqrtsd, d, xmm_src(ins.op1, x86::xmm0));
          commit(r, d);
          break;
        }
        FloatFn fn = float_math_fn(static_cast<FloatMath>(ins.op2));
        if (fn == nullptr) fail("unknown FloatMath id " + std::to_string(ins.op2));
        lower_scalar_call(r, ins, reinterpret_cast<const void*>(fn), 1, true);
        break;
      }
      case IROp::CONV: {
        const x86::Xmm d = def_xmm(r);
        const Operand s = gpr_src(ins.op1, x86::rax);
        a_.xorps(d, d);  // cvtsi2sd writes only the low half: break the dependency
        if (s.isImm()) a_.cvtsi2sd(d, gpr(ins.op1, x86::rax));
        else a_.emit(x86::Inst::kIdCvtsi2sd, d, s);
        commit(r, d);
        break;
      }
      case IROp::F32RND: {
        // Both conversions write only the low part of their destination:
        // zeroing first breaks the false dependency on its old value.
        const x86::Xmm d = def_xmm(r);
        a_.xorps(x86::xmm0, x86::xmm0);
        a_.emit(x86::Inst::kIdCvtsd2ss, x86::xmm0, xmm_src(ins.op1, x86::xmm0));
        a_.xorps(d, d);
        a_.cvtss2sd(d, x86::xmm0);
        commit(r, d);
        break;
      }
      case IROp::NOT: {
        const x86::Gp d = def_gpr(r);
        move_gpr(d, ins.op1);
        a_.xor_(d, 1);
        commit(r, d);
        break;
      }

      case IROp::GUARDT: guard_bool(ins.op1, true, ins.snap); break;
      case IROp::GUARDF: guard_bool(ins.op1, false, ins.snap); break;
      case IROp::EXIT: a_.jmp(exit_label(ins.snap)); break;

      case IROp::LLEN: {
        const x86::Gp l = gpr(ins.op1, x86::rax);
        const int32_t items = static_cast<int32_t>(env_.list.items_offset);
        a_.mov(x86::r10, x86::qword_ptr(l, items + static_cast<int32_t>(env_.list.end_offset)));
        a_.sub(x86::r10, x86::qword_ptr(l, items + static_cast<int32_t>(env_.list.begin_offset)));
        a_.shr(x86::r10, 4);
        commit(r, x86::r10);
        break;
      }
      case IROp::LLOAD:
        element_addr(ins.op1, ins.op2);
        load_guarded(r, x86::r11, 0, ins.type, ins.snap);
        break;
      case IROp::LREF:
        element_addr(ins.op1, ins.op2);
        commit(r, x86::r11);
        break;
      case IROp::LSTORE: {
        if (ins.op1 >= ir_.size() || ir_[ins.op1].op != IROp::LREF) fail("LSTORE's op1 must be an LREF");
        const x86::Gp addr = gpr(ins.op1, x86::r11);
        const x86::Gp a = addr.id() == x86::rax.id() || addr.id() == x86::rdx.id() ? x86::r11 : addr;
        if (a.id() != addr.id()) a_.mov(a, addr);
        store_value(x86::byte_ptr(a, 0), x86::qword_ptr(a, 8), ins.op2);
        break;
      }

      case IROp::FPUSH: push_frame(ins); break;
      case IROp::RETGUARD: return_guard(ins); break;
      case IROp::FPOP: pop_frame(r, ins); break;

      case IROp::TDTYPE: {
        const x86::Gp t = gpr(ins.op1, x86::rax);
        const x86::Gp d = def_gpr(r);
        a_.movzx(d.r32(), x86::byte_ptr(t, static_cast<int32_t>(env_.tensor.dtype_offset)));
        commit(r, d);
        break;
      }
      case IROp::TDIM: {
        const x86::Gp t = gpr(ins.op1, x86::rax);
        a_.mov(x86::rax, x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.shape_begin_offset)));
        const x86::Gp d = def_gpr(r);
        a_.mov(d, x86::qword_ptr(x86::rax, static_cast<int32_t>(8 * ins.op2)));
        commit(r, d);
        break;
      }
      case IROp::TRANK: {
        const x86::Gp t = gpr(ins.op1, x86::rax);
        const x86::Gp d = def_gpr(r);
        a_.mov(x86::rdx, x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.shape_begin_offset)));
        a_.mov(d, x86::qword_ptr(t, static_cast<int32_t>(env_.tensor.shape_end_offset)));
        a_.sub(d, x86::rdx);
        a_.sar(d, 3);
        commit(r, d);
        break;
      }
      case IROp::TIDX: {
        const x86::Gp d = def_gpr(r);
        move_gpr(d, ins.op1);
        commit(r, d);
        break;
      }
      case IROp::TREF: {
        const x86::Mem m = tensor_element(ins.op1, ins.op2);
        a_.lea(x86::r11, m);
        commit(r, x86::r11);
        break;
      }
      case IROp::TLOAD: lower_tload(r, ins); break;
      case IROp::TSTORE: lower_tstore(ins); break;

      case IROp::CALL: lower_call(r, ins); break;

      default: fail("opcode not supported by the asmjit backend");
    }
  }

  void lower_tload(IRRef r, const IRIns& ins) {
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

  void lower_tstore(const IRIns& ins) {
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

  const TraceIR& ir_;
  const LoweringEnv& env_;
  x86::Assembler& a_;
  TraceLiveness lv_;
  RegAssignment ra_;
  uint32_t preserved_mask_ = 0;
  IRRef loop_ = kNoRef;
  IRRef cur_ = kNoRef;
  Label loop_label_;
  uint32_t max_args_ = 1;
  int32_t tags_off_ = 0, spill_base_ = 0, frame_ = 0;
  std::map<uint16_t, Label> exits_;
  std::deque<ExitPlan> tier_up_plans_;  // emitted inline: no helper keeps their address
  std::deque<std::function<void()>> cold_;  // deque: a cold path may add more while it is emitted
  std::vector<std::pair<Label, std::vector<uint8_t>>> data_;  // constant_data
  std::unordered_set<IRRef> fused_;
  std::unordered_map<uint32_t, uint8_t> slot_tags_;  // base slot -> its tag here, where known
  const FunctionProto* cur_proto_ = nullptr;
  const FunctionProto* returning_to_ = nullptr;
  uint32_t returning_pc_ = 0;  // and the pc it resumes at
};

}  // namespace

AssemblyStats assemble_trace(const TraceIR& ir, const LoweringEnv& env, x86::Assembler& a, const Label& native,
                             const Label& entry) {
  return Assembler(ir, env, a).run(native, entry);
}

}  // namespace tessera::jit::t1
