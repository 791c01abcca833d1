#include "tracer/recorder.h"

#include <fmt/format.h>

#include <algorithm>

#include "tracer/ir_operands.h"
#include "tracer/register_liveness.h"
#include "vm/builtins/builtin.h"
#include "vm/builtins/value_ops.h"
#include "vm/core/error.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

const char* abort_reason_message(AbortReason r) {
  static constexpr const char* kMessages[] = {
#define ABORT_REASON(name, msg) msg,
#include "tracer/abort_reasons.def"
#undef ABORT_REASON
  };
  static_assert(std::size(kMessages) == kNumAbortReasons);
  return kMessages[static_cast<int>(r)];
}

namespace {

IRType type_of_value(const Value& v) {
  switch (v.tag()) {
    case Tag::Nil: return IRType::Nil;
    case Tag::Bool: return IRType::Bool;
    case Tag::Int: return IRType::Int;
    case Tag::Float: return IRType::Float;
    case Tag::DTypeV: return IRType::DType;
    case Tag::Func: return IRType::Func;
    case Tag::Builtin: return IRType::Builtin;
    case Tag::Str: return IRType::Str;
    case Tag::List: return IRType::List;
    case Tag::Tensor: return IRType::Tensor;
    case Tag::Undef: break;
  }
  return IRType::None;
}

bool is_object(IRType t) { return t == IRType::Str || t == IRType::List || t == IRType::Tensor; }

// Tensor dtypes whose elements traces load and store directly (f16 and
// bf16 go through the runtime's conversion helpers).
bool raw_dtype(DType d) { return d == DType::F32 || d == DType::I32 || d == DType::I64 || d == DType::Bool; }

// What an element of dtype `d` reads as: float, int or bool.
IRType element_type(DType d) {
  if (d == DType::Bool) return IRType::Bool;
  return d == DType::F32 ? IRType::Float : IRType::Int;
}

// Stores a trace does inline: a number into an f32 tensor, an int into an
// int tensor, a bool into a bool tensor (the rest converts or raises: helper).
bool storable(DType d, const Value& v) {
  switch (d) {
    case DType::F32: return v.is_float() || v.is_int();
    case DType::I32:
    case DType::I64: return v.is_int();
    case DType::Bool: return v.is_bool();
    default: return false;
  }
}

// The arithmetic opcodes by operand kind, indexed by BinOp.
struct ArithIR {
  IROp int_op;    // NumOps: no int form
  IROp float_op;  // NumOps: no float form
};
constexpr ArithIR kArithIR[] = {
    /* Add    */ {IROp::ADD, IROp::FADD},
    /* Sub    */ {IROp::SUB, IROp::FSUB},
    /* Mul    */ {IROp::MUL, IROp::FMUL},
    /* Div    */ {IROp::NumOps, IROp::FDIV},
    /* IDiv   */ {IROp::IDIV, IROp::FFLOORDIV},
    /* Mod    */ {IROp::IMOD, IROp::FMOD},
    /* Pow    */ {IROp::IPOW, IROp::FPOW},
    /* MatMul */ {IROp::NumOps, IROp::NumOps},
};
static_assert(std::size(kArithIR) == kNumBinOps);
constexpr IROp kCompareIR[] = {IROp::EQ, IROp::NE, IROp::LT, IROp::LE, IROp::GT, IROp::GE};
static_assert(std::size(kCompareIR) == kNumCmpOps);

// The bytecode's arithmetic opcodes, mapped to their operator and whether the
// right operand is a constant.
struct ArithBytecode {
  Op op;
  BinOp bin;
  bool konst;
};
constexpr ArithBytecode kArithBytecode[] = {
    {Op::ADD, BinOp::Add, false},   {Op::SUB, BinOp::Sub, false},
    {Op::MUL, BinOp::Mul, false},   {Op::DIV, BinOp::Div, false},
    {Op::IDIV, BinOp::IDiv, false}, {Op::MOD, BinOp::Mod, false},
    {Op::POW, BinOp::Pow, false},   {Op::MATMUL, BinOp::MatMul, false},
    {Op::ADDK, BinOp::Add, true},   {Op::SUBK, BinOp::Sub, true},
    {Op::MULK, BinOp::Mul, true},   {Op::DIVK, BinOp::Div, true},
    {Op::IDIVK, BinOp::IDiv, true}, {Op::MODK, BinOp::Mod, true},
    {Op::POWK, BinOp::Pow, true},
};

struct CompareBytecode {
  Op op;
  CmpOp cmp;
  bool branch;  // compare-and-branch (followed by a JMP)
  bool konst;   // right operand is K[B]
};
constexpr CompareBytecode kCompareBytecode[] = {
    {Op::EQ, CmpOp::Eq, false, false},  {Op::NE, CmpOp::Ne, false, false},
    {Op::LT, CmpOp::Lt, false, false},  {Op::LE, CmpOp::Le, false, false},
    {Op::GT, CmpOp::Gt, false, false},  {Op::GE, CmpOp::Ge, false, false},
    {Op::JEQ, CmpOp::Eq, true, false},  {Op::JNE, CmpOp::Ne, true, false},
    {Op::JLT, CmpOp::Lt, true, false},  {Op::JLE, CmpOp::Le, true, false},
    {Op::JEQK, CmpOp::Eq, true, true},  {Op::JNEK, CmpOp::Ne, true, true},
    {Op::JLTK, CmpOp::Lt, true, true},  {Op::JLEK, CmpOp::Le, true, true},
    {Op::JGTK, CmpOp::Gt, true, true},  {Op::JGEK, CmpOp::Ge, true, true},
};

}  // namespace

TraceRecorder::TraceRecorder(FunctionProto* root, uint32_t loop_pc, RecorderLimits limits)
    : root_(root), loop_pc_(loop_pc), limits_(limits) {
  const Instr& hot = root->code[loop_pc];
  if (hot.op == Op::LOOP) {
    // while loop: the body runs from the LOOP to the JMP that jumps back to it.
    start_pc_ = loop_pc + 1;
    body_begin_ = loop_pc;
    body_end_ = loop_pc;
    for (uint32_t i = loop_pc + 1; i < root->code.size(); ++i) {
      const Instr& in = root->code[i];
      if (in.op == Op::JMP && static_cast<int64_t>(i) + 1 + in.sbx == loop_pc) body_end_ = i;
    }
  } else {
    // FORLOOP/ITERLOOP: the back-edge jumps to the body's first instruction.
    start_pc_ = static_cast<uint32_t>(static_cast<int64_t>(loop_pc) + 1 + hot.sbx);
    body_begin_ = start_pc_;
    body_end_ = loop_pc;
  }
  frames_.push_back(Frame{root, 0, 0, 0});
  // Snapshot 0: the trace's entry state (used by the entry SLOADs' guards).
  Snapshot s0;
  s0.pc = start_pc_;
  ir_.snapshots().push_back(std::move(s0));
  snap_modified_.emplace_back();
}

