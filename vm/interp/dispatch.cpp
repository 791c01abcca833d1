// Interpreter::execute: the bytecode dispatch loop (computed goto, one label
// per opcode of vm/bytecode/opcodes.def), with the generic paths it falls back
// to. Setup, globals, host calls and errors are in interpreter.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "vm/builtins/builtin.h"
#include "vm/builtins/value_ops.h"
#include "vm/core/error.h"
#include "vm/core/number_ops.h"
#include "vm/interp/indexing.h"
#include "vm/interp/interpreter.h"
#include "vm/interp/vm.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace tessera {

namespace {

[[noreturn]] void expected_bool(const Value& v) {
  throw RuntimeError(fmt::format("expected bool, got {}", type_name(v)));
}

// Generic comparison for a branch condition: the result must be a bool
// (a tensor comparison gives a tensor, which is not a condition).
bool branch_compare(CmpOp op, const Value& a, const Value& b) {
  Value r = compare(op, a, b);
  if (!r.is_bool()) expected_bool(r);
  return r.as_bool();
}

// The error of reading a global that is not defined, with a hint where a
// name is commonly misused.
std::string undefined_global_message(const std::string& name) {
  if (name == "range")
    return "name 'range' is not defined: range(...) is only valid as the iterable of a for loop "
           "(for i in range(n) { ... })";
  return fmt::format("name '{}' is not defined", name);
}

// Trip count of range(start, stop, step), step != 0, without overflow.
uint64_t range_count(int64_t start, int64_t stop, int64_t step) {
  __int128 span = step > 0 ? (__int128)stop - start : (__int128)start - stop;
  if (span <= 0) return 0;
  __int128 st = step > 0 ? (__int128)step : -(__int128)step;
  return static_cast<uint64_t>((span + st - 1) / st);
}

}  // namespace

