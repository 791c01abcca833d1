// The C ABI that compiled code calls: the runtime helpers declared in
// trace_abi.h.
//
// They are the only way generated code calls back into the VM. Generated
// code counts references inline; freeing an object, calling a built-in or
// an operation without IR of its own, and building the objects of an exit
// go through here, so that the backends never duplicate Value's ownership
// rules.
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <span>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"
#include "vm/builtins/builtin.h"
#include "vm/tensor/tensor.h"
#include "vm/builtins/value_ops.h"
#include "vm/core/error.h"
#include "vm/core/number_ops.h"
#include "vm/core/operators.h"
#include "vm/core/value.h"
#include "vm/interp/indexing.h"
#include "vm/interp/vm.h"  // VM is the built-ins' BuiltinContext
#include "vm/tensor/scalar_math.h"
#include "vm/tensor/tensor.h"
#include "vm/tensor/vector_math.h"

namespace tessera::jit {

namespace {

// Builds an owned Value from a raw (tag, payload) pair. Objects gain a
// reference: the payload is borrowed from some register that owns it.
Value make_value(uint8_t tag, uint64_t payload) {
  switch (static_cast<Tag>(tag)) {
    case Tag::Undef: return Value::undef();
    case Tag::Nil: return Value::nil();
    case Tag::Bool: return Value::boolean(payload != 0);
    case Tag::Int: return Value::integer(static_cast<int64_t>(payload));
    case Tag::Float: {
      double d;
      std::memcpy(&d, &payload, sizeof d);
      return Value::number(d);
    }
    case Tag::DTypeV: return Value::dtype(static_cast<DType>(payload));
    case Tag::Func: return Value::function(reinterpret_cast<FunctionProto*>(payload));
    case Tag::Builtin: return Value::builtin(reinterpret_cast<const BuiltinDef*>(payload));
    case Tag::Str:
    case Tag::List:
    case Tag::Tensor: {
      Obj* o = reinterpret_cast<Obj*>(payload);
      ++o->refcount;
      return Value::adopt(o);
    }
  }
  return Value::nil();
}

// A built-in's call from a trace. A host function that raises leaves its
// error for the interpreter to take over when it redoes the call after the
// exit (CallReplay), instead of calling the host twice.
Value call_builtin(JitContext* ctx, const BuiltinDef* bd, const CallArgs& ca) {
  if (!bd->host) return bd->fn(*ctx->vm, ca);
  try {
    return bd->fn(*ctx->vm, ca);
  } catch (...) {
    ctx->vm->replay = CallReplay{bd, Value(), std::current_exception()};
    throw;
  }
}

// The host function a call target calls, or null.
const BuiltinDef* host_callee(const CallTarget& t) {
  const BuiltinDef* bd = t.is<call::Builtin>()     ? t.as<call::Builtin>().def
                         : t.is<call::BuiltinKw>() ? t.as<call::BuiltinKw>().def
                                                   : nullptr;
  return bd && bd->host ? bd : nullptr;
}

Value call_target(JitContext* ctx, const CallTarget& t, std::span<const Value> args) {
  switch (t.kind()) {
    case CallTarget::Kind::Builtin: {
      const BuiltinDef* bd = t.as<call::Builtin>().def;
      CallArgs ca;
      ca.callee = bd;
      ca.pos = args;
      // The interpreter checks arity before calling a built-in; do the same
      // so that a bad call fails (and exits) instead of reading past `args`.
      check_arity(bd->name, ca, bd->min_args, bd->max_args, bd->accepts_kwargs);
      return call_builtin(ctx, bd, ca);
    }
    case CallTarget::Kind::Arith:
      if (args.size() != 2) throw RuntimeError("jit: arith call needs 2 arguments");
      return arith(t.as<call::Arith>().op, args[0], args[1]);
    case CallTarget::Kind::Compare:
      if (args.size() != 2) throw RuntimeError("jit: compare call needs 2 arguments");
      return compare(t.as<call::Compare>().op, args[0], args[1]);
    case CallTarget::Kind::IndexGet:
      if (args.empty()) throw RuntimeError("jit: index_get call needs an object");
      return index_get(args[0], args.data() + 1, args.size() - 1);
    case CallTarget::Kind::BuiltinKw: {
      const call::BuiltinKw& kw = t.as<call::BuiltinKw>();
      const BuiltinDef* bd = kw.def;
      const auto* names = static_cast<const ListObj*>(kw.names);
      if (kw.nkw > args.size() || names == nullptr || names->items.size() != kw.nkw)
        throw RuntimeError("jit: malformed keyword call");
      CallArgs ca;
      ca.callee = bd;
      ca.pos = args.first(args.size() - kw.nkw);
      ca.kw_values = args.last(kw.nkw);
      ca.kw_names = &names->items;
      check_arity(bd->name, ca, bd->min_args, bd->max_args, bd->accepts_kwargs);
      return call_builtin(ctx, bd, ca);
    }
    case CallTarget::Kind::NewList: return make_list(std::vector<Value>(args.begin(), args.end()));
    case CallTarget::Kind::Negate:
      if (args.size() != 1) throw RuntimeError("jit: negate call needs 1 argument");
      return negate(args[0]);
    case CallTarget::Kind::ListExtend: {
      if (args.empty() || !args[0].is_list()) throw RuntimeError("jit: listext call needs a list");
      auto& items = args[0].as_list()->items;
      items.insert(items.end(), args.begin() + 1, args.end());
      return Value::nil();
    }
    case CallTarget::Kind::Kernel:
      if (!t.as<call::Kernel>().region) throw RuntimeError("jit: kernel call without a region");
      if (!ctx->fused) throw RuntimeError("jit: a fused call without a kernel runtime");
      return ctx->fused->run_fused_call(t.as<call::Kernel>().region, args);
    case CallTarget::Kind::IndexSet:
      if (args.size() < 2) throw RuntimeError("jit: index_set call needs an object and a value");
      index_set(args[0], args.data() + 1, args.size() - 2, args.back());
      return Value::nil();
  }
  throw RuntimeError("jit: unknown call target kind");
}

// The string operations that string loops are made of (`s[i]`, `a + b`, a
// comparison of two strings), done on the raw arguments without building a
// Value of each: the generic path costs more than the operation. Each gives
// what the generic path gives; anything else (other types, an index out of
// range) answers false and takes the generic path.
bool string_fast_path(const CallTarget& t, const uint8_t* tags, const uint64_t* payloads, uint32_t n, Value& out) {
  constexpr auto kStr = static_cast<uint8_t>(Tag::Str);
  if (n != 2 || tags[0] != kStr) return false;
  const std::string_view a = reinterpret_cast<const StrObj*>(payloads[0])->view();
  switch (t.kind()) {
    case CallTarget::Kind::IndexGet: {
      if (tags[1] != static_cast<uint8_t>(Tag::Int)) return false;
      const std::optional<size_t> at = sequence_position(static_cast<int64_t>(payloads[1]), a.size());
      if (!at) return false;
      out = make_str(a.substr(*at, 1));
      return true;
    }
    case CallTarget::Kind::Arith:
      if (tags[1] != kStr || t.as<call::Arith>().op != BinOp::Add) return false;
      out = concat_str(a, reinterpret_cast<const StrObj*>(payloads[1])->view());
      return true;
    case CallTarget::Kind::Compare:
      if (tags[1] != kStr) return false;
      out = Value::boolean(str_compare(t.as<call::Compare>().op, a, reinterpret_cast<const StrObj*>(payloads[1])->view()));
      return true;
    default: return false;
  }
}

// The generic path: the arguments as Values, then the target's operation.
Value call_generic(JitContext* ctx, const CallTarget& target, const uint8_t* tags, const uint64_t* payloads, uint32_t n) {
  // Up to 8 arguments on the stack: a helper call in a hot loop allocates
  // nothing here.
  constexpr uint32_t kInlineArgs = 8;
  Value inline_args[kInlineArgs];
  std::vector<Value> more;
  Value* args = inline_args;
  if (n > kInlineArgs) {
    more.resize(n);
    args = more.data();
  }
  for (uint32_t i = 0; i < n; ++i) args[i] = make_value(tags[i], payloads[i]);
  return call_target(ctx, target, std::span<const Value>(args, n));
}

}  // namespace

}  // namespace tessera::jit