TraceRecorder::TraceRecorder(FunctionProto* root, uint32_t start_pc, RecorderLimits limits, SideTrace)
    : root_(root), loop_pc_(UINT32_MAX), start_pc_(start_pc), limits_(limits), side_(true), linear_(true) {
  body_begin_ = 0;
  body_end_ = static_cast<uint32_t>(root->code.size());
  frames_.push_back(Frame{root, 0, 0, 0});
  Snapshot s0;
  s0.pc = start_pc_;
  ir_.snapshots().push_back(std::move(s0));
  snap_modified_.emplace_back();
}

TraceRecorder::TraceRecorder(FunctionProto* fn, RecorderLimits limits, FunctionEntry)
    : root_(fn), loop_pc_(UINT32_MAX), start_pc_(0), limits_(limits), func_(true), linear_(true) {
  body_begin_ = 0;
  body_end_ = static_cast<uint32_t>(fn->code.size());
  frames_.push_back(Frame{fn, 0, 0, 0});
  Snapshot s0;
  s0.pc = 0;
  ir_.snapshots().push_back(std::move(s0));
  snap_modified_.emplace_back();
}

TraceRecorder::Status TraceRecorder::abort(AbortReason r, std::string detail) {
  abort_ = r;
  const FunctionProto* f = frames_.empty() ? root_ : frames_.back().proto;
  const int line = cur_pc_ < f->lines.size() ? f->lines[cur_pc_] : f->line;
  abort_detail_ = fmt::format("in {} at line {} ({} at pc {}){}{}", f->name, line,
                              cur_pc_ < f->code.size() ? op_info(f->code[cur_pc_].op).name : "?", cur_pc_,
                              detail.empty() ? "" : ": ", detail);
  return Status::Aborted;
}

void TraceRecorder::ensure_slot(uint32_t abs) {
  if (abs >= slots_.size()) {
    size_t n = std::max<size_t>(abs + 1, slots_.size() * 2);
    slots_.resize(n, kNoRef);
    sloads_.resize(n, kNoRef);
    modified_.resize(n, false);
    dirty_.resize(n, false);
  }
  max_slot_ = std::max(max_slot_, abs);
}

IRRef TraceRecorder::constant(const Value& v) {
  switch (v.tag()) {
    case Tag::Nil: return ir_.knil();
    case Tag::Bool: return ir_.kbool(v.as_bool());
    case Tag::Int: return ir_.kint(v.as_int());
    case Tag::Float: return ir_.kfloat(v.as_float());
    case Tag::Str:
    case Tag::List:
    case Tag::Tensor: return ir_.kobj(v.as_obj(), type_of_value(v));
    case Tag::Func: return ir_.kobj(v.as_func(), IRType::Func);
    case Tag::Builtin: return ir_.kobj(v.as_builtin(), IRType::Builtin);
    case Tag::DTypeV: return ir_.kint(static_cast<int64_t>(v.as_dtype()));
    case Tag::Undef: break;
  }
  return ir_.knil();
}

IRRef TraceRecorder::read(uint32_t reg, const Value* R) {
  uint32_t abs = abs_slot(reg);
  ensure_slot(abs);
  if (slots_[abs] != kNoRef) return slots_[abs];
  if (epoch_ > 0) {
    // After a base frame switch the value is loaded where it is used,
    // exiting (if its type is not the one seen) to the current instruction.
    IRRef r = ir_.emit(IROp::SLOAD, type_of_value(R[reg]), abs, 1, snapshot(cur_pc_));
    slots_[abs] = r;
    return r;
  }
  // First use in this iteration: the entry value, guarded by type. Entry
  // SLOADs are hoisted before the loop; they exit through snapshot 0. A side
  // trace's parent may have proven the type already: no guard then.
  const IRType t = type_of_value(R[reg]);
  if (auto known = parent_types_.find(abs); known != parent_types_.end() && known->second == t) {
    IRRef r = ir_.emit(IROp::SLOAD, t, abs, 2);
    slots_[abs] = r;
    sloads_[abs] = r;
    return r;
  }
  IRRef r = ir_.emit(IROp::SLOAD, t, abs, 0, 0);
  slots_[abs] = r;
  sloads_[abs] = r;
  return r;
}

void TraceRecorder::write(uint32_t reg, IRRef ref) {
  uint32_t abs = abs_slot(reg);
  ensure_slot(abs);
  slots_[abs] = ref;
  modified_[abs] = true;
  if (is_object(type_of(ref)) && ir_[ref].op != IROp::GLOAD) {
    // Objects are stored through so that the register owns them. An object
    // just loaded from a global is owned by the global: it is written like
    // a scalar (by exits, or when a global store could drop it).
    ir_.emit(IROp::SSTORE, IRType::None, abs, ref);
    dirty_[abs] = false;
  } else {
    dirty_[abs] = true;
  }
}

uint16_t TraceRecorder::snapshot(uint32_t pc) {
  Snapshot s;
  s.ir_ref = static_cast<uint32_t>(ir_.size());
  s.pc = pc;
  if (epoch_ > 0) s.base_proto = frames_[0].proto;
  for (size_t i = 1; i < frames_.size(); ++i)
    s.frames.push_back(
        SnapshotFrame{frames_[i].proto, frames_[i].base, frames_[i].call_pc, frames_[i].proto->name});
  for (uint32_t abs = 0; abs < slots_.size(); ++abs)
    if (dirty_[abs] && slots_[abs] != kNoRef) s.entries.push_back(SnapshotEntry{abs, slots_[abs]});
  auto& snaps = ir_.snapshots();
  // Consecutive guards with nothing changed in between share a snapshot
  // (not across a base frame switch: the same slots are other registers).
  if (snaps.size() > 1 && snap_epoch_ == epoch_ && snap_modified_.back() == modified_) {
    const Snapshot& last = snaps.back();
    if (last.pc == s.pc && last.base_proto == s.base_proto && last.frames.size() == s.frames.size() &&
        last.entries.size() == s.entries.size() &&
        std::equal(last.entries.begin(), last.entries.end(), s.entries.begin(),
                   [](const SnapshotEntry& a, const SnapshotEntry& b) {
                     return a.slot == b.slot && a.ref == b.ref;
                   }))
      return static_cast<uint16_t>(snaps.size() - 1);
  }
  snaps.push_back(std::move(s));
  snap_modified_.push_back(modified_);
  snap_epoch_ = epoch_;
  return static_cast<uint16_t>(snaps.size() - 1);
}

void TraceRecorder::guard(bool expect_true, IRRef cond) {
  const IRIns& c = ir_[cond];
  if (c.op == IROp::KBOOL) return;  // decided at record time
  ir_.emit(expect_true ? IROp::GUARDT : IROp::GUARDF, IRType::None, cond, 0, snapshot(cur_pc_));
}