void Interpreter::execute(size_t stop_depth) {
  static void* const kDispatch[kNumOps] = {
#define OPCODE(name, ...) &&L_##name,
#include "vm/bytecode/opcodes.def"
#undef OPCODE
  };
  // While recording, every opcode first goes through L_RECORD (LuaJIT swaps
  // its dispatch table the same way).
  static void* const kRecordDispatch[kNumOps] = {
#define OPCODE(name, ...) &&L_RECORD,
#include "vm/bytecode/opcodes.def"
#undef OPCODE
  };
  void* const* disp = recording_ ? kRecordDispatch : kDispatch;

  CallFrame* frame = &frames_.back();
  FunctionProto* proto = frame->proto;
  const Instr* code = proto->code.data();
  const Value* K = proto->consts.data();
  Value* R = stack_.data() + frame->base;
  Value* G = globals_.data();
  const Instr* pc = frame->pc;
  Instr ins;

  // Saves pc into the frame so errors and callees see where we are.
#define SAVEPC() (frame->pc = pc)
#define DISPATCH()            \
  do {                        \
    ins = *pc++;              \
    goto* disp[(int)ins.op];  \
  } while (0)
#define RA R[ins.a]
#define RB R[ins.b]
#define RC R[ins.c]
#define KB K[ins.b]
#define KC K[ins.c]
  // Back-edge counter of the instruction at index IDX (the JIT's hot-loop
  // detector): one tick per back-edge, more after tensor work (hotwork_
  // elements made per extra tick). Without hooks the counter just wraps.
#define HOTCOUNT(IDX)                                              \
  do {                                                             \
    const uint32_t idx_ = (IDX);                                   \
    uint16_t ticks_ = 1;                                           \
    if (UNLIKELY(tensor_work != 0)) ticks_ = work_ticks();         \
    if (UNLIKELY(interpreter_samples.pending.load(std::memory_order_relaxed) != 0)) \
      take_interpreter_samples(*proto, idx_);                     \
    uint16_t& count_ = proto->hotcounts[idx_];                     \
    if (UNLIKELY(count_ <= ticks_) && hooks_) {                    \
      SAVEPC();                                                    \
      /* first: the hook may set a longer wait (a cool-down) */    \
      count_ = hooks_->hotloop_threshold();                        \
      if (!recording_ && hooks_->on_hot_loop(*proto, idx_)) {      \
        recording_ = true;                                         \
        disp = kRecordDispatch;                                    \
      }                                                            \
    } else {                                                       \
      count_ = static_cast<uint16_t>(count_ - ticks_);             \
    }                                                              \
  } while (0)
#define CUR_INDEX() static_cast<uint32_t>(pc - 1 - code)

  // Reloads the current frame's state after the frame stack changed.
#define RELOAD_FRAME()                              \
  do {                                              \
    frame = &frames_.back();                        \
    proto = frame->proto;                           \
    code = proto->code.data();                      \
    K = proto->consts.data();                       \
    R = stack_.data() + frame->base;                \
    pc = frame->pc;                                 \
  } while (0)
#define ENTER_TRACE(IDX)                 \
  do {                                   \
    SAVEPC();                            \
    enter_trace(proto->trace_at(IDX));   \
    tensor_work = 0; /* the trace's */   \
    RELOAD_FRAME();                      \
    if (exit_.start_recording) {         \
      recording_ = true;                 \
      disp = kRecordDispatch;            \
    }                                    \
  } while (0)

  // Errors are C++ exceptions that unwind to run_main, which reads each
  // frame's saved pc; every handler that can raise saves pc first.
  DISPATCH();

L_RECORD: {
  // The recorder sees the instruction before it runs, then it runs as usual.
  SAVEPC();
  if (!hooks_->record(proto, CUR_INDEX(), stack_.data(), frame->base, G)) {
    recording_ = false;
    disp = kDispatch;
  }
  goto* kDispatch[(int)ins.op];
}

L_MOVE:
  RA = RB;
  DISPATCH();
L_LOADK:
  RA = K[ins.bx];
  DISPATCH();
L_LOADI:
  RA.set_int(ins.sbx);
  DISPATCH();
L_LOADNIL:
  RA = Value();
  DISPATCH();
L_LOADTRUE:
  RA.set_bool(true);
  DISPATCH();
L_LOADFALSE:
  RA.set_bool(false);
  DISPATCH();
L_GETGLOBAL: {
  const Value& g = G[ins.bx];
  if (UNLIKELY(g.is_undef())) {
    SAVEPC();
    throw RuntimeError(undefined_global_message(module_->global_names[ins.bx]));
  }
  RA = g;
  DISPATCH();
}
L_SETGLOBAL:
L_DEFGLOBAL:
  G[ins.bx] = RA;
  if (UNLIKELY(global_watch_[ins.bx]) && hooks_) {
    SAVEPC();
    hooks_->on_global_store(ins.bx);  // invalidates the traces that assumed it
  }
  DISPATCH();

  // Arithmetic: int/int and float/float inline, mixed numbers as doubles,
  // everything else (strings, lists, tensors, errors) through arith().
#define ARITH(NAME, OP, RHS, INT_CASE, FLT_CASE, SLOW)        \
  L_##NAME : {                                                   \
    const Value& b_ = RB;                                        \
    const Value& c_ = RHS;                                       \
    if (LIKELY(b_.is_int() && c_.is_int())) {                    \
      int64_t x = b_.as_int(), y = c_.as_int();                  \
      INT_CASE;                                                  \
    } else if (LIKELY(b_.is_float() && c_.is_float())) {         \
      double x = b_.as_float(), y = c_.as_float();               \
      FLT_CASE;                                                  \
    } else if (b_.is_number() && c_.is_number()) {               \
      double x = b_.to_double(), y = c_.to_double();             \
      FLT_CASE;                                                  \
    } else {                                                     \
      SAVEPC();                                                  \
      SLOW;                                                      \
    }                                                            \
    DISPATCH();                                                  \
  }
#define INT_DIVZERO_CHECK()                        \
  if (UNLIKELY(y == 0)) {                          \
    SAVEPC();                                      \
    throw RuntimeError("division by zero");        \
  }
// The slow paths: arith() orders operands as written in the source (the
// kFlagConstLeft flag of ADDK/MULK puts the constant first).
#define ARITH_PAIR(NAME, OP, INT_CASE, FLT_CASE)                                  \
  ARITH(NAME, OP, RC, INT_CASE, FLT_CASE, RA = arith(BinOp::OP, b_, c_))     \
  ARITH(NAME##K, OP, KC, INT_CASE, FLT_CASE,                                      \
        RA = (ins.flags & kFlagConstLeft) ? arith(BinOp::OP, c_, b_)         \
                                          : arith(BinOp::OP, b_, c_))

  ARITH_PAIR(ADD, Add, RA.set_int(int_add(x, y)), RA.set_float(x + y))
  ARITH_PAIR(SUB, Sub, RA.set_int(int_sub(x, y)), RA.set_float(x - y))
  ARITH_PAIR(MUL, Mul, RA.set_int(int_mul(x, y)), RA.set_float(x * y))
  ARITH_PAIR(DIV, Div, RA.set_float(double(x) / double(y)), RA.set_float(x / y))
  ARITH_PAIR(IDIV, IDiv, INT_DIVZERO_CHECK() RA.set_int(int_floordiv(x, y)),
             RA.set_float(float_floordiv(x, y)))
  ARITH_PAIR(MOD, Mod, INT_DIVZERO_CHECK() RA.set_int(int_mod(x, y)),
             RA.set_float(float_mod(x, y)))
  ARITH_PAIR(POW, Pow,
             if (y >= 0) RA.set_int(int_pow(x, y)); else RA.set_float(std::pow(double(x), double(y))),
             RA.set_float(std::pow(x, y)))
