// The trace IR's type rules, one check shared by the verifier
// (tracer/ir_verify.h) and the LLVM tier, which asks it before it lowers an
// instruction. The rules are ir.def's type columns (T1, T2, TRES: which
// IRTypes op1, op2 and the result may have) and the few the columns cannot
// say (ir_type_check.cpp lists them).
#pragma once

#include <string>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// How instruction `r` of `ir` breaks the type rules ("op2 0003 is flt, not
// int"), or empty when it keeps them. An operand reference out of range is
// an error too (the verifier reports it first, with its own message).
std::string ir_type_error(const TraceIR& ir, IRRef r);

// Whether type `t` is one a value of column `rule` may have, given op1's
// type (for `same`).
inline bool ir_type_fits(const IRTypeRule& rule, IRType t, IRType op1_type) {
  return rule.allows(t) && (!rule.same || t == op1_type);
}

}  // namespace tessera::jit