IRRef TraceRecorder::arg_chain(const std::vector<IRRef>& args) {
  if (args.empty()) return kNoRef;
  IRRef chain = args[0];
  for (size_t i = 1; i < args.size(); ++i)
    chain = ir_.emit(IROp::CARG, IRType::None, chain, args[i]);
  return chain;
}

void TraceRecorder::call_helper(CallTarget target, const std::vector<IRRef>& args, uint32_t dst,
                                const std::vector<const Value*>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    if (v == nullptr || !v->is_tensor()) continue;
    const TensorObj& t = *v->as_tensor();
    if ((t.dtype != DType::F32 && t.dtype != DType::I64) || t.numel > kSeenMaxElements) continue;
    target.seen.resize(i + 1);  // up to the last tensor seen, as the text form spells it
    target.seen[i] = VirtualTensor{t.dtype, t.shape};
  }
  uint32_t abs = abs_slot(dst);
  ensure_slot(abs);
  target.dest_slot = static_cast<int32_t>(abs);
  // The snapshot is taken before the call: if the helper raises, the
  // interpreter re-executes the instruction and reports the error itself.
  uint16_t snap = snapshot(cur_pc_);
  IRRef chain = arg_chain(args);
  ir_.calls().push_back(std::move(target));
  ir_.emit(IROp::CALL, IRType::None, chain, static_cast<uint32_t>(ir_.calls().size() - 1), snap);
  // The helper wrote the register itself: it is current, not dirty.
  slots_[abs] = kNoRef;
  modified_[abs] = true;
  dirty_[abs] = false;
  pending_reload_ = abs;
}

TraceRecorder::Status TraceRecorder::arith(BinOp op, uint32_t dst, IRRef a, IRRef b, const Value& va,
                                           const Value& vb) {
  const ArithIR& forms = kArithIR[static_cast<int>(op)];
  IRType ta = type_of(a), tb = type_of(b);
  bool ints = ta == IRType::Int && tb == IRType::Int;
  bool nums = (ta == IRType::Int || ta == IRType::Float) && (tb == IRType::Int || tb == IRType::Float);
  if (ints && forms.int_op != IROp::NumOps) {
    if (op == BinOp::IDiv || op == BinOp::Mod) {
      // Division by zero leaves the trace; the interpreter raises the error.
      guard(true, ir_.emit(IROp::NE, IRType::Bool, b, ir_.kint(0)));
    }
    if (op == BinOp::Pow) {
      bool neg = vb.as_int() < 0;
      guard(!neg, ir_.emit(IROp::GE, IRType::Bool, b, ir_.kint(0)));
      if (neg) {
        IRRef fa = ir_.emit(IROp::CONV, IRType::Float, a);
        IRRef fb = ir_.emit(IROp::CONV, IRType::Float, b);
        write(dst, ir_.emit(IROp::FPOW, IRType::Float, fa, fb));
        return Status::Continue;
      }
    }
    write(dst, ir_.emit(forms.int_op, IRType::Int, a, b));
    return Status::Continue;
  }
  if (nums && forms.float_op != IROp::NumOps) {
    if (ta == IRType::Int) a = ir_.emit(IROp::CONV, IRType::Float, a);
    if (tb == IRType::Int) b = ir_.emit(IROp::CONV, IRType::Float, b);
    write(dst, ir_.emit(forms.float_op, IRType::Float, a, b));
    return Status::Continue;
  }
  // Strings, lists, tensors, errors: the generic semantics in a helper.
  CallTarget t{CallTarget::Kind::Arith, static_cast<uint8_t>(op), nullptr,
               std::string("arith") + binop_symbol(op)};
  call_helper(std::move(t), {a, b}, dst, {&va, &vb});
  return Status::Continue;
}

TraceRecorder::Status TraceRecorder::compare(CmpOp op, IRRef a, IRRef b, IRRef& out) {
  // An int constant against a float compares as a float constant where the
  // conversion is exact (|k| <= 2^53), as the interpreter's exact compare does.
  auto as_float_const = [&](IRRef& r) {
    if (ir_[r].op != IROp::KINT) return false;
    const int64_t k = ir_.const_int(r);
    if (k < -(int64_t{1} << 53) || k > (int64_t{1} << 53)) return false;
    r = ir_.kfloat(static_cast<double>(k));
    return true;
  };
  if (type_of(a) == IRType::Int && type_of(b) == IRType::Float) as_float_const(a);
  if (type_of(a) == IRType::Float && type_of(b) == IRType::Int) as_float_const(b);
  IRType ta = type_of(a), tb = type_of(b);
  bool same_scalar = ta == tb && (ta == IRType::Int || ta == IRType::Float);
  bool bools = ta == IRType::Bool && tb == IRType::Bool &&
               (op == CmpOp::Eq || op == CmpOp::Ne);
  if (same_scalar || bools) {
    out = ir_.emit(kCompareIR[static_cast<int>(op)], IRType::Bool, a, b);
    return Status::Continue;
  }
  out = kNoRef;
  return Status::Continue;
}

TraceRecorder::Status TraceRecorder::record(FunctionProto* fn, uint32_t pc, const Value* stack,
                                            size_t frame_base, const Value* globals) {
  const Value* R = stack + frame_base;
  if (first_) {
    first_ = false;
    if (fn != root_ || pc != start_pc_) return abort(AbortReason::LeftLoop, "did not start at the loop");
    base_index_ = frame_base;
  }
  if (pending_pop_) {
    pending_pop_ = false;
    if (ir_.size() > limits_.maxrecord) return abort(AbortReason::TraceTooLong);
    pop_frame(fn, pc, frame_base);
  }
  if (linear_ && epoch_ > 0 && frames_.size() == 1 && fn == root_ && pc == start_pc_) {
    // Back where the trace started, in another frame of the same function:
    // down-recursion loops (each return runs the same code one frame lower).
    cur_pc_ = pc;
    return link_to(kLinkSelf, pc);
  }
  if (pending_reload_ >= 0) {
    // Type the result a helper call stored: a guard after the call, which
    // resumes after the instruction (the result is already in its register).
    uint32_t abs = static_cast<uint32_t>(pending_reload_);
    pending_reload_ = -1;
    const Value& v = stack[base_index_ + abs];
    IRType t = type_of_value(v);
    if (t == IRType::None) return abort(AbortReason::ErrorRaised, "undefined value");
    cur_pc_ = pc;
    IRRef r = ir_.emit(IROp::SLOAD, t, abs, 1, snapshot(pc));
    slots_[abs] = r;
  }
  if (ir_.size() > limits_.maxrecord) return abort(AbortReason::TraceTooLong);
  // Keep the recorder's frame view in step with the interpreter.
  if (frames_.size() == 1 && fn == root_ && !in_loop_body(pc)) return abort(AbortReason::LeftLoop);
  cur_pc_ = pc;
  try {
    return step(fn, pc, fn->code[pc], R, globals);
  } catch (const RuntimeError& e) {
    return abort(AbortReason::ErrorRaised, e.what());
  }
}