L_MATMUL:
  SAVEPC();
  RA = arith(BinOp::MatMul, RB, RC);
  DISPATCH();

L_NEG: {
  const Value& b = RB;
  if (b.is_int()) RA.set_int(int_neg(b.as_int()));
  else if (b.is_float()) RA.set_float(-b.as_float());
  else {
    SAVEPC();
    RA = negate(b);
  }
  DISPATCH();
}
L_NOT: {
  const Value& b = RB;
  if (UNLIKELY(!b.is_bool())) {
    SAVEPC();
    expected_bool(b);
  }
  RA.set_bool(!b.as_bool());
  DISPATCH();
}

  // Comparisons producing values.
#define COMPARE_VALUE(NAME, OP, CMP)                         \
  L_##NAME : {                                               \
    const Value& b_ = RB;                                    \
    const Value& c_ = RC;                                    \
    if (b_.is_int() && c_.is_int()) {                        \
      RA.set_bool(b_.as_int() CMP c_.as_int());              \
    } else if (b_.is_float() && c_.is_float()) {             \
      RA.set_bool(b_.as_float() CMP c_.as_float());          \
    } else {                                                 \
      SAVEPC();                                              \
      RA = compare(CmpOp::OP, b_, c_);                  \
    }                                                        \
    DISPATCH();                                              \
  }
  COMPARE_VALUE(EQ, Eq, ==)
  COMPARE_VALUE(NE, Ne, !=)
  COMPARE_VALUE(LT, Lt, <)
  COMPARE_VALUE(LE, Le, <=)
  COMPARE_VALUE(GT, Gt, >)
  COMPARE_VALUE(GE, Ge, >=)

  // Compare-and-branch: the following JMP is taken when the test is false.
#define BRANCH_ON(TEST)                  \
  if (TEST) {                            \
    ++pc;                                \
  } else {                               \
    pc += 1 + pc->sbx;                   \
  }                                      \
  DISPATCH();
#define COMPARE_BRANCH(NAME, OP, CMP, RHS)                                       \
  L_##NAME : {                                                                   \
    const Value& a_ = RA;                                                        \
    const Value& b_ = RHS;                                                       \
    bool t_;                                                                     \
    if (LIKELY(a_.is_int() && b_.is_int())) t_ = a_.as_int() CMP b_.as_int();    \
    else if (a_.is_float() && b_.is_float()) t_ = a_.as_float() CMP b_.as_float(); \
    else {                                                                       \
      SAVEPC();                                                                  \
      t_ = branch_compare(CmpOp::OP, a_, b_);                               \
    }                                                                            \
    BRANCH_ON(t_)                                                                \
  }
  COMPARE_BRANCH(JEQ, Eq, ==, RB)
  COMPARE_BRANCH(JNE, Ne, !=, RB)
  COMPARE_BRANCH(JLT, Lt, <, RB)
  COMPARE_BRANCH(JLE, Le, <=, RB)
  COMPARE_BRANCH(JEQK, Eq, ==, KB)
  COMPARE_BRANCH(JNEK, Ne, !=, KB)
  COMPARE_BRANCH(JLTK, Lt, <, KB)
  COMPARE_BRANCH(JLEK, Le, <=, KB)
  COMPARE_BRANCH(JGTK, Gt, >, KB)
  COMPARE_BRANCH(JGEK, Ge, >=, KB)

L_JMP:
  pc += ins.sbx;
  DISPATCH();
L_JMPF: {
  const Value& a = RA;
  if (UNLIKELY(!a.is_bool())) {
    SAVEPC();
    expected_bool(a);
  }
  if (!a.as_bool()) pc += ins.sbx;
  DISPATCH();
}
L_JMPT: {
  const Value& a = RA;
  if (UNLIKELY(!a.is_bool())) {
    SAVEPC();
    expected_bool(a);
  }
  if (a.as_bool()) pc += ins.sbx;
  DISPATCH();
}
L_LOOP:
  HOTCOUNT(CUR_INDEX());
  DISPATCH();
L_CHKBOOL:
  if (UNLIKELY(!RA.is_bool())) {
    SAVEPC();
    expected_bool(RA);
  }
  DISPATCH();

  // for v in range(start, stop, step): R[A] current, R[A+1] iterations left
  // after the current one, R[A+2] step, R[A+3] the visible variable.
