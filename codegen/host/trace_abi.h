// The calling convention of compiled traces, shared by both host backends
// (asmjit, T1; LLVM ORC, T2) and by the runtime, which enters traces and
// handles their exits (runtime/trace_jit).
//
// A compiled trace is entered with the interpreter's state in memory and
// leaves through exactly one snapshot:
//
//   uint32_t code = fn(base, globals, exit_vals, ctx);
//
//   base       interpreter register 0 of the trace's base frame (slot s is
//              base[s]; inlined frames' slots follow);
//   globals    the module's global slots;
//   exit_vals  room for at least max(exit plan values) 64-bit words
//              (deopt/exit_plan.h);
//   ctx        what the runtime helpers need (the VM, base, globals).
//
// The return value names the snapshot the trace exited through. Each exit
// runs that snapshot's exit plan (deopt/exit_plan.h) in one of two forms,
// chosen when the trace is compiled (ExitLinking below):
//   unlinked  the trace writes the plan's values (ExitPlan::values: the
//             entries' values in entry order when the snapshot names no sunk
//             object) into exit_vals[i] as raw 64-bit payloads (int as int64,
//             float as its IEEE bit pattern, bool 0/1, nil 0, dtype as its
//             payload word, objects and functions as their address) and
//             returns the snapshot number; the caller runs the plan
//             (execute_exit_plan), which writes the interpreter registers
//             with reference counting. The tests use this form.
//   linked    the trace writes the registers itself and goes on into the
//             linked trace, or returns `code_base | snap` (the runtime's
//             form; T1's tier-up exit returns `code_base | kTierUpExit`).
// Object values are stored through to their slots as soon as they are
// assigned (SSTORE, CALL dest_slot), so that every object the trace holds
// is owned by some register.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "tracer/trace_ir.h"  // kPassedInts, kPassedFloats
#include "vm/core/value.h"
#include "vm/interp/jit_hooks.h"  // FrameRegion

namespace tessera {
class Value;
class VM;
}  // namespace tessera

namespace tessera::jit {

struct CallTarget;
struct ExitPlan;

// Runs a trace's fused calls (CallTarget kind Kernel): the VM's kernel
// runtime (runtime/kernels/kernel_runtime.h) implements it, a layer above.
class FusedCallRunner {
 public:
  virtual ~FusedCallRunner() = default;
  // The region's output for these inputs; throws what the interpreter's kernels throw.
  virtual Value run_fused_call(const std::shared_ptr<const Region>& region, std::span<const Value> inputs) = 0;
};

// Runtime context of one trace invocation: everything the helpers need that
// is not an argument of the IR instruction.
struct JitContext {
  JitContext() = default;
  // With this thread's one-byte strings looked up by the caller: the lookup
  // is a thread-local read, a __tls_get_addr call in a shared library, on
  // every trace entry otherwise (TraceJit caches it per thread).
  explicit JitContext(const Value* strings) : one_byte_strings(strings) {}

