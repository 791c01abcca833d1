// The T1 assembler's main loop and instruction selection (asm_state.h lists
// the other parts): one walk over the trace in order, after liveness and
// the linear-scan allocation. Constants are materialized where they are
// used; PHIs cost nothing until the back-edge's parallel move; a
// comparison read only by the guard right after it is not materialized (the
// guard branches on its flags). Exit stubs and cold paths are queued while
// the trace is emitted and placed after it, then the constant data.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "codegen/host/asmjit/asm_state.h"
#include "codegen/host/slot_tags.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"

namespace tessera::jit::t1 {

using namespace asmjit;
using x86::CondCode;

// Two-operand arithmetic: one x86 instruction each (dst op= src). Whether
// the operands may be swapped is ir.def's `comm` column.
struct BinaryRow {
  IROp op;
  x86::Inst::Id inst;
};

// A condition left in the flags by a comparison, for a fused guard.
struct Flags {
  CondCode cc;
  // Float EQ/NE: unordered (PF=1) counts as "not equal".
  bool float_eq = false;  // the condition is EQ of floats
  bool float_ne = false;  // the condition is NE of floats
};

namespace {

constexpr BinaryRow kBinary[] = {
    {IROp::ADD, x86::Inst::kIdAdd},     {IROp::SUB, x86::Inst::kIdSub},     {IROp::MUL, x86::Inst::kIdImul},
    {IROp::FADD, x86::Inst::kIdAddsd}, {IROp::FSUB, x86::Inst::kIdSubsd}, {IROp::FMUL, x86::Inst::kIdMulsd},
    {IROp::FDIV, x86::Inst::kIdDivsd},
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

// FMATH: the instruction that computes each function of
// tracer/float_math.def, or kIdNone where T1 calls its helper.
constexpr x86::Inst::Id kFloatMathInst[] = {
#define FLOATMATH(Name, fn, t1, t2, impl) x86::Inst::kId##t1,
#include "tracer/float_math.def"
#undef FLOATMATH
};
static_assert(std::size(kFloatMathInst) == static_cast<size_t>(FloatMath::NumFns));

CondCode negate(CondCode c) { return static_cast<CondCode>(static_cast<uint8_t>(c) ^ 1u); }

// The helper `ins` calls (trace_helpers.h), or nullptr where it is code of
// its own: FMATH of a function x86 has an instruction for.
const TraceHelper* called_helper(const IRIns& ins) {
  if (ins.op == IROp::FMATH && ins.op2 < static_cast<uint32_t>(FloatMath::NumFns) &&
      kFloatMathInst[ins.op2] != x86::Inst::kIdNone)
    return nullptr;
  return trace_helper_of(ins);
}

}  // namespace

AssemblyStats assemble_trace(const TraceIR& ir, const LoweringEnv& env, x86::Assembler& a, const Label& native,
                             const Label& entry, const Label& passed) {
  return TraceAssembler(ir, env, a).run(native, entry, passed);
}

AssemblyStats TraceAssembler::run(const Label& native, const Label& entry, const Label& passed) {
  // lower_binary reads both operands before it writes its result, so its
  // result may take over a PHI entry value's register.
  lv_ = compute_liveness(ir_, *env_.exit_plans, [](IROp op) { return binary_row(op) != nullptr; });
  ra_ = linear_scan(ir_, lv_, t1_registers());
  preserved_mask_ = t1_registers().gpr_call_preserved;
  find_loop();
  layout_frame();
  cur_proto_ = env_.proto;

  emit_entry_wrapper(native, entry);
  emit_prologue(native, passed);
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
    // With a logger (--dump), the IR instruction each block of code
    // implements (the trace viewer maps the assembly back to the IR).
    if (a_.logger()) a_.commentf("; %04u %s", static_cast<unsigned>(r), ir_op_info(ins.op).name);
    lower(r, ins);
  }
  cur_ = static_cast<IRRef>(ir_.size());
  if (loop_ != kNoRef) {
    if (a_.logger()) a_.comment("; back-edge: PHI moves");
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

void TraceAssembler::find_loop() {
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

void TraceAssembler::begin_loop() {
  slot_tags_ = loop_header_slot_tags(ir_);
  loop_label_ = a_.newLabel();
  a_.align(AlignMode::kCode, 16);
  a_.bind(loop_label_);
}

void TraceAssembler::lower(IRRef r, const IRIns& ins) {
  if (const BinaryRow* row = binary_row(ins.op)) {
    lower_binary(r, ins, *row);
    return;
  }
  if (compare_row(ins.op) != nullptr) {
    mark_fused(r);
    if (!fused_.count(r)) lower_compare(r);
    return;
  }
  if (const TraceHelper* h = called_helper(ins)) {
    lower_helper_call(r, ins, *h);
    return;
  }
  switch (ins.op) {
    case IROp::SLOAD:
      // A passed value is in its register from the entry on (emit_prologue);
      // its slot in memory holds what the parent's exit left there: a scalar
      // or nil (it released an object), of a tag not known here (Undef).
      if (!sload_passed(ins)) {
        if (ins.op2 == kSloadParentTyped) load_typed(r, kBase, static_cast<int32_t>(ins.op1) * kValueSize, ins.type);
        else load_guarded(r, kBase, static_cast<int32_t>(ins.op1) * kValueSize, ins.type, ins.snap);
      }
      update_slot_tags(slot_tags_, ir_, ins);
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
    case IROp::FNEG: {
      const x86::Xmm d = def_xmm(r);
      move_xmm(d, ins.op1);
      a_.mov(x86::rax, uint64_t{1} << 63);
      a_.movq(x86::xmm0, x86::rax);
      a_.xorpd(d, x86::xmm0);
      commit(r, d);
      break;
    }
    case IROp::FMATH: {  // of a function with an instruction (called_helper)
      const x86::Xmm d = def_xmm(r);
      a_.emit(kFloatMathInst[ins.op2], d, xmm_src(ins.op1, x86::xmm0));
      commit(r, d);
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
    case IROp::LLOADN:
      element_addr(ins.op1, ins.op2);
      load_number(r, x86::r11, 0, ins.snap);
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

    case IROp::IMIN:
    case IROp::IMAX: {
      // Into a scratch register first: r's register may be an operand's.
      a_.mov(x86::r10, gpr(ins.op1, x86::rax));
      const x86::Gp b = gpr(ins.op2, x86::rdx);
      a_.cmp(x86::r10, b);
      if (ins.op == IROp::IMIN) a_.cmovg(x86::r10, b);
      else a_.cmovl(x86::r10, b);
      commit(r, x86::r10);
      break;
    }
    case IROp::SLEN: {
      const x86::Gp str = gpr(ins.op1, x86::rax);
      a_.mov(x86::r10, x86::qword_ptr(str, static_cast<int32_t>(env_.str.length_offset)));
      commit(r, x86::r10);
      break;
    }
    case IROp::SBYTE: {
      const x86::Gp str = gpr(ins.op1, x86::rax);
      const x86::Gp i = gpr(ins.op2, x86::rdx);
      a_.movzx(x86::r10d, x86::byte_ptr(str, i, 0, static_cast<int32_t>(env_.str.data_offset)));
      commit(r, x86::r10);
      break;
    }
    case IROp::SCHAR: {
      // ctx->one_byte_strings[b]'s payload (a Value is 16 bytes).
      const x86::Gp b = gpr(ins.op1, x86::rax);
      a_.mov(x86::r10, b);
      a_.shl(x86::r10, 4);
      a_.mov(x86::r11, x86::qword_ptr(x86::rsp, kCtx));
      a_.mov(x86::r11, x86::qword_ptr(x86::r11, static_cast<int32_t>(offsetof(JitContext, one_byte_strings))));
      a_.mov(x86::r10, x86::qword_ptr(x86::r11, x86::r10, 0, static_cast<int32_t>(Value::kPayloadOffset)));
      commit(r, x86::r10);
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


    default: fail("opcode not supported by the asmjit backend");
  }
}

void TraceAssembler::lower_binary(IRRef r, const IRIns& ins, const BinaryRow& row) {
  const bool commutative = ir_op_info(ins.op).commutative;
  if (is_float_op(ins.op)) {
    const x86::Xmm d = def_xmm(r);
    const bool b_in_d = in_reg(ins.op2) && ra_.reg[ins.op2] == d.id() && ins.op1 != ins.op2;
    if (b_in_d && commutative) {
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
  if (b_in_d && commutative) {
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

bool TraceAssembler::is_float_op(IROp op) {
  return op == IROp::FADD || op == IROp::FSUB || op == IROp::FMUL || op == IROp::FDIV;
}

// Floored division and modulo (Python semantics), never trapping: b == 0
// gives 0 (the recorder guards it), b == -1 the wrapping negation and 0
// (x86 idiv faults on INT64_MIN / -1).
void TraceAssembler::lower_divmod(IRRef r, const IRIns& ins) {
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

// Leaves unless the Bool `cond` is `want`.
void TraceAssembler::guard_bool(IRRef cond, bool want, uint16_t snap) {
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
bool TraceAssembler::fusable(IRRef cond) const {
  return !is_const(cond) && compare_row(ir_[cond].op) != nullptr && lv_.uses[cond] == 1 && cond + 1 == cur_;
}

void TraceAssembler::mark_fused(IRRef r) {
  if (r + 1 < ir_.size()) {
    const IRIns& next = ir_[r + 1];
    if ((next.op == IROp::GUARDT || next.op == IROp::GUARDF) && next.op1 == r && lv_.uses[r] == 1) fused_.insert(r);
  }
}

// Emits the compare of instruction `cond` and says which flags hold it.
Flags TraceAssembler::compare_flags(IRRef cond) {
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

void TraceAssembler::lower_compare(IRRef r) {
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

}  // namespace tessera::jit::t1