L_FORPREP: {
  Value* r = &RA;
  for (int i = 0; i < 3; ++i) {
    if (UNLIKELY(!r[i].is_int())) {
      SAVEPC();
      throw RuntimeError(fmt::format("range() expects int arguments, got {}", type_name(r[i])));
    }
  }
  int64_t step = r[2].as_int();
  if (UNLIKELY(step == 0)) {
    SAVEPC();
    throw RuntimeError("range() step must not be zero");
  }
  uint64_t n = range_count(r[0].as_int(), r[1].as_int(), step);
  if (n == 0) {
    pc += ins.sbx;
  } else {
    r[1].set_int(static_cast<int64_t>(n - 1));
    r[3].set_int(r[0].as_int());
  }
  DISPATCH();
}
L_FORLOOP:
L_JFORLOOP: {
  // JFORLOOP is FORLOOP patched by the JIT: it enters the loop's trace.
  Value* r = &RA;
  int64_t left = r[1].as_int();
  if (left > 0) {
    r[1].set_int(left - 1);
    int64_t v = int_add(r[0].as_int(), r[2].as_int());
    r[0].set_int(v);
    r[3].set_int(v);
    if (ins.op == Op::JFORLOOP) {
      ENTER_TRACE(CUR_INDEX());
    } else {
      HOTCOUNT(CUR_INDEX());
      pc += ins.sbx;
    }
  }
  DISPATCH();
}
  // for x in list: R[A] list, R[A+1] length snapshot, R[A+2] index, R[A+3] x.
L_ITERPREP: {
  Value* r = &RA;
  if (UNLIKELY(!r[0].is_list())) {
    SAVEPC();
    throw RuntimeError(fmt::format("cannot iterate over {}", type_name(r[0])));
  }
  const auto& items = r[0].as_list()->items;
  if (items.empty()) {
    pc += ins.sbx;
  } else {
    r[1].set_int(static_cast<int64_t>(items.size()));
    r[2].set_int(0);
    r[3] = items[0];
  }
  DISPATCH();
}
L_ITERLOOP:
L_JITERLOOP: {
  Value* r = &RA;
  int64_t i = r[2].as_int() + 1;
  if (i < r[1].as_int()) {
    const auto& items = r[0].as_list()->items;
    if (UNLIKELY(static_cast<size_t>(i) >= items.size())) {
      SAVEPC();
      throw RuntimeError(fmt::format(
          "index out of range: the list shrank to {} items while the for loop iterated over it ({} when the loop began)",
          items.size(), r[1].as_int()));
    }
    r[2].set_int(i);
    r[3] = items[static_cast<size_t>(i)];
    if (ins.op == Op::JITERLOOP) {
      ENTER_TRACE(CUR_INDEX());
    } else {
      HOTCOUNT(CUR_INDEX());
      pc += ins.sbx;
    }
  }
  DISPATCH();
}
L_JLOOP:
  ENTER_TRACE(CUR_INDEX());
  DISPATCH();