using tessera::Tag;
using tessera::Value;

extern "C" {

void tessera_jit_free(uint64_t obj) { tessera::free_object(reinterpret_cast<tessera::Obj*>(obj)); }

// A void helper cannot make its trace exit, and the trace cannot go on
// without the elements (a loop trace might not exit for a long time): the
// run ends here with the runtime error's status, 1, as a fault in a fused
// call ends it (after its crash capture, which the message names). Not
// exit(): other threads (the compilers) still run, and static destructors
// would race them; what the program printed is flushed first.
void tessera_jit_tensor_fetch(const tessera::TensorObj* tensor) {
  try {
    tensor->data();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "tessera-vm: runtime error in a compiled trace, which needs a tensor's elements that the device cannot "
                 "copy back: %s\ntessera-vm: the run stops here (exit status 1; --stats, --dump and --metrics are not "
                 "written)\n",
                 e.what());
    std::fflush(stderr);
    std::_Exit(1);
  }
}

bool tessera_jit_call(tessera::jit::JitContext* ctx, const tessera::jit::CallTarget* target,
                      const uint8_t* tags, const uint64_t* payloads, uint32_t n,
                      uint8_t expect_tag, uint64_t* result) {
  // No exception may unwind into generated code (it has no unwind tables
  // worth trusting): every failure becomes `false`, the trace exits, and the
  // interpreter redoes the operation and reports the error itself; a
  // FatalRuntimeError it raises at the exit instead.
  try {
    Value r;
    if (!tessera::jit::string_fast_path(*target, tags, payloads, n, r))
      r = tessera::jit::call_generic(ctx, *target, tags, payloads, n);
    // A result the trace cannot use: the interpreter redoes the call, and
    // takes a host function's result over instead of calling it again.
    auto give_up = [&] {
      if (const auto* host = tessera::jit::host_callee(*target))
        ctx->vm->replay = tessera::CallReplay{host, std::move(r), nullptr};
      return false;
    };
    if (expect_tag != tessera::jit::kJitAnyTag && static_cast<uint8_t>(r.tag()) != expect_tag)
      return give_up();
    if (target->dest_slot >= 0) {
      *result = r.raw_bits();
      ctx->base[target->dest_slot] = std::move(r);
    } else {
      // An object result needs an owner, else the trace would hold a
      // dangling pointer as soon as `r` dies.
      if (r.is_obj() && expect_tag != tessera::jit::kJitAnyTag) return give_up();
      *result = r.raw_bits();
    }
    return true;
  } catch (const tessera::FatalRuntimeError& e) {
    ctx->vm->deferred_error = e.what();  // raised where the trace exits, not redone
    return false;
  } catch (...) {
    return false;
  }
}

