// The C helpers compiled traces call (trace_abi.h), one table: each one's
// address and signature, and for those a helper-call opcode names (ir.def's
// HELPER column) where each argument comes from. Both tiers lower every
// helper-call instruction by one path over this table, and bind the other
// helpers (exits, frame pops, watched globals, element fetches) through it.
#pragma once

#include <array>
#include <cstdint>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// A C type of a helper's signature (I8: bool and tags, zero-extended).
enum class HelperType : uint8_t { Void, I8, I32, I64, F64, Ptr };

// Where an argument of a helper-call opcode's helper comes from.
enum class HelperArg : uint8_t {
  Op1,          // operand 1's value (an I64 argument: its raw payload, trace_abi.h)
  Op2,          // operand 2's value, likewise
  Op2Tag,       // the Value tag of operand 2's type
  Ctx,          // the JitContext, its `base` brought up to date first
  Target,       // the CALL's call table entry (const CallTarget*)
  ArgTags,      // the CARG chain's tags and payloads, in buffers of the frame
  ArgPayloads,  //
  ArgCount,     // the CARG chain's length
  ExpectTag,    // the tag the result must have (kJitAnyTag: not read)
  ResultOut,    // where the helper writes the result's payload
  Internal,     // a helper no opcode names: the tier passes it itself
};

// What a helper's return value is to the trace.
enum class HelperResult : uint8_t {
  Value,  // the instruction's value
  Ok,     // false: the trace leaves through the instruction's snapshot;
          // a ResultOut argument then holds the value (of the instruction's type)
  None,   // nothing
};

struct TraceHelper {
  static constexpr int kMaxArgs = 7;
  const char* name;  // the helper's C name
  const void* address;
  IRHelper column;  // the ir.def HELPER word that names it (none: internal)
  HelperType ret;
  HelperResult result;
  bool pure;  // reads and writes no memory: T2 lets LLVM CSE and hoist it
  uint8_t nargs;
  std::array<HelperType, kMaxArgs> types;
  std::array<HelperArg, kMaxArgs> args;
};

// Every helper of trace_abi.h, FMATH's (one per row of tracer/float_math.def) among them.
const TraceHelper* trace_helpers_begin();
const TraceHelper* trace_helpers_end();

// The helper instruction `in` calls by ir.def's HELPER column (FMATH: its
// function's), or nullptr when its opcode names none. Throws
// std::runtime_error for an FMATH id out of range.
const TraceHelper* trace_helper_of(const IRIns& in);

// The helper of C name `name` ("tessera_jit_free"); throws
// std::logic_error when there is none (a tier asks for a helper by name once).
const TraceHelper& trace_helper(const char* name);

}  // namespace tessera::jit