TraceRecorder::Status TraceRecorder::step(FunctionProto* fn, uint32_t pc, const Instr& ins,
                                          const Value* R, const Value* G) {
  const Value* K = fn->consts.data();
  const bool at_root = frames_.size() == 1;
  switch (ins.op) {
    case Op::MOVE: write(ins.a, read(ins.b, R)); return Status::Continue;
    case Op::LOADK: write(ins.a, constant(K[ins.bx])); return Status::Continue;
    case Op::LOADI: write(ins.a, ir_.kint(ins.sbx)); return Status::Continue;
    case Op::LOADNIL: write(ins.a, ir_.knil()); return Status::Continue;
    case Op::LOADTRUE: write(ins.a, ir_.kbool(true)); return Status::Continue;
    case Op::LOADFALSE: write(ins.a, ir_.kbool(false)); return Status::Continue;

    case Op::GETGLOBAL: {
      const Value& g = G[ins.bx];
      if (g.is_undef()) return abort(AbortReason::ErrorRaised, "undefined global");
      IRType t = type_of_value(g);
      const bool stored = std::find(stored_globals_.begin(), stored_globals_.end(), ins.bx) != stored_globals_.end();
      if ((t == IRType::Func || t == IRType::Builtin) && !stored) {
        // Calls through this global are specialised to its current value,
        // assumed constant: storing into the global invalidates the trace.
        auto& assumed = ir_.assumed_globals();
        if (std::none_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == ins.bx; }))
          assumed.push_back({ins.bx, g.is_func() ? static_cast<const void*>(g.as_func())
                                                 : static_cast<const void*>(g.as_builtin())});
        write(ins.a, constant(g));
        return Status::Continue;
      }
      IRRef r = ir_.emit(IROp::GLOAD, t, ins.bx, 0, snapshot(pc));
      if (t == IRType::Func || t == IRType::Builtin) {
        // A global this trace also stores: guarded on every load instead.
        guard(true, ir_.emit(IROp::EQ, IRType::Bool, r, constant(g)));
        r = constant(g);
      }
      write(ins.a, r);
      return Status::Continue;
    }
    case Op::SETGLOBAL:
    case Op::DEFGLOBAL: {
      const auto& assumed = ir_.assumed_globals();
      if (std::any_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == ins.bx; }))
        return abort(AbortReason::NYIBytecode, "store into a global the trace assumed constant");
      if (std::find(stored_globals_.begin(), stored_globals_.end(), ins.bx) == stored_globals_.end())
        stored_globals_.push_back(ins.bx);
      IRRef v = read(ins.a, R);
      // Objects borrowed from globals get an owner first: this store may
      // drop the global's reference.
      for (uint32_t abs = 0; abs < slots_.size(); ++abs) {
        if (dirty_[abs] && slots_[abs] != kNoRef && is_object(type_of(slots_[abs]))) {
          ir_.emit(IROp::SSTORE, IRType::None, abs, slots_[abs]);
          dirty_[abs] = false;
        }
      }
      ir_.emit(IROp::GSTORE, IRType::None, ins.bx, v);
      return Status::Continue;
    }

    case Op::NEG: {
      IRRef b = read(ins.b, R);
      if (type_of(b) == IRType::Int) write(ins.a, ir_.emit(IROp::NEG, IRType::Int, b));
      else if (type_of(b) == IRType::Float) write(ins.a, ir_.emit(IROp::FNEG, IRType::Float, b));
      else call_helper(CallTarget{CallTarget::Kind::Negate, 0, nullptr, "neg"}, {b}, ins.a, {&R[ins.b]});  // tensors; errors
      return Status::Continue;
    }
    case Op::NOT: {
      IRRef b = read(ins.b, R);
      if (type_of(b) != IRType::Bool) return abort(AbortReason::NonBoolCond);
      write(ins.a, ir_.emit(IROp::NOT, IRType::Bool, b));
      return Status::Continue;
    }
    case Op::CHKBOOL:
      if (type_of(read(ins.a, R)) != IRType::Bool) return abort(AbortReason::NonBoolCond);
      return Status::Continue;

    case Op::JMP: return Status::Continue;
    case Op::JMPF:
    case Op::JMPT: {
      IRRef c = read(ins.a, R);
      if (type_of(c) != IRType::Bool) return abort(AbortReason::NonBoolCond);
      guard(R[ins.a].as_bool(), c);
      return Status::Continue;
    }

    case Op::LOOP:
      if (!linear_ && at_root && pc == loop_pc_) return close_trace();
      // A trace may pass through another while loop's header (on its way to
      // the trace it links to); seeing it twice means it loops by itself.
      if (at_root && pc != loop_pc_ && visit_loop(pc)) return Status::Continue;
      return abort(AbortReason::InnerLoop);
    case Op::FORPREP: {
      // A trace may run into a loop whose back-edge has a trace (an outer
      // loop's root trace into its inner loop, a side trace back into a
      // loop); only the common step-1 form is recorded.
      if (!at_root) return abort(AbortReason::InnerLoop);
      if (!R[ins.a].is_int() || !R[ins.a + 1].is_int() || !R[ins.a + 2].is_int() ||
          R[ins.a + 2].as_int() != 1)
        return abort(AbortReason::NYIBytecode, "FORPREP with a step other than 1");
      IRRef start = read(ins.a, R), stop = read(ins.a + 1, R), step = read(ins.a + 2, R);
      guard(true, ir_.emit(IROp::EQ, IRType::Bool, step, ir_.kint(1)));
      bool runs = R[ins.a].as_int() < R[ins.a + 1].as_int();
      guard(runs, ir_.emit(IROp::LT, IRType::Bool, start, stop));
      if (runs) {
        IRRef left = ir_.emit(IROp::SUB, IRType::Int, ir_.emit(IROp::SUB, IRType::Int, stop, start), ir_.kint(1));
        write(ins.a + 1, left);
        write(ins.a + 3, start);
      }
      return Status::Continue;
    }
    case Op::ITERPREP: {
      // for x in list, run into on the way to the loop's trace (as FORPREP).
      if (!at_root || !R[ins.a].is_list()) return abort(AbortReason::InnerLoop);
      IRRef list = read(ins.a, R);
      IRRef n = ir_.emit(IROp::LLEN, IRType::Int, list);
      const auto& items = R[ins.a].as_list()->items;
      guard(items.empty(), ir_.emit(IROp::EQ, IRType::Bool, n, ir_.kint(0)));
      if (items.empty()) return Status::Continue;  // the loop is skipped
      IRRef first = ir_.emit(IROp::LLOAD, type_of_value(items[0]), list, ir_.kint(0), snapshot(pc));
      write(ins.a + 1, n);
      write(ins.a + 2, ir_.kint(0));
      write(ins.a + 3, first);
      return Status::Continue;
    }
    case Op::JFORLOOP: {
      if (!at_root) return abort(AbortReason::InnerLoop);
      const bool more = R[ins.a + 1].as_int() > 0;
      for_step(ins, R, more);
      if (!more) return Status::Continue;  // the loop ends here; keep recording after it
      return link_to(fn->trace_at(pc), static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx));
    }
    case Op::JLOOP:
      if (!at_root) return abort(AbortReason::InnerLoop);
      return link_to(fn->trace_at(pc), pc + 1);
    case Op::JITERLOOP: {
      if (!at_root) return abort(AbortReason::InnerLoop);
      bool more = false;
      if (Status st = iter_step(pc, ins, R, more); st != Status::Continue) return st;
      if (!more) return Status::Continue;  // the loop ends here; keep recording after it
      return link_to(fn->trace_at(pc), static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx));
    }
    case Op::FORLOOP: {
      // A linear trace may also leave another loop through its back-edge
      // (however often it went round it before).
      if (linear_ && at_root && (visit_loop(pc) || R[ins.a + 1].as_int() <= 0)) {
        // A side trace follows an outer loop's back-edge into its next
        // iteration (towards the inner loop's trace), or out of the loop.
        for_step(ins, R, R[ins.a + 1].as_int() > 0);
        return Status::Continue;
      }
      if (!at_root || pc != loop_pc_) return abort(AbortReason::InnerLoop);
      // left > 0 keeps looping; the exit re-runs FORLOOP, which falls through.
      // (Recording may end on the loop's last iteration: the trace is still
      // right for the next time the loop runs.)
      trip_hint_ = R[ins.a + 1].as_int();
      for_step(ins, R, true);
      return close_trace();
    }
    case Op::ITERLOOP: {
      if (linear_ && at_root && (visit_loop(pc) || R[ins.a + 2].as_int() + 1 >= R[ins.a + 1].as_int())) {
        // Through another loop's back-edge once, or out of it (as FORLOOP above).
        bool more = false;
        return iter_step(pc, ins, R, more);
      }
      if (!at_root || pc != loop_pc_) return abort(AbortReason::InnerLoop);
      // i + 1 < length snapshot; the element load is bounds-guarded.
      IRRef idx = ir_.emit(IROp::ADD, IRType::Int, read(ins.a + 2, R), ir_.kint(1));
      IRRef n = read(ins.a + 1, R);
      guard(true, ir_.emit(IROp::LT, IRType::Bool, idx, n));
      IRRef list = read(ins.a, R);
      const auto& items = R[ins.a].as_list()->items;
      size_t i = static_cast<size_t>(R[ins.a + 2].as_int() + 1);
      // On the loop's last iteration the element's type is not known: the
      // trace cannot be finished from here.
      if (R[ins.a + 2].as_int() + 1 >= R[ins.a + 1].as_int()) return abort(AbortReason::LeftLoop);
      if (i >= items.size()) return abort(AbortReason::ErrorRaised, "list shrank");
      IRRef len = ir_.emit(IROp::LLEN, IRType::Int, list);
      guard(true, ir_.emit(IROp::ULT, IRType::Bool, idx, len));
      IRRef elem = ir_.emit(IROp::LLOAD, type_of_value(items[i]), list, idx, snapshot(pc));
      write(ins.a + 2, idx);
      write(ins.a + 3, elem);
      return close_trace();
    }

    case Op::CALL: {
      const Value& callee = R[ins.a];
      IRRef cref = read(ins.a, R);
      if (callee.is_func()) {
        FunctionProto* f = callee.as_func();
        if (f->nparams != ins.b) return abort(AbortReason::ErrorRaised, "argument count");
        if (frames_.size() > limits_.maxinline) return abort(AbortReason::InlineTooDeep);
        bool recursive = false;
        for (const Frame& fr : frames_) recursive = recursive || fr.proto == f;
        if (ir_[cref].op != IROp::KOBJ) guard(true, ir_.emit(IROp::EQ, IRType::Bool, cref, constant(callee)));
        // A call pushes a real frame and jumps to the callee's function
        // trace (this trace itself when it is the callee's) where inlining
        // could not follow the callee: up-recursion, calls of functions
        // known to recurse, and of functions with loops (which have their
        // own traces). Other calls are inlined.
        const bool has_trace = f->entry_trace >= 0 || (func_ && f == root_);
        if (at_root && has_trace && (recursive || f->jit_recursive || f->has_loops)) {
          if (recursive) f->jit_recursive = true;
          return push_frame(f, ins.a);
        }
        if (recursive) return abort(AbortReason::Recursion, f->name);
        if (f->has_loops && !linear_) {
          // A loop trace cannot stop here: abort, and have the function's
          // next call record its function trace, which the next try links to.
          f->entry_hotcount = 1;
          return abort(AbortReason::InnerLoop, f->name + " has loops and no function trace yet");
        }
        if (at_root && linear_ && f->has_loops) {
          // No trace for it yet, and its loops cannot be inlined: stop here
          // and let the interpreter make the call (its loops and, once hot,
          // its function trace take over). Its next call records that trace.
          f->entry_hotcount = 1;
          ir_.emit(IROp::EXIT, IRType::None, 0, 0, snapshot(pc));
          return close_trace();
        }
        uint32_t base = abs_slot(ins.a) + 1;
        frames_.push_back(Frame{f, base, pc, ins.a});
        ensure_slot(base + static_cast<uint32_t>(f->nregs));
        return Status::Continue;
      }
      if (callee.is_builtin()) {
        if (ir_[cref].op != IROp::KOBJ) guard(true, ir_.emit(IROp::EQ, IRType::Bool, cref, constant(callee)));
        std::vector<IRRef> args;
        std::vector<const Value*> values;
        for (int i = 0; i < ins.b; ++i) {
          args.push_back(read(ins.a + 1 + i, R));
          values.push_back(&R[ins.a + 1 + i]);
        }
        const BuiltinDef* bd = callee.as_builtin();
        // Math of one number (sqrt, exp, ...) is an instruction, not a call.
        FloatMath fm = float_math_by_name(bd->name);
        if (fm != FloatMath::NumFns && args.size() == 1 &&
            (type_of(args[0]) == IRType::Int || type_of(args[0]) == IRType::Float)) {
          IRRef x = args[0];
          if (type_of(x) == IRType::Int) x = ir_.emit(IROp::CONV, IRType::Float, x);
          write(ins.a, ir_.emit(IROp::FMATH, IRType::Float, x, static_cast<uint32_t>(fm)));
          return Status::Continue;
        }
        call_helper(CallTarget{CallTarget::Kind::Builtin, 0, bd, bd->name}, args, ins.a, values);
        return Status::Continue;
      }
      return abort(AbortReason::CallNotFunction);
    }
    case Op::CALLKW: {
      // Built-ins with keyword arguments (zeros(..., dtype=i64)) run as a
      // helper call; a user function raises in the interpreter.
      const Value& callee = R[ins.a];
      if (!callee.is_builtin()) return abort(AbortReason::KeywordCall);
      IRRef cref = read(ins.a, R);
      if (ir_[cref].op != IROp::KOBJ) guard(true, ir_.emit(IROp::EQ, IRType::Bool, cref, constant(callee)));
      const ListObj* names = K[ins.c].as_list();
      std::vector<IRRef> args;
      for (size_t i = 0; i < ins.b + names->items.size(); ++i) args.push_back(read(ins.a + 1 + static_cast<uint32_t>(i), R));
      const BuiltinDef* bd = callee.as_builtin();
      CallTarget t{CallTarget::Kind::BuiltinKw, static_cast<uint8_t>(names->items.size()), bd, bd->name};
      t.aux = names;
      if (names->items.size() > 255) return abort(AbortReason::KeywordCall, "too many keyword arguments");
      call_helper(std::move(t), args, ins.a);
      return Status::Continue;
    }
    case Op::NEWLIST: {
      std::vector<IRRef> args;
      for (int i = 0; i < ins.c; ++i) args.push_back(read(ins.b + i, R));
      call_helper(CallTarget{CallTarget::Kind::NewList, 0, nullptr, "newlist"}, args, ins.a);
      return Status::Continue;
    }
    case Op::RET:
    case Op::RETNIL: {
      IRRef result = ins.op == Op::RET ? read(ins.a, R) : ir_.knil();
      if (at_root) {
        if (func_ && epoch_ == 0) {
          // A function trace ends at its own return: the interpreter returns
          // (a side trace of this exit then follows the return into the caller).
          ir_.emit(IROp::EXIT, IRType::None, 0, 0, snapshot(pc));
          linear_ = true;
          return close_trace();
        }
        if (!side_ && !func_) return abort(AbortReason::ReturnFromRoot);
        // Down-recursion: the caller's identity is known at its first
        // instruction, the next one recorded.
        pending_pop_ = true;
        pop_value_ = result;
        pop_snap_ = snapshot(pc);
        return Status::Continue;
      }
      Frame callee = frames_.back();
      frames_.pop_back();
      // The callee's registers are dead: exits must not write them back.
      for (uint32_t s = callee.base; s < slots_.size(); ++s) {
        slots_[s] = kNoRef;
        dirty_[s] = false;
      }
      write(callee.ret_reg, result);
      return Status::Continue;
    }

    case Op::GETINDEX: {
      const Value& obj = R[ins.b];
      const Value& idx = R[ins.c];
      if (obj.is_tensor()) {
        const uint32_t reg = ins.c;
        if (IRRef ti = tensor_element(ins.b, &reg, 1, R); ti != kNoRef) {
          write(ins.a, ir_.emit(IROp::TLOAD, element_type(obj.as_tensor()->dtype), read(ins.b, R), ti));
          return Status::Continue;
        }
      }
      IRRef o = read(ins.b, R), i = read(ins.c, R);
      if (obj.is_list() && idx.is_int() && idx.as_int() >= 0 &&
          static_cast<uint64_t>(idx.as_int()) < obj.as_list()->items.size()) {
        IRRef len = ir_.emit(IROp::LLEN, IRType::Int, o);
        guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, len));
        const Value& elem = obj.as_list()->items[static_cast<size_t>(idx.as_int())];
        write(ins.a, ir_.emit(IROp::LLOAD, type_of_value(elem), o, i, snapshot(pc)));
        return Status::Continue;
      }
      call_helper(CallTarget{CallTarget::Kind::IndexGet, 1, nullptr, "index_get"}, {o, i}, ins.a);
      return Status::Continue;
    }
    case Op::SETINDEX: {
      const Value& obj = R[ins.a];
      const Value& idx = R[ins.b];
      if (obj.is_tensor() && storable(obj.as_tensor()->dtype, R[ins.c])) {
        const uint32_t reg = ins.b;
        if (IRRef ti = tensor_element(ins.a, &reg, 1, R); ti != kNoRef) {
          IRRef ref = ir_.emit(IROp::TREF, IRType::None, read(ins.a, R), ti);
          ir_.emit(IROp::TSTORE, IRType::None, ref, read(ins.c, R));
          return Status::Continue;
        }
      }
      IRRef o = read(ins.a, R), i = read(ins.b, R), v = read(ins.c, R);
      if (obj.is_list() && idx.is_int() && idx.as_int() >= 0 &&
          static_cast<uint64_t>(idx.as_int()) < obj.as_list()->items.size()) {
        IRRef len = ir_.emit(IROp::LLEN, IRType::Int, o);
        guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, len));
        IRRef ref = ir_.emit(IROp::LREF, IRType::None, o, i);
        ir_.emit(IROp::LSTORE, IRType::None, ref, v);
        return Status::Continue;
      }
      // The helper returns nil; its result goes to a scratch slot above the frame.
      return abort(AbortReason::NYIBytecode, "SETINDEX on a non-list");
    }
    case Op::GETINDEXN: {
      if (R[ins.b].is_tensor()) {
        std::vector<uint32_t> regs;
        for (int k = 0; k < ins.c; ++k) regs.push_back(ins.b + 1 + k);
        if (IRRef ti = tensor_element(ins.b, regs.data(), regs.size(), R); ti != kNoRef) {
          write(ins.a, ir_.emit(IROp::TLOAD, element_type(R[ins.b].as_tensor()->dtype), read(ins.b, R), ti));
          return Status::Continue;
        }
      }
      std::vector<IRRef> args{read(ins.b, R)};
      for (int k = 0; k < ins.c; ++k) args.push_back(read(ins.b + 1 + k, R));
      call_helper(CallTarget{CallTarget::Kind::IndexGet, static_cast<uint8_t>(ins.c), nullptr, "index_get"},
                  args, ins.a);
      return Status::Continue;
    }

    case Op::SETINDEXN: {
      // obj[i, j, ...] = v: A object, A+1.. the indices, B the value.
      const Value& obj = R[ins.a];
      if (obj.is_tensor() && storable(obj.as_tensor()->dtype, R[ins.b])) {
        std::vector<uint32_t> regs;
        for (int k = 0; k < ins.c; ++k) regs.push_back(ins.a + 1 + k);
        if (IRRef ti = tensor_element(ins.a, regs.data(), regs.size(), R); ti != kNoRef) {
          IRRef ref = ir_.emit(IROp::TREF, IRType::None, read(ins.a, R), ti);
          ir_.emit(IROp::TSTORE, IRType::None, ref, read(ins.b, R));
          return Status::Continue;
        }
      }
      return abort(AbortReason::NYIBytecode, "SETINDEXN on a non-tensor or a value needing conversion");
    }

    default: break;
  }

  for (const ArithBytecode& a : kArithBytecode) {
    if (a.op != ins.op) continue;
    IRRef lhs = read(ins.b, R);
    const Value& vc = a.konst ? K[ins.c] : R[ins.c];
    IRRef rhs = a.konst ? constant(vc) : read(ins.c, R);
    if (a.konst && (ins.flags & kFlagConstLeft)) return arith(a.bin, ins.a, rhs, lhs, vc, R[ins.b]);
    return arith(a.bin, ins.a, lhs, rhs, R[ins.b], vc);
  }
  for (const CompareBytecode& c : kCompareBytecode) {
    if (c.op != ins.op) continue;
    const Value& va = R[c.branch ? ins.a : ins.b];
    const Value& vb = c.konst ? K[ins.b] : R[c.branch ? ins.b : ins.c];
    IRRef a = read(c.branch ? ins.a : ins.b, R);
    IRRef b = c.konst ? constant(vb) : read(c.branch ? ins.b : ins.c, R);
    IRRef out;
    compare(c.cmp, a, b, out);
    if (out == kNoRef) {
      if (!c.branch) {
        call_helper(CallTarget{CallTarget::Kind::Compare, static_cast<uint8_t>(c.cmp), nullptr,
                               std::string("compare") + cmpop_symbol(c.cmp)},
                    {a, b}, ins.a);
        return Status::Continue;
      }
      return abort(AbortReason::NYIBytecode, "compare-and-branch on mixed types");
    }
    if (!c.branch) {
      write(ins.a, out);
      return Status::Continue;
    }
    Value observed = tessera::compare(c.cmp, va, vb);
    if (!observed.is_bool()) return abort(AbortReason::NonBoolCond);
    guard(observed.as_bool(), out);
    return Status::Continue;
  }
  return abort(AbortReason::NYIBytecode, op_info(ins.op).name);
}