bool tessera_jit_list_push(tessera::ListObj* l, uint64_t payload, uint8_t tag) {
  try {
    l->items.push_back(tessera::jit::make_value(tag, payload));
    return true;
  } catch (...) {
    return false;  // push_back's strong guarantee: the list is as it was
  }
}

bool tessera_jit_str_lt(const tessera::StrObj* a, const tessera::StrObj* b) {
  return tessera::str_compare(tessera::CmpOp::Lt, a->view(), b->view());
}

bool tessera_jit_str_le(const tessera::StrObj* a, const tessera::StrObj* b) {
  return tessera::str_compare(tessera::CmpOp::Le, a->view(), b->view());
}

void tessera_jit_global_stored(tessera::jit::JitContext* ctx, uint32_t index) {
  if (ctx->global_stored) ctx->global_stored(ctx->jit, index);
}

void tessera_jit_clear_registers(Value* regs, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (regs[i].is_obj()) regs[i] = Value();
}

void tessera_jit_release_slots(Value* base, const uint32_t* slots, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (base[slots[i]].is_obj()) base[slots[i]] = Value();
}

void tessera_jit_restore_exit(const tessera::jit::ExitPlan* plan, Value* base, const uint64_t* vals) noexcept {
  tessera::jit::execute_exit_plan(*plan, vals, base);
}

int64_t tessera_jit_int_pow(int64_t a, int64_t b) { return tessera::int_pow(a, b); }
double tessera_jit_float_floordiv(double a, double b) { return tessera::float_floordiv(a, b); }
double tessera_jit_float_mod(double a, double b) { return tessera::float_mod(a, b); }
double tessera_jit_float_pow(double a, double b) { return tessera::float_pow(a, b); }
#define FLOATMATH(Name, fn, t1, t2, impl) \
  double tessera_jit_##fn(double x) { return impl; }
#include "tracer/float_math.def"
#undef FLOATMATH

}  // extern "C"