  VM* vm = nullptr;
  // The base frame's register 0 as of the last helper call that needs it
  // (tessera_jit_call writes its result register through it): traces that
  // push and pop frames move their base without updating this field.
  Value* base = nullptr;
  Value* globals = nullptr;  // the same pointer as the trace's `globals` argument
  // The interpreter's frames, which traces that follow recursion push and
  // pop in place (FPUSH, FPOP): a copy of its FrameRegion for the run, so
  // that the top frame is one load from ctx (FPUSH and FPOP are on the
  // critical path of every recursive call). Only `top` changes while traces
  // run; the runtime copies it back when the run ends.
  FrameRegion frames;
  // Called after the trace stored into a watched global (one some trace
  // assumed constant), so that the traces that assumed it are invalidated.
  void (*global_stored)(void* jit, uint32_t index) = nullptr;
  void* jit = nullptr;
  // This thread's shared one-byte strings (SCHAR indexes them by byte).
  const Value* one_byte_strings = tessera::one_byte_strings();
  // The VM's fused calls (null: a trace with one fails as a runtime error).
  FusedCallRunner* fused = nullptr;
};

// Values passed in registers (LuaJIT's side traces inherit their parent's
// registers; here both sides agree on a fixed set). A linked exit whose plan
// names passed values (ExitPlan::passed: up to kPassedInts ints and
// kPassedFloats floats of the snapshot's entries, deopt/exit_plan.h) and
// whose `passed_links` slot is set jumps there with those values in
// registers and does not write their interpreter registers: the side trace
// recorded from that exit takes them (SLOAD mode 3 + i, tracer/ir.def) and
// its own exits write them. Every NativeTrace has the same signature:
//
//   uint32_t native(base, globals, exit_vals, ctx,
//                   i64 x4, i64 x5, i64 int0, i64 x7, i64 x8, i64 x9,
//                   i64 int1, i64 int2, double float0, double float1)
//
// In preserve_none the ints land in rdx, r11 and rax and the floats in xmm0
// and xmm1: the T1 assembler's scratch registers, which its allocator never
// hands out, so that neither side needs a parallel move. The x arguments
// are unused (undefined). A trace that takes passed values has two entry
// points: CompiledTrace::native_passed takes them as above, and `native`
// (what everything else links to, and what the C wrapper calls) loads them
// from their registers in memory first.
// Passed value i (0..2 ints, 3..4 floats) is argument kPassedArg[i] of the
// native signature above.
constexpr uint32_t kPassedArg[kPassedValues] = {6, 10, 11, 12, 13};
constexpr uint32_t kNativeArgs = 14;

// How C++ enters a compiled trace (the C calling convention).
using TraceFn = uint32_t (*)(Value* base, Value* globals, uint64_t* exit_vals, JitContext* ctx);
// A trace's own code, which exits jump to: the same arguments in LLVM's
// preserve_none convention, so that going from trace to trace saves and
// restores no callee-saved registers (each trace would otherwise push and
// pop six of them on every hop). Only generated code calls it; C++ enters
// through the TraceFn wrapper compiled with it.
using NativeTrace = const void*;

// Linked exits (optional, chosen when the trace is compiled; see
// HostBackend::compile). Instead of filling exit_vals, an exit writes its
// snapshot's values straight into the registers (with reference counting;
// an exit that builds sunk objects through tessera_jit_restore_exit) and
// then, if links[snap] is set, jumps to that trace (a side trace, or the
// trace a side trace ends in) with the same arguments; otherwise it returns
// `code_base | snap`. The runtime fills `links` as side traces are compiled,
// so hot exits go from trace to trace without leaving native code.
struct ExitLinking {
  uint32_t code_base = 0;     // e.g. trace id << 16, to tell which trace exited
  NativeTrace* links = nullptr;  // one slot per snapshot, null = back to the caller
  // One slot per snapshot: the side trace recorded from that exit, entered
  // with the exit's passed values in registers (above); null = write them
  // and go on by `links`. Null table: no exit passes values.
  NativeTrace* passed_links = nullptr;
  // Per snapshot, 1 where the exit reads passed_links (null: every exit
  // whose plan passes values). A T1 trace upgraded to T2 has its side
  // traces already: only their exits need the branch, and LLVM compiles
  // less code; a side trace attached later is entered by `links`.
  const uint8_t* passed_exits = nullptr;
  // Whether exit `snap` (whose plan passes values) reads passed_links.
  bool reads_passed_link(uint16_t snap) const {
    return passed_links != nullptr && (passed_exits == nullptr || passed_exits[snap] != 0);
  }
};

// The snapshot number of the tier-up exit (lowering_env.h tier_up_counter):
// no IR snapshot has it; the runtime resumes where snapshot 0 does.
constexpr uint32_t kTierUpExit = 0xFFFF;

// Marks "no result expected" for tessera_jit_call's expect_tag (CALLs of type
// None, e.g. IndexSet or print).
constexpr uint8_t kJitAnyTag = 0xFF;


}  // namespace tessera::jit