void TraceRecorder::for_step(const Instr& ins, const Value* R, bool more) {
  IRRef left = read(ins.a + 1, R);
  guard(more, ir_.emit(IROp::GT, IRType::Bool, left, ir_.kint(0)));
  if (!more) return;
  IRRef v = ir_.emit(IROp::ADD, IRType::Int, read(ins.a, R), read(ins.a + 2, R));
  write(ins.a + 1, ir_.emit(IROp::SUB, IRType::Int, left, ir_.kint(1)));
  write(ins.a, v);
  write(ins.a + 3, v);
}

TraceRecorder::Status TraceRecorder::iter_step(uint32_t pc, const Instr& ins, const Value* R, bool& more) {
  // ITERLOOP: the next index while it is below the length snapshot; the
  // element load is bounds-guarded against the list's current length.
  IRRef idx = ir_.emit(IROp::ADD, IRType::Int, read(ins.a + 2, R), ir_.kint(1));
  IRRef n = read(ins.a + 1, R);
  more = R[ins.a + 2].as_int() + 1 < R[ins.a + 1].as_int();
  guard(more, ir_.emit(IROp::LT, IRType::Bool, idx, n));
  if (!more) return Status::Continue;
  const auto& items = R[ins.a].as_list()->items;
  const size_t i = static_cast<size_t>(R[ins.a + 2].as_int() + 1);
  if (i >= items.size()) return abort(AbortReason::ErrorRaised, "list shrank");
  IRRef list = read(ins.a, R);
  IRRef len = ir_.emit(IROp::LLEN, IRType::Int, list);
  guard(true, ir_.emit(IROp::ULT, IRType::Bool, idx, len));
  IRRef elem = ir_.emit(IROp::LLOAD, type_of_value(items[i]), list, idx, snapshot(pc));
  write(ins.a + 2, idx);
  write(ins.a + 3, elem);
  return Status::Continue;
}

