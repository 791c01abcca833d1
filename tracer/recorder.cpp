// TraceRecorder: the per-instruction loop (record, step), slot reads and
// writes, guards, arithmetic and comparisons, and loops (how the trace ends
// is record_close.cpp's).
//
// Design. record() keeps the recorder's frames in step with the
// interpreter's, types the result a helper call left in its register, and
// hands the instruction to step(), which dispatches on the opcode: the
// simple families are recorded here, calls and returns in record_call.cpp,
// indexing in record_index.cpp. A slot is read once from the interpreter
// (an SLOAD with a type guard, hoisted to the trace's entry) and then lives
// in SSA; every guard takes a snapshot (snapshot_builder.h). The trace ends
// at the loop's back-edge (close_loop, record_close.cpp) or, for linear
// traces, in an EXIT linked to another trace.
#include "tracer/recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "tracer/constant_description.h"
#include "tracer/ir_operands.h"
#include "tracer/recorder_internal.h"
#include "vm/builtins/builtin.h"
#include "vm/builtins/value_ops.h"
#include "vm/core/error.h"

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

const char* abort_reason_name(AbortReason r) {
  static constexpr const char* kNames[] = {
#define ABORT_REASON(name, msg) #name,
#include "tracer/abort_reasons.def"
#undef ABORT_REASON
  };
  static_assert(std::size(kNames) == kNumAbortReasons);
  return kNames[static_cast<int>(r)];
}

namespace {

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

// The operator of each arithmetic and comparison opcode. Which operands are
// registers and which constants, and which comparisons branch, the opcode
// table says (operand roles and flow, vm/bytecode/opcodes.def).
struct ArithBytecode {
  Op op;
  BinOp bin;
};
constexpr ArithBytecode kArithBytecode[] = {
    {Op::ADD, BinOp::Add},   {Op::SUB, BinOp::Sub},   {Op::MUL, BinOp::Mul},
    {Op::DIV, BinOp::Div},   {Op::IDIV, BinOp::IDiv}, {Op::MOD, BinOp::Mod},
    {Op::POW, BinOp::Pow},   {Op::MATMUL, BinOp::MatMul},
    {Op::ADDK, BinOp::Add},  {Op::SUBK, BinOp::Sub},  {Op::MULK, BinOp::Mul},
    {Op::DIVK, BinOp::Div},  {Op::IDIVK, BinOp::IDiv}, {Op::MODK, BinOp::Mod},
    {Op::POWK, BinOp::Pow},
};

struct CompareBytecode {
  Op op;
  CmpOp cmp;
};
constexpr CompareBytecode kCompareBytecode[] = {
    {Op::EQ, CmpOp::Eq},   {Op::NE, CmpOp::Ne},   {Op::LT, CmpOp::Lt},   {Op::LE, CmpOp::Le},
    {Op::GT, CmpOp::Gt},   {Op::GE, CmpOp::Ge},   {Op::JEQ, CmpOp::Eq},  {Op::JNE, CmpOp::Ne},
    {Op::JLT, CmpOp::Lt},  {Op::JLE, CmpOp::Le},  {Op::JEQK, CmpOp::Eq}, {Op::JNEK, CmpOp::Ne},
    {Op::JLTK, CmpOp::Lt}, {Op::JLEK, CmpOp::Le}, {Op::JGTK, CmpOp::Gt}, {Op::JGEK, CmpOp::Ge},
};

// The operand fields of the two inputs of an arithmetic or comparison
// instruction: its first two `src` or `konst` operands, in order.
std::pair<int, int> input_fields(Op op) {
  const OpInfo& info = op_info(op);
  int found[2] = {0, 0};
  int n = 0;
  for (int i = 0; i < kNumOperands && n < 2; ++i)
    if (info.roles[i] == OperandRole::src || info.roles[i] == OperandRole::konst) found[n++] = i;
  return {found[0], found[1]};
}

}  // namespace

