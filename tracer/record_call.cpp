// TraceRecorder, calls and returns: how a trace follows execution into a
// called function and back, and how it calls the runtime's helpers.
//
// Design. A call of a user function is inlined: the recorder pushes a Frame
// whose registers follow the caller's in the same register stack (slots
// stay absolute), guarded on the callee's identity unless it is a constant
// (a global assumed constant, see GETGLOBAL), and the callee's RET writes
// the result into the caller's call register and forgets the callee's
// slots. Where inlining cannot follow (a recursive function, a function
// with loops), the trace pushes a real interpreter frame (FPUSH) and links
// to the callee's function trace; a return from the base frame of a side or
// function trace pops it (RETGUARD and FPOP at the caller's next
// instruction), and recording goes on in the caller. Built-ins, keyword
// calls and operations without IR of their own become CALLs of runtime
// helpers, which write their result into the destination register; the
// recorder reloads it (typed) before the next instruction.
#include "tracer/recorder.h"
#include "vm/builtins/builtin.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

TraceRecorder::Status TraceRecorder::record_call(uint32_t pc, const Instr& ins, const Value* R) {
  const bool at_root = frames_.size() == 1;
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
    // Recursion from inside inlined frames (a recursive-descent parser's
    // expr -> term -> factor -> expr, a search called from a loop): the
    // inlined frames become real ones first, then the same push.
    if (!at_root && has_trace && (recursive || f->jit_recursive)) {
      f->jit_recursive = true;
      make_inlined_frames_real();
      return push_frame(f, ins.a);
    }
    if (recursive) {
      f->entry_hotcount = 1;  // its next call records the function trace the next try links to
      return abort(AbortReason::Recursion, f->name);
    }
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
    // type(x) of a value whose type the trace knows (guarded where it was
    // loaded): the name is a constant, and `type(v) == "int"` folds away.
    const std::string_view name = bd->host ? std::string_view() : std::string_view(bd->name);
    if (name == "type" && args.size() == 1 && type_of(args[0]) != IRType::None) {
      write(ins.a, constant(type_name_str(*values[0])));
      return Status::Continue;
    }
    // len(l) of a list or a string is its length: an instruction (which the
    // optimizer knows: CSE, LICM, allocation sinking), not a helper call.
    if (name == "len" && args.size() == 1 && (type_of(args[0]) == IRType::List || type_of(args[0]) == IRType::Str)) {
      write(ins.a, ir_.emit(type_of(args[0]) == IRType::List ? IROp::LLEN : IROp::SLEN, IRType::Int, args[0]));
      return Status::Continue;
    }
    // min(a, b) and max(a, b) of two ints.
    if ((name == "min" || name == "max") && args.size() == 2 && type_of(args[0]) == IRType::Int &&
        type_of(args[1]) == IRType::Int) {
      write(ins.a, ir_.emit(name == "min" ? IROp::IMIN : IROp::IMAX, IRType::Int, args[0], args[1]));
      return Status::Continue;
    }
    // push(l, v) of a list: a direct call that appends, not the generic
    // built-in call (argument buffers, dispatch, an arity check).
    if (name == "push" && args.size() == 2 && type_of(args[0]) == IRType::List && type_of(args[1]) != IRType::None) {
      ir_.emit(IROp::LPUSH, IRType::None, args[0], args[1], snapshot(cur_pc_));
      write(ins.a, ir_.knil());
      return Status::Continue;
    }
    // int(c) of a digit character (a tokenizer's `n * 10 + int(s[i])`).
    if (name == "int" && args.size() == 1 && char_to_int(ins.a, args[0], *values[0])) return Status::Continue;
    // assert(c) or assert(c, message) of a bool: a guard. When it fails the
    // interpreter redoes the call, and raises with its message.
    if (name == "assert" && (args.size() == 1 || args.size() == 2) && type_of(args[0]) == IRType::Bool) {
      guard(true, args[0]);
      write(ins.a, ir_.knil());
      return Status::Continue;
    }
    call_helper(CallTarget{call::Builtin{bd}, bd->name}, args, ins.a, values);
    return Status::Continue;
  }
  return abort(AbortReason::CallNotFunction);
}