IRRef TraceRecorder::tensor_element(uint32_t obj, const uint32_t* idx, size_t n, const Value* R) {
  const TensorObj& t = *R[obj].as_tensor();
  if (!raw_dtype(t.dtype) || n != t.rank()) return kNoRef;
  for (size_t k = 0; k < n; ++k) {
    const Value& i = R[idx[k]];
    if (!i.is_int() || i.as_int() < 0 || i.as_int() >= t.shape[k]) return kNoRef;
  }
  IRRef tr = read(obj, R);
  IRRef dt = ir_.emit(IROp::TDTYPE, IRType::Int, tr);
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, dt, ir_.kint(static_cast<int64_t>(t.dtype))));
  // The rank before the dimensions: a TDIM past the rank is not the tensor's.
  IRRef rank = ir_.emit(IROp::TRANK, IRType::Int, tr);
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, rank, ir_.kint(static_cast<int64_t>(n))));
  // Row-major flat index, each index checked against its dimension (one
  // unsigned compare also rejects negative indices).
  IRRef flat = kNoRef;
  for (size_t k = 0; k < n; ++k) {
    IRRef i = read(idx[k], R);
    IRRef dim = ir_.emit(IROp::TDIM, IRType::Int, tr, static_cast<uint32_t>(k));
    guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, dim));
    flat = flat == kNoRef ? i : ir_.emit(IROp::ADD, IRType::Int, ir_.emit(IROp::MUL, IRType::Int, flat, dim), i);
  }
  if (flat == kNoRef) return kNoRef;  // rank 0: no element access by index
  return ir_.emit(IROp::TIDX, IRType::Int, flat, static_cast<uint32_t>(t.dtype));
}