TraceRecorder::TraceRecorder(FunctionProto* root, uint32_t loop_pc, RecorderLimits limits)
    : root_(root), loop_pc_(loop_pc), limits_(limits) {
  const Instr& hot = root->code[loop_pc];
  // (A peer's loop has a trace already: its back-edge is patched to enter it.)
  if (back_edge_op(hot.op) == Op::LOOP) {
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
  snaps_.start(ir_, start_pc_);
}

TraceRecorder::TraceRecorder(FunctionProto* root, uint32_t start_pc, RecorderLimits limits, SideTrace,
                             const std::vector<SnapshotFrame>& inlined)
    : root_(root), start_pc_(start_pc), limits_(limits), side_(true), linear_(true) {
  body_begin_ = 0;
  body_end_ = static_cast<uint32_t>(root->code.size());
  frames_.push_back(Frame{root, 0, 0, 0});
  for (const SnapshotFrame& f : inlined) {
    // The caller's CALL names the register that receives the result.
    const FunctionProto* caller = frames_.back().proto;
    frames_.push_back(Frame{f.proto, f.base, f.call_pc, static_cast<uint16_t>(caller->code[f.call_pc].a)});
    ensure_slot(f.base + static_cast<uint32_t>(f.proto->nregs));
  }
  // Its start is then a pc of the innermost function, not of `root`.
  started_inlined_ = !inlined.empty();
  start_proto_ = frames_.back().proto;
  snaps_.start(ir_, start_pc_, inlined);
}

TraceRecorder::TraceRecorder(FunctionProto* fn, RecorderLimits limits, FunctionEntry)
    : root_(fn), start_pc_(0), limits_(limits), func_(true), linear_(true) {
  body_begin_ = 0;
  body_end_ = static_cast<uint32_t>(fn->code.size());
  frames_.push_back(Frame{fn, 0, 0, 0});
  snaps_.start(ir_, 0);
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
    case Tag::Tensor:
      ir_.describe_const(v.as_obj(), describe_constant(v));
      return ir_.kobj(v.as_obj(), type_of_value(v));
    case Tag::Func:
      ir_.describe_const(v.as_func(), describe_constant(v));
      return ir_.kobj(v.as_func(), IRType::Func);
    case Tag::Builtin:
      ir_.describe_const(v.as_builtin(), describe_constant(v));
      return ir_.kobj(v.as_builtin(), IRType::Builtin);
    case Tag::DTypeV: return ir_.kdtype(v.as_dtype());
    case Tag::Undef: break;
  }
  return ir_.knil();
}

bool TraceRecorder::holds_constant(const Value& v, IRRef k) const {
  switch (ir_[k].op) {
    case IROp::KINT: return v.is_int() && ir_[k].type == IRType::Int && v.as_int() == ir_.const_int(k);
    case IROp::KBOOL: return v.is_bool() && v.as_bool() == (ir_[k].op1 != 0);
    case IROp::KOBJ: return v.is_str() && ir_[k].type == IRType::Str && v.as_obj() == ir_.const_ptr(k);
    default: return false;
  }
}

void TraceRecorder::set_parent_constants(const TraceIR& parent, const std::unordered_map<uint32_t, IRRef>& consts) {
  for (const auto& [slot, ref] : consts) parent_consts_[slot] = copy_constant(parent, ref, ir_);
}