TraceRecorder::Status TraceRecorder::record_call_kw(const Instr& ins, const Value* R, const Value* K) {
  // Built-ins with keyword arguments (zeros(..., dtype=i64)) run as a
  // helper call; a user function raises in the interpreter.
  const Value& callee = R[ins.a];
  if (!callee.is_builtin()) return abort(AbortReason::ErrorRaised, "keyword arguments in a call of a non-built-in");
  IRRef cref = read(ins.a, R);
  if (ir_[cref].op != IROp::KOBJ) guard(true, ir_.emit(IROp::EQ, IRType::Bool, cref, constant(callee)));
  const ListObj* names = K[ins.c].as_list();
  std::vector<IRRef> args;
  std::vector<const Value*> values;  // the layouts fusion types its regions with (weight= among them)
  for (size_t i = 0; i < ins.b + names->items.size(); ++i) {
    args.push_back(read(ins.a + 1 + static_cast<uint32_t>(i), R));
    values.push_back(&R[ins.a + 1 + i]);
  }
  const BuiltinDef* bd = callee.as_builtin();
  if (names->items.size() > 255) return abort(AbortReason::KeywordCall);
  call::BuiltinKw kw{bd, static_cast<uint8_t>(names->items.size()), names};
  for (const Value& n : names->items) kw.kw.emplace_back(n.is_str() ? n.as_str()->view() : std::string_view{});
  call_helper(CallTarget{std::move(kw), bd->name}, args, ins.a, values);
  return Status::Continue;
}

TraceRecorder::Status TraceRecorder::record_return(uint32_t pc, const Instr& ins, const Value* R) {
  const bool at_root = frames_.size() == 1;
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
    target.seen.resize(i + 1);  // up to the last tensor seen, as the text form spells it
    target.seen[i] = VirtualTensor{t.dtype, t.shape};
  }
  uint32_t abs = abs_slot(dst);
  ensure_slot(abs);
  target.dest_slot = static_cast<int32_t>(abs);
  // The snapshot is taken before the call: if the helper raises, the
  // interpreter re-executes the instruction and reports the error itself.
  uint16_t snap = snapshot(cur_pc_);
  target.graph = shapes_.type_call(ir_, target, args, values, snap);
  pending_graph_ = target.graph;
  IRRef chain = arg_chain(args);
  ir_.calls().push_back(std::move(target));
  ir_.emit(IROp::CALL, IRType::None, chain, static_cast<uint32_t>(ir_.calls().size() - 1), snap);
  // The helper wrote the register itself: it is current, not dirty.
  slots_[abs] = kNoRef;
  modified_[abs] = true;
  dirty_[abs] = false;
  pending_reload_ = abs;
}

void TraceRecorder::call_effect(CallTarget target, const std::vector<IRRef>& args) {
  const uint16_t snap = snapshot(cur_pc_);
  const IRRef chain = arg_chain(args);
  ir_.calls().push_back(std::move(target));
  ir_.emit(IROp::CALL, IRType::None, chain, static_cast<uint32_t>(ir_.calls().size() - 1), snap);
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
  store_dirty_slots(frames_.size() == 1 && a < slots_.size() && slots_[a] == callee_ref ? a : kAllSlots);
  ir_.emit(IROp::FPUSH, IRType::None, callee_ref, a, snapshot(cur_pc_));
  switch_base_frame(callee);
  return link_to(callee == root_ && func_ ? kLinkSelf : static_cast<uint32_t>(callee->entry_trace), 0);
}

void TraceRecorder::store_dirty_slots(uint32_t keep) {
  for (uint32_t abs = 0; abs < slots_.size(); ++abs) {
    if (abs != keep && dirty_[abs] && slots_[abs] != kNoRef) {
      ir_.emit(IROp::SSTORE, IRType::None, abs, slots_[abs]);
      dirty_[abs] = false;
    }
  }
}

void TraceRecorder::make_inlined_frames_real() {
  store_dirty_slots(kAllSlots);
  while (frames_.size() > 1) {
    // The snapshot resumes inside the frames (nothing is pushed yet when
    // FPUSH's room check fails); its outermost frame names the CALL.
    const Frame real = frames_[1];
    ir_.emit(IROp::FPUSH, IRType::None, constant(Value::function(real.proto)), real.ret_reg,
             snapshot(cur_pc_));
    std::vector<Frame> rest(frames_.begin() + 2, frames_.end());
    switch_base_frame(real.proto);
    for (Frame& fr : rest) {
      fr.base -= real.base;
      frames_.push_back(fr);
    }
    base_index_ += real.base;
  }
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

}  // namespace tessera::jit
