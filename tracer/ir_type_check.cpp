// The type rules of the trace IR: ir.def's columns, then the short list of
// rules the columns cannot say.
#include "tracer/ir_type_check.h"

#include <array>
#include <cstdio>
#include <utility>

namespace tessera::jit {

namespace {

std::string ref_name(IRRef r) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04u", r);
  return buf;
}

const char* operand_name(int k) { return k == 0 ? "op1" : "op2"; }

// Operands that must be an instruction of a given opcode: an element store
// goes through the address its LREF/TREF computed, a tensor access reads
// its dtype from its TIDX, a frame push or return guard names its function
// as a constant.
// Per opcode, what op1 and op2 must be (NumOps: anything).
constexpr IROp kAny = IROp::NumOps;
constexpr std::pair<IROp, std::array<IROp, 2>> kOperandOpcodes[] = {
    {IROp::LSTORE, {IROp::LREF, kAny}}, {IROp::TSTORE, {IROp::TREF, kAny}},  {IROp::TLOAD, {kAny, IROp::TIDX}},
    {IROp::TREF, {kAny, IROp::TIDX}},   {IROp::FPUSH, {IROp::KOBJ, kAny}},   {IROp::RETGUARD, {IROp::KOBJ, kAny}},
};

}  // namespace

std::string ir_type_error(const TraceIR& ir, IRRef r) {
  const IRIns& in = ir[r];
  const IROpInfo& info = ir_op_info(in.op);
  const IRRef n = static_cast<IRRef>(ir.size());
  // Messages are built only on failure: the verifier and T2 ask for every instruction.
  for (int k = 0; k < 2; ++k) {
    const IRTypeRule& rule = ir_operand_type(in.op, k);
    const IRRef a = k == 0 ? in.op1 : in.op2;
    if ((k == 0 ? info.op1 : info.op2) != OperandKind::ref || rule.unchecked() || a == kNoRef) continue;
    if (a >= n) return std::string(operand_name(k)) + " " + ref_name(a) + " does not exist";
    const IRType t = ir[a].type;
    if (rule.same && rule.allows(t) && in.op1 < n && t != ir[in.op1].type)
      return std::string("compares ") + ir_type_name(ir[in.op1].type) + " with " + ir_type_name(t);
    if (!rule.allows(t))
      return std::string(operand_name(k)) + " " + ref_name(a) + " is " + ir_type_name(t) + ", not " + rule.name;
  }
  if (!info.result_type.allows(in.type))
    return std::string("result type ") + ir_type_name(in.type) + ", ir.def says " + info.result_type.name;

  // What the columns cannot say.
  for (const auto& [op, must_be] : kOperandOpcodes) {
    if (op != in.op) continue;
    for (int k = 0; k < 2; ++k) {
      const IRRef a = k == 0 ? in.op1 : in.op2;
      if (must_be[k] != kAny && (a >= n || ir[a].op != must_be[k]))
        return std::string(operand_name(k)) + " " + ref_name(a) + " is not a " + ir_op_info(must_be[k]).name;
    }
  }
  // A PHI has the type of both its operands.
  if (in.op == IROp::PHI && (ir[in.op1].type != in.type || in.op2 >= n || ir[in.op2].type != in.type))
    return std::string("a ") + ir_type_name(in.type) + " PHI of " + ir_type_name(ir[in.op1].type) + " and " +
           (in.op2 < n ? ir_type_name(ir[in.op2].type) : "?");
  // A value passed in register i is an int for the first kPassedInts, then a float.
  if (sload_passed(in) && in.type != (sload_passed_reg(in) < kPassedInts ? IRType::Int : IRType::Float))
    return "passed value " + std::to_string(sload_passed_reg(in)) + " of the wrong type";
  return {};
}

}  // namespace tessera::jit