void TraceRecorder::set_passed_slots(const std::vector<PassedSlot>& passed) {
  std::vector<SnapshotEntry>& entry = ir_.snapshots()[0].entries;
  for (const PassedSlot& p : passed) {
    ensure_slot(p.slot);
    const IRRef r = ir_.emit(IROp::SLOAD, p.type, p.slot, kSloadPassed + p.reg);
    slots_[p.slot] = r;
    modified_[p.slot] = true;
    dirty_[p.slot] = true;
    entry.push_back(SnapshotEntry{p.slot, r});
  }
  std::sort(entry.begin(), entry.end(), [](const SnapshotEntry& a, const SnapshotEntry& b) { return a.slot < b.slot; });
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
  if (auto known = parent_types_.find(abs); epoch_ == 0 && known != parent_types_.end() && known->second == t) {
    IRRef r = ir_.emit(IROp::SLOAD, t, abs, 2);
    slots_[abs] = r;
    sloads_[abs] = r;
    if (auto k = parent_consts_.find(abs); k != parent_consts_.end() && holds_constant(R[reg], k->second)) {
      guard(true, ir_.emit(IROp::EQ, IRType::Bool, r, k->second));
      slots_[abs] = k->second;
    }
    return slots_[abs];
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
  std::vector<SnapshotFrame> inlined;
  for (size_t i = 1; i < frames_.size(); ++i)
    inlined.push_back(
        SnapshotFrame{frames_[i].proto, frames_[i].base, frames_[i].call_pc, frames_[i].proto->name});
  return snaps_.take(ir_, pc, epoch_ > 0 ? frames_[0].proto : nullptr, std::move(inlined),
                     SlotState{slots_, dirty_, modified_}, epoch_);
}

void TraceRecorder::guard(bool expect_true, IRRef cond) {
  const IRIns& c = ir_[cond];
  if (c.op == IROp::KBOOL) return;  // decided at record time
  ir_.emit(expect_true ? IROp::GUARDT : IROp::GUARDF, IRType::None, cond, 0, snapshot(cur_pc_));
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
  CallTarget t{call::Arith{op}, std::string("arith") + binop_symbol(op)};
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
  // == and != of values whose types differ are false and true (values_equal),
  // unless both are numbers or one is a tensor (elementwise ==); both types
  // are guarded, so a tree walk's `node == nil` of a list folds. nil == nil.
  const bool equality = op == CmpOp::Eq || op == CmpOp::Ne;
  auto number = [](IRType t) { return t == IRType::Int || t == IRType::Float; };
  if (equality && ta != IRType::None && tb != IRType::None && ta != IRType::Tensor && tb != IRType::Tensor &&
      !(number(ta) && number(tb)) && (ta != tb || ta == IRType::Nil)) {
    out = ir_.kbool((ta == tb) == (op == CmpOp::Eq));
    return Status::Continue;
  }
  // Two string constants (`type(v) == "int"` once type() is folded).
  if (ta == IRType::Str && tb == IRType::Str && ir_[a].op == IROp::KOBJ && ir_[b].op == IROp::KOBJ) {
    const auto* x = static_cast<const StrObj*>(ir_.const_ptr(a));
    const auto* y = static_cast<const StrObj*>(ir_.const_ptr(b));
    out = ir_.kbool(str_compare(op, x->view(), y->view()));
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
    // (A side trace may start in a frame its parent inlined: the innermost.)
    if (fn != frames_.back().proto || pc != start_pc_ || frame_base < frames_.back().base)
      return abort(AbortReason::LeftLoop, "did not start at the loop");
    base_index_ = frame_base - frames_.back().base;
  }
  if (pending_pop_) {
    pending_pop_ = false;
    if (ir_.size() > limits_.maxrecord) return abort(AbortReason::TraceTooLong);
    pop_frame(fn, pc, frame_base);
  }
  if (linear_ && epoch_ > 0 && frames_.size() == 1 && !started_inlined_ && fn == root_ && pc == start_pc_) {
    // Back where the trace started, in another frame of the same function:
    // down-recursion loops (each return runs the same code one frame lower).
    // A side trace entered from itself has no parent that proved its entry
    // slots' types (the value it carries round may have another: an int
    // divided into a float): its parent-typed loads are guarded entry loads.
    // The same for passed values: entered from itself (by memory), it loads
    // them with a guard, and its snapshot 0 no longer writes them.
    for (IRRef r = 0; r < ir_.size(); ++r)
      if (sload_unguarded(ir_[r])) ir_[r].op2 = kSloadEntry, ir_[r].snap = 0;
    std::erase_if(ir_.snapshots()[0].entries, [&](const SnapshotEntry& e) {
      return ir_[e.ref].op == IROp::SLOAD && ir_[e.ref].op1 == e.slot;
    });
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
    if (pending_graph_) shapes_.set_result(ir_, r, *pending_graph_, v);
    pending_graph_.reset();
  }
  if (ir_.size() > limits_.maxrecord) return abort(AbortReason::TraceTooLong);
  // Keep the recorder's frame view in step with the interpreter.
  if (frames_.size() == 1 && fn == root_ && !in_loop_body(pc)) return abort(AbortReason::LeftLoop);
  cur_pc_ = pc;
  ir_.set_origin(fn, pc);
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
  if (peer_ && at_root && !linear_ && pc == loop_pc_ && back_edge_op(ins.op) != ins.op) {
    // A peer's own back-edge enters the loop's first trace: the peer closes
    // there as that trace closed at the unpatched instruction.
    Instr plain = ins;
    plain.op = back_edge_op(ins.op);
    return step(fn, pc, plain, R, G);
  }
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
      if ((t == IRType::Func || t == IRType::Builtin || t == IRType::DType) && !stored) {
        // Calls through this global (and dtypes passed from it: cast's, a
        // kernel's constant) are specialised to its current value, assumed
        // constant: storing into the global invalidates the trace.
        auto& assumed = ir_.assumed_globals();
        if (std::none_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == ins.bx; }))
          assumed.push_back({ins.bx, TraceIR::assumption_of(g)});
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
      if (std::any_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == ins.bx; })) {
        // Calls before this store were specialised to the global's old
        // value; the next recording loads it with a guard instead.
        stored_assumed_global_ = ins.bx;
        return abort(AbortReason::AssumedGlobalStored);
      }
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
      else call_helper(CallTarget{call::Negate{}, "neg"}, {b}, ins.a, {&R[ins.b]});  // tensors; errors
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
      if (!linear_ && at_root && pc == loop_pc_) return close_loop(pc + 1, R);
      // A trace may pass through another while loop's header (on its way to
      // the trace it links to); seeing it twice means it loops by itself.
      if (at_root && pc != loop_pc_ && visit_loop(pc)) return Status::Continue;
      return abort(AbortReason::InnerLoop);
    case Op::FORPREP: {
      // A trace may run into a loop whose back-edge has a trace (an outer
      // loop's root trace into its inner loop, a side trace back into a
      // loop). The step's direction is guarded, not its value (a sieve's
      // step is each prime in turn: a guard on the value made a side trace
      // per prime); the iterations left after the first are
      // (distance - 1) // |step|.
      if (!at_root) return abort(AbortReason::InnerLoop);
      if (!R[ins.a].is_int() || !R[ins.a + 1].is_int() || !R[ins.a + 2].is_int() || R[ins.a + 2].as_int() == 0)
        return abort(AbortReason::ErrorRaised, "range() of non-ints or with step 0");
      const int64_t k = R[ins.a + 2].as_int();
      IRRef start = read(ins.a, R), stop = read(ins.a + 1, R), step = read(ins.a + 2, R);
      const bool up = k > 0;
      const bool konst = ir_[step].op == IROp::KINT;
      if (!konst) {
        guard(up, ir_.emit(IROp::GT, IRType::Bool, step, ir_.kint(0)));
        // -step below must not overflow.
        if (!up) guard(true, ir_.emit(IROp::GT, IRType::Bool, step, ir_.kint(std::numeric_limits<int64_t>::min())));
      }
      const bool runs = up ? R[ins.a].as_int() < R[ins.a + 1].as_int() : R[ins.a].as_int() > R[ins.a + 1].as_int();
      guard(runs, up ? ir_.emit(IROp::LT, IRType::Bool, start, stop) : ir_.emit(IROp::GT, IRType::Bool, start, stop));
      if (runs) {
        IRRef distance = up ? ir_.emit(IROp::SUB, IRType::Int, stop, start) : ir_.emit(IROp::SUB, IRType::Int, start, stop);
        IRRef left = ir_.emit(IROp::SUB, IRType::Int, distance, ir_.kint(1));
        // A distance past 2^63 wraps: the interpreter counts such a range.
        guard(true, ir_.emit(IROp::GE, IRType::Bool, left, ir_.kint(0)));
        if (!konst) {
          left = ir_.emit(IROp::IDIV, IRType::Int, left, up ? step : ir_.emit(IROp::NEG, IRType::Int, step));
        } else if (k == std::numeric_limits<int64_t>::min()) {
          left = ir_.kint(0);  // |k| > every distance left
        } else if (k != 1 && k != -1) {
          left = ir_.emit(IROp::IDIV, IRType::Int, left, ir_.kint(up ? k : -k));
        }
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
      return link_to(loop_trace_at(*fn, pc, R), static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx));
    }
    case Op::JLOOP:
      if (!at_root) return abort(AbortReason::InnerLoop);
      return link_to(loop_trace_at(*fn, pc, R), pc + 1);
    case Op::JITERLOOP: {
      if (!at_root) return abort(AbortReason::InnerLoop);
      bool more = false;
      if (Status st = iter_step(pc, ins, R, more); st != Status::Continue) return st;
      if (!more) return Status::Continue;  // the loop ends here; keep recording after it
      return link_to(loop_trace_at(*fn, pc, R), static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx));
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
      return close_loop(static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx), R);
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
      return close_loop(static_cast<uint32_t>(static_cast<int64_t>(pc) + 1 + ins.sbx), R);
    }

    case Op::CALL: return record_call(pc, ins, R);
    case Op::CALLKW: return record_call_kw(ins, R, K);
    case Op::NEWLIST: {
      std::vector<IRRef> args;
      for (int i = 0; i < ins.c; ++i) args.push_back(read(ins.b + i, R));
      call_helper(CallTarget{call::NewList{}, "newlist"}, args, ins.a);
      return Status::Continue;
    }
    case Op::LISTEXT: {
      // A long list literal's later chunk, appended to the list NEWLIST made.
      std::vector<IRRef> args{read(ins.a, R)};
      for (int i = 0; i < ins.c; ++i) args.push_back(read(ins.b + i, R));
      call_effect(CallTarget{call::ListExtend{}, "listext"}, args);
      return Status::Continue;
    }
    case Op::RET:
    case Op::RETNIL: return record_return(pc, ins, R);

    case Op::GETINDEX:
    case Op::SETINDEX:
    case Op::GETINDEXN:
    case Op::SETINDEXN: return record_index(pc, ins, R);

    default: break;
  }

  // Arithmetic and comparisons: two inputs (registers or a constant, by
  // their roles); the forms that produce a value write it to R[A].
  const auto [lhs_field, rhs_field] = input_fields(ins.op);
  const bool konst = op_info(ins.op).roles[rhs_field] == OperandRole::konst;
  const auto lhs_reg = static_cast<uint32_t>(operand_value(ins, lhs_field));
  const auto rhs_index = static_cast<uint32_t>(operand_value(ins, rhs_field));
  for (const ArithBytecode& a : kArithBytecode) {
    if (a.op != ins.op) continue;
    IRRef lhs = read(lhs_reg, R);
    const Value& vc = konst ? K[rhs_index] : R[rhs_index];
    IRRef rhs = konst ? constant(vc) : read(rhs_index, R);
    if (konst && (ins.flags & kFlagConstLeft)) return arith(a.bin, ins.a, rhs, lhs, vc, R[lhs_reg]);
    return arith(a.bin, ins.a, lhs, rhs, R[lhs_reg], vc);
  }
  for (const CompareBytecode& c : kCompareBytecode) {
    if (c.op != ins.op) continue;
    const bool branch = op_info(ins.op).flow == OpFlow::cmp;
    const Value& va = R[lhs_reg];
    const Value& vb = konst ? K[rhs_index] : R[rhs_index];
    IRRef a = read(lhs_reg, R);
    IRRef b = konst ? constant(vb) : read(rhs_index, R);
    // An int against a float compares as two floats while the int is
    // exactly a double (|i| <= 2^53, guarded), as the interpreter's exact
    // comparison does: no helper call for `i < x` in a counting loop.
    auto exact_int_as_float = [&](IRRef& r, const Value& v) {
      constexpr int64_t kExact = int64_t{1} << 53;
      if (type_of(r) != IRType::Int || ir_[r].op == IROp::KINT || !v.is_int() || v.as_int() > kExact ||
          v.as_int() < -kExact)
        return;
      guard(true, ir_.emit(IROp::LE, IRType::Bool, r, ir_.kint(kExact)));
      guard(true, ir_.emit(IROp::GE, IRType::Bool, r, ir_.kint(-kExact)));
      r = ir_.emit(IROp::CONV, IRType::Float, r);
    };
    if (type_of(a) == IRType::Int && type_of(b) == IRType::Float) exact_int_as_float(a, va);
    if (type_of(a) == IRType::Float && type_of(b) == IRType::Int) exact_int_as_float(b, vb);
    IRRef out;
    if (!compare_strings(c.cmp, a, va, b, vb, out)) compare(c.cmp, a, b, out);
    if (out == kNoRef) {
      if (!branch) {
        call_helper(CallTarget{call::Compare{c.cmp}, std::string("compare") + cmpop_symbol(c.cmp)},
                    {a, b}, ins.a, {&va, &vb});
        return Status::Continue;
      }
      // Mixed types (int against float, strings, values of different
      // types under == and !=): the generic comparison in a helper whose
      // bool result the guard tests; its snapshot redoes the compare in the
      // interpreter if the helper fails.
      Value observed = tessera::compare(c.cmp, va, vb);
      if (!observed.is_bool()) return abort(AbortReason::NonBoolCond);
      CallTarget t{call::Compare{c.cmp}, std::string("compare") + cmpop_symbol(c.cmp)};
      const uint16_t snap = snapshot(cur_pc_);
      const IRRef chain = arg_chain({a, b});
      ir_.calls().push_back(std::move(t));
      const IRRef result = ir_.emit(IROp::CALL, IRType::Bool, chain, static_cast<uint32_t>(ir_.calls().size() - 1), snap);
      guard(observed.as_bool(), result);
      return Status::Continue;
    }
    if (!branch) {
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

}  // namespace tessera::jit