namespace tessera {
struct TensorObj;
struct StrObj;
}

// Runtime helpers that compiled traces call. Their addresses are embedded in
// the generated code as constants (no symbol resolution); extern "C" keeps the
// signatures plain.
extern "C" {

// Frees a heap object whose reference count generated code has just brought
// to zero (stores into registers and list elements count references inline).
void tessera_jit_free(uint64_t obj);

// Calls `target` with the n arguments (tags[i], payloads[i]) — borrowed: the
// helper copies them into owned Values before calling anything. On success
// writes the result's payload into *result and returns true; when
// target->dest_slot >= 0 the result Value is also stored (owned) into
// ctx->base[dest_slot]. Returns false — the trace then exits through the
// CALL's snapshot and the interpreter redoes the operation — when the callee
// raises (RuntimeError, bad_alloc, anything), when the result's tag is not
// expect_tag (kJitAnyTag: anything, the result is not read), or when an
// object result that the trace reads has no dest_slot to own it.
bool tessera_jit_call(tessera::jit::JitContext* ctx, const tessera::jit::CallTarget* target,
                      const uint8_t* tags, const uint64_t* payloads, uint32_t n,
                      uint8_t expect_tag, uint64_t* result);

// LPUSH: appends the value (tag, payload; borrowed: the list takes its own
// reference) to list `l`, as push(l, v) does. Returns false, with the list
// unchanged, when memory runs out (the trace exits and the interpreter
// redoes the push, which raises).
bool tessera_jit_list_push(tessera::ListObj* l, uint64_t payload, uint8_t tag);
// SLT, SLE: two strings compared bytewise.
bool tessera_jit_str_lt(const tessera::StrObj* a, const tessera::StrObj* b);
bool tessera_jit_str_le(const tessera::StrObj* a, const tessera::StrObj* b);

// Before a trace touches the elements of a tensor whose device copy is set
// (vm/tensor/device_copy.h): copies them back to the host. A device that
// cannot copy them back is fatal (the trace can neither go on with stale
// elements nor raise): the message says why and the process aborts.
void tessera_jit_tensor_fetch(const tessera::TensorObj* tensor);

// GSTORE into a watched global: tells the JIT (ctx->global_stored).
void tessera_jit_global_stored(tessera::jit::JitContext* ctx, uint32_t index);

// FPOP of a frame with many registers: releases the objects among the n
// registers at `regs` (as RET does), leaving nil in their place.
void tessera_jit_clear_registers(tessera::Value* regs, uint32_t n);

// Releases the objects held by the registers base[slots[0..n)] (each then
// holds nil). An exit calls it, when any of the registers it is about to
// overwrite holds an object, before it writes them all with plain stores.
void tessera_jit_release_slots(tessera::Value* base, const uint32_t* slots, uint32_t n);

// Runs the exit plan `plan` (deopt/exit_plan.h) of an exit that builds sunk
// objects: `vals` holds the raw payloads of plan->values (borrowed: they gain
// references); builds the objects and writes every register the plan names
// at `base`, releasing what each held. noexcept: running out of memory while
// deoptimizing cannot be reported to the program, so it terminates the
// process.
void tessera_jit_restore_exit(const tessera::jit::ExitPlan* plan, tessera::Value* base, const uint64_t* vals) noexcept;

// Scalar operations with the language's exact semantics (vm/core/number_ops.h).
int64_t tessera_jit_int_pow(int64_t a, int64_t b);
double tessera_jit_float_floordiv(double a, double b);
double tessera_jit_float_mod(double a, double b);
double tessera_jit_float_pow(double a, double b);
// The FMATH functions (tracer/float_math.def): tessera_jit_<fn>(x) is
// std::<fn>(x). A tier calls one where it has no instruction for it
// (codegen/host/trace_helpers.h has them by FloatMath id).
#define FLOATMATH(Name, fn, t1, t2, impl) double tessera_jit_##fn(double x);
#include "tracer/float_math.def"
#undef FLOATMATH

}  // extern "C"