bool TraceRecorder::visit_loop(uint32_t pc) {
  for (uint32_t p : visited_loops_)
    if (p == pc) return false;
  visited_loops_.push_back(pc);
  return true;
}

TraceRecorder::Status TraceRecorder::link_to(uint32_t target, uint32_t resume_pc) {
  linked_ = true;
  linear_ = true;
  link_target_ = target;
  // The final exit writes every changed slot back, then the runtime enters
  // the target trace, which loads what it needs from the registers. Should
  // the runtime not link, the interpreter resumes where the target starts.
  uint16_t snap = snapshot(resume_pc);
  ir_.emit(IROp::EXIT, IRType::None, 0, 0, snap);
  link_snap_ = snap;
  return close_trace();
}

void TraceRecorder::switch_base_frame(FunctionProto* proto) {
  frames_.assign(1, Frame{proto, 0, 0, 0});
  std::fill(slots_.begin(), slots_.end(), kNoRef);
  std::fill(sloads_.begin(), sloads_.end(), kNoRef);
  std::fill(modified_.begin(), modified_.end(), false);
  std::fill(dirty_.begin(), dirty_.end(), false);
  visited_loops_.clear();
  ++epoch_;
}

TraceRecorder::Status TraceRecorder::push_frame(FunctionProto* callee, uint32_t a) {
  // The caller's frame must be complete in memory when the callee returns to
  // it: store every register the trace holds only as an SSA value. Except
  // the CALL register itself when it holds the callee: nothing reads it
  // once the frame is pushed (the return overwrites it with the result;
  // tracebacks name frames by their function), so it stays dirty and
  // reaches memory only through FPUSH's snapshot, whose exit redoes the
  // CALL, which reads it.
  const IRRef callee_ref = constant(Value::function(callee));
  for (uint32_t abs = 0; abs < slots_.size(); ++abs) {
    if (abs == a && frames_.size() == 1 && slots_[abs] == callee_ref) continue;
    if (dirty_[abs] && slots_[abs] != kNoRef) {
      ir_.emit(IROp::SSTORE, IRType::None, abs, slots_[abs]);
      dirty_[abs] = false;
    }
  }
  ir_.emit(IROp::FPUSH, IRType::None, callee_ref, a, snapshot(cur_pc_));
  switch_base_frame(callee);
  return link_to(callee == root_ && func_ ? kLinkSelf : static_cast<uint32_t>(callee->entry_trace), 0);
}

