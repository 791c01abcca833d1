#include "codegen/host/trace_helpers.h"

#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "codegen/host/trace_abi.h"

namespace tessera::jit {

namespace {

using T = HelperType;
using A = HelperArg;
constexpr A kIn = A::Internal;

template <typename F>
const void* addr(F* f) {
  return reinterpret_cast<const void*>(f);
}

const TraceHelper kHelpers[] = {
    // The helper-call opcodes' (ir.def HELPER).
    {"tessera_jit_int_pow", addr(&tessera_jit_int_pow), IRHelper::int_pow, T::I64, HelperResult::Value, true, 2,
     {T::I64, T::I64}, {A::Op1, A::Op2}},
    {"tessera_jit_float_floordiv", addr(&tessera_jit_float_floordiv), IRHelper::float_floordiv, T::F64,
     HelperResult::Value, true, 2, {T::F64, T::F64}, {A::Op1, A::Op2}},
    {"tessera_jit_float_mod", addr(&tessera_jit_float_mod), IRHelper::float_mod, T::F64, HelperResult::Value, true, 2,
     {T::F64, T::F64}, {A::Op1, A::Op2}},
    {"tessera_jit_float_pow", addr(&tessera_jit_float_pow), IRHelper::float_pow, T::F64, HelperResult::Value, true, 2,
     {T::F64, T::F64}, {A::Op1, A::Op2}},
    {"tessera_jit_list_push", addr(&tessera_jit_list_push), IRHelper::list_push, T::I8, HelperResult::Ok, false, 3,
     {T::Ptr, T::I64, T::I8}, {A::Op1, A::Op2, A::Op2Tag}},
    {"tessera_jit_str_lt", addr(&tessera_jit_str_lt), IRHelper::str_lt, T::I8, HelperResult::Value, false, 2,
     {T::Ptr, T::Ptr}, {A::Op1, A::Op2}},
    {"tessera_jit_str_le", addr(&tessera_jit_str_le), IRHelper::str_le, T::I8, HelperResult::Value, false, 2,
     {T::Ptr, T::Ptr}, {A::Op1, A::Op2}},
    {"tessera_jit_call", addr(&tessera_jit_call), IRHelper::call, T::I8, HelperResult::Ok, false, 7,
     {T::Ptr, T::Ptr, T::Ptr, T::Ptr, T::I32, T::I8, T::Ptr},
     {A::Ctx, A::Target, A::ArgTags, A::ArgPayloads, A::ArgCount, A::ExpectTag, A::ResultOut}},
    // FMATH's, where a tier has no instruction for the function (float_math.def's order).
#define FLOATMATH(Name, fn, t1, t2, impl)                                                                 \
  {"tessera_jit_" #fn, addr(&tessera_jit_##fn), IRHelper::float_math, T::F64, HelperResult::Value, true, 1, \
   {T::F64}, {A::Op1}},
#include "tracer/float_math.def"
#undef FLOATMATH
    // What the tiers call on their own (stores, exits, frame pops, watched globals, device copies).
    {"tessera_jit_free", addr(&tessera_jit_free), IRHelper::none, T::Void, HelperResult::None, false, 1, {T::I64},
     {kIn}},
    {"tessera_jit_tensor_fetch", addr(&tessera_jit_tensor_fetch), IRHelper::none, T::Void, HelperResult::None, false,
     1, {T::Ptr}, {kIn}},
    {"tessera_jit_global_stored", addr(&tessera_jit_global_stored), IRHelper::none, T::Void, HelperResult::None,
     false, 2, {T::Ptr, T::I32}, {kIn, kIn}},
    {"tessera_jit_clear_registers", addr(&tessera_jit_clear_registers), IRHelper::none, T::Void, HelperResult::None,
     false, 2, {T::Ptr, T::I32}, {kIn, kIn}},
    {"tessera_jit_release_slots", addr(&tessera_jit_release_slots), IRHelper::none, T::Void, HelperResult::None,
     false, 3, {T::Ptr, T::Ptr, T::I32}, {kIn, kIn, kIn}},
    {"tessera_jit_restore_exit", addr(&tessera_jit_restore_exit), IRHelper::none, T::Void, HelperResult::None, false,
     3, {T::Ptr, T::Ptr, T::Ptr}, {kIn, kIn, kIn}},
};

// FMATH's rows start here: the first row of column float_math.
const TraceHelper* float_math_rows() {
  static const TraceHelper* first = [] {
    for (const TraceHelper& h : kHelpers)
      if (h.column == IRHelper::float_math) return &h;
    return static_cast<const TraceHelper*>(nullptr);
  }();
  return first;
}

}  // namespace

const TraceHelper* trace_helpers_begin() { return std::begin(kHelpers); }
const TraceHelper* trace_helpers_end() { return std::end(kHelpers); }

const TraceHelper* trace_helper_of(const IRIns& in) {
  const IRHelper column = ir_op_info(in.op).helper;
  if (column == IRHelper::none) return nullptr;
  if (column == IRHelper::float_math) {
    if (in.op2 >= static_cast<uint32_t>(FloatMath::NumFns))
      throw std::runtime_error("unknown FloatMath id " + std::to_string(in.op2));
    return float_math_rows() + in.op2;
  }
  for (const TraceHelper& h : kHelpers)
    if (h.column == column) return &h;
  throw std::logic_error(std::string("no helper row for opcode ") + ir_op_info(in.op).name);
}

const TraceHelper& trace_helper(const char* name) {
  for (const TraceHelper& h : kHelpers)
    if (std::strcmp(h.name, name) == 0) return h;
  throw std::logic_error(std::string("no trace helper ") + name);
}

}  // namespace tessera::jit