L_CALL:
L_CALLKW: {
  Value& callee = RA;
  const int nargs = ins.b;
  if (LIKELY(callee.is_func()) && ins.op == Op::CALL) {
    FunctionProto* fn = callee.as_func();
    if (UNLIKELY(fn->nparams != nargs)) {
      SAVEPC();
      raise_call_error(callee, proto, pc - 1, nargs);
    }
    if (UNLIKELY(frames_.size() >= max_depth_)) {
      SAVEPC();
      throw RuntimeError("stack overflow");
    }
    SAVEPC();
    const uint32_t new_base = frame->base + ins.a + 1;
    if (UNLIKELY(new_base + static_cast<size_t>(fn->nregs) + 1 > stack_.size())) {
      ensure_stack(new_base + static_cast<size_t>(fn->nregs) + 1);
    }
    if (UNLIKELY(interpreter_samples.pending.load(std::memory_order_relaxed) != 0))
      take_interpreter_samples(*proto, static_cast<uint32_t>(pc - 1 - code));
    if (UNLIKELY(--fn->entry_hotcount == 0) && hooks_) {
      fn->entry_hotcount = hooks_->hotcall_threshold();  // first: the hook may set a longer wait
      if (!recording_ && hooks_->on_hot_function(*fn)) {
        recording_ = true;
        disp = kRecordDispatch;
      }
    }
    frames_.push_back(CallFrame{fn, fn->code.data(), new_base});
    frame = &frames_.back();
    proto = fn;
    code = fn->code.data();
    K = fn->consts.data();
    R = stack_.data() + new_base;
    pc = code;
    // A function trace runs the call (not while recording: the recorder
    // follows the call into the callee's bytecode).
    if (UNLIKELY(fn->entry_trace >= 0) && !recording_ && hooks_) {
      enter_trace(static_cast<uint32_t>(fn->entry_trace));
      RELOAD_FRAME();
      if (exit_.start_recording) {
        recording_ = true;
        disp = kRecordDispatch;
      }
    }
    DISPATCH();
  }
  SAVEPC();
  if (callee.is_builtin()) {
    const BuiltinDef* bd = callee.as_builtin();
    CallArgs args;
    args.pos = std::span<const Value>(&RA + 1, static_cast<size_t>(nargs));
    if (ins.op == Op::CALLKW) {
      const auto& names = K[ins.c].as_list()->items;
      if (!bd->accepts_kwargs)
        throw RuntimeError(fmt::format("{}() does not take keyword arguments", bd->name));
      args.kw_names = &names;
      args.kw_values = std::span<const Value>(&RA + 1 + nargs, names.size());
    }
    if (UNLIKELY(nargs < bd->min_args || (bd->max_args >= 0 && nargs > bd->max_args)))
      throw RuntimeError(arity_message(bd->name, bd->min_args, bd->max_args, nargs));
    args.callee = bd;
    // A host function a trace called just before it exited is not called
    // again: its outcome is taken over (CallReplay).
    Value result = UNLIKELY(vm_.replay.def != nullptr) ? vm_.replay.take_or_call(bd, vm_, args) : bd->fn(vm_, args);
    R[ins.a] = std::move(result);
    DISPATCH();
  }
  if (callee.is_func())  // CALLKW on a user function
    throw RuntimeError(fmt::format("{}() does not take keyword arguments", callee.as_func()->name));
  raise_call_error(callee, proto, pc - 1, nargs);
}

L_RET:
L_RETNIL: {
  Value result = take_return_value(ins, R, proto->nregs);
  const uint32_t ret_slot = frame->base - 1;  // the caller's CALL register
  // <main> (base 0) has no CALL register; a host's call (base 1) has one.
  const bool has_call_register = frame->base != 0;
  frames_.pop_back();
  if (frames_.size() <= stop_depth) {
    if (has_call_register) stack_[ret_slot] = std::move(result);
    return;
  }
  frame = &frames_.back();
  proto = frame->proto;
  code = proto->code.data();
  K = proto->consts.data();
  R = stack_.data() + frame->base;
  pc = frame->pc;
  stack_[ret_slot] = std::move(result);
  DISPATCH();
}

L_NEWLIST: {
  std::vector<Value> items(&RB, &RB + ins.c);
  RA = make_list(std::move(items));
  DISPATCH();
}
L_LISTEXT: {
  auto& items = RA.as_list()->items;
  items.insert(items.end(), &RB, &RB + ins.c);
  DISPATCH();
}
L_GETINDEX: {
  const Value& obj = RB;
  const Value& idx = RC;
  if (LIKELY(obj.is_list() && idx.is_int())) {
    auto& items = obj.as_list()->items;
    uint64_t i = static_cast<uint64_t>(idx.as_int());
    if (LIKELY(i < items.size())) {
      RA = items[i];
      DISPATCH();
    }
  }
  SAVEPC();
  RA = index_get(obj, &idx, 1);
  DISPATCH();
}
L_SETINDEX: {
  const Value& obj = RA;
  const Value& idx = RB;
  if (LIKELY(obj.is_list() && idx.is_int())) {
    auto& items = obj.as_list()->items;
    uint64_t i = static_cast<uint64_t>(idx.as_int());
    if (LIKELY(i < items.size())) {
      items[i] = RC;
      DISPATCH();
    }
  }
  SAVEPC();
  index_set(obj, &idx, 1, RC);
  DISPATCH();
}
L_GETINDEXN:
  SAVEPC();
  RA = index_get(RB, &RB + 1, ins.c);
  DISPATCH();
L_SETINDEXN:
  SAVEPC();
  index_set(RA, &RA + 1, ins.c, RB);
  DISPATCH();

#undef SAVEPC
#undef DISPATCH
#undef RA
#undef RB
#undef RC
#undef KB
#undef KC
#undef HOTCOUNT
#undef CUR_INDEX
#undef RELOAD_FRAME
#undef ENTER_TRACE
#undef ARITH
#undef ARITH_PAIR
#undef INT_DIVZERO_CHECK
#undef COMPARE_VALUE
#undef BRANCH_ON
#undef COMPARE_BRANCH
}


}  // namespace tessera