void TraceRecorder::pop_frame(FunctionProto* caller, uint32_t pc, size_t caller_base) {
  // The return address is a guard: the same RET returns to many callers.
  ir_.emit(IROp::RETGUARD, IRType::None, constant(Value::function(caller)), pc, pop_snap_);
  ir_.emit(IROp::FPOP, IRType::None, pop_value_);
  const size_t ret_index = base_index_ - 1;  // the caller's CALL register
  switch_base_frame(caller);
  base_index_ = caller_base;
  // FPOP stored the result into the caller's register: current, not dirty.
  uint32_t ret = static_cast<uint32_t>(ret_index - caller_base);
  ensure_slot(ret);
  slots_[ret] = pop_value_;
}

TraceRecorder::Status TraceRecorder::close_trace() {
  // Reorder into the trace's final shape: constants, entry SLOADs (run once,
  // exiting through snapshot 0), LOOP, the body, and one PHI per loop-carried
  // slot.
  const auto& old = ir_.instructions();
  TraceIR out;
  // Constants keep their pool values: re-create them through the builder.
  std::vector<IRRef> remap = copy_constants(ir_, out);
  auto renumber = [&](IRRef a) { return remap[a]; };
  auto copy = [&](IRRef r) { remap[r] = emit_renumbered(out, old[r], renumber); };
  for (IRRef r = 0; r < old.size(); ++r) {
    const IRIns& in = old[r];
    if (in.op == IROp::SLOAD && in.op2 == 0) {
      IRIns s = in;
      s.snap = 0;
      remap[r] = out.emit(s.op, s.type, s.op1, s.op2, s.snap);
    }
  }
  if (!linear_) out.emit(IROp::LOOP, IRType::None);
  auto moved = [&](IRRef r) { return ir_is_const(old[r].op) || (old[r].op == IROp::SLOAD && old[r].op2 == 0); };
  for (IRRef r = 0; r < old.size(); ++r)
    if (!moved(r)) copy(r);
  const IRRef body_end = static_cast<IRRef>(out.size());
  // Scalars carried from one iteration to the next by a PHI live in SSA
  // values only: exits write them back (the snapshots of the loop body get
  // an entry for each one not yet changed in the iteration, whose value is
  // then the PHI's). Other scalars the iteration wrote (temporaries, values
  // written before they are read) are written back at the end of each
  // iteration, so that the next one starts with them current. (A side trace
  // ends in its EXIT, whose snapshot writes everything back.)
  std::vector<bool> carried(slots_.size(), false);
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs)
    carried[abs] = sloads_[abs] != kNoRef && modified_[abs] && dirty_[abs] && slots_[abs] != kNoRef &&
                   slots_[abs] != sloads_[abs] && !is_object(ir_[slots_[abs]].type);
  // A register needs the write-back only if a named local lives in it when
  // an iteration starts (declared before the loop, still in scope). The
  // others are dead at the back-edge: the compiler's temporaries, which each
  // statement writes before it reads them, and locals declared inside the
  // body, which each iteration declares (writes) again before any use and
  // which are out of scope once the loop is left.
  auto temporary = [&](uint32_t abs) {
    for (const FunctionProto::LocalInfo& l : root_->locals)
      if (l.reg == abs && l.start_pc <= body_begin_ && l.end_pc >= body_begin_) return false;
    return true;
  };
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs)
    if (dirty_[abs] && slots_[abs] != kNoRef && !carried[abs] && !temporary(abs))
      out.emit(IROp::SSTORE, IRType::None, abs, remap[slots_[abs]]);
  for (uint32_t abs = 0; !linear_ && abs < slots_.size(); ++abs) {
    if (sloads_[abs] == kNoRef || !modified_[abs]) continue;
    IRRef end = slots_[abs];
    if (end == kNoRef) {
      // Changed by a helper whose result was never read back: not carried.
      return abort(AbortReason::TypeUnstable, fmt::format("slot {}", abs));
    }
    if (ir_[end].type != ir_[sloads_[abs]].type)
      return abort(AbortReason::TypeUnstable, fmt::format("slot {}", abs));
    if (end != sloads_[abs]) out.emit(IROp::PHI, ir_[end].type, remap[sloads_[abs]], remap[end]);
  }
  for (size_t k = 0; k < ir_.snapshots().size(); ++k) {
    Snapshot s = ir_.snapshots()[k];
    if (!linear_ && k > 0) {
      for (uint32_t abs = 0; abs < slots_.size(); ++abs) {
        if (!carried[abs] || (k < snap_modified_.size() && abs < snap_modified_[k].size() && snap_modified_[k][abs]))
          continue;
        auto at = std::lower_bound(s.entries.begin(), s.entries.end(), abs,
                                   [](const SnapshotEntry& e, uint32_t slot) { return e.slot < slot; });
        if (at == s.entries.end() || at->slot != abs) s.entries.insert(at, SnapshotEntry{abs, sloads_[abs]});
      }
    }
    renumber_snapshot_entries(s, renumber);
    // Registers the interpreter does not read before writing them when it
    // resumes here keep whatever they hold: the exit does not write them
    // (register_liveness.h). Snapshots with inlined frames keep everything.
    if (s.frames.empty()) {
      const FunctionProto& fn = s.base_proto ? *s.base_proto : *root_;
      std::erase_if(s.entries, [&](const SnapshotEntry& e) { return !register_live_at(fn, s.pc, e.slot); });
    }
    // ir= names the first instruction the snapshot is valid for: the first
    // one recorded after it that stays in place (constants and entry SLOADs
    // moved to the front; clamp_snapshot_starts below pulls the snapshot up
    // to an entry SLOAD that exits through it), or the end of the body.
    IRRef at = s.ir_ref;
    while (at < old.size() && moved(at)) ++at;
    s.ir_ref = at < old.size() ? remap[at] : body_end;
    out.snapshots().push_back(std::move(s));
  }
  // The entry SLOADs moved to the preamble exit through snapshot 0, which
  // may have been taken at a later instruction: it is valid from them on.
  clamp_snapshot_starts(out);
  out.calls() = ir_.calls();
  out.assumed_globals() = ir_.assumed_globals();
  out.set_function(root_);
  out.set_loop_trip_hint(trip_hint_);
  ir_ = std::move(out);
  return Status::Done;
}

TraceIR TraceRecorder::take_trace() { return std::move(ir_); }

}  // namespace tessera::jit
