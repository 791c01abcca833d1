// caller_base_distance: where FPOP finds the caller's base without reading
// the caller's frame (a CALL pushed the callee one register above its `a`).
#include <gtest/gtest.h>

#include "codegen/host/caller_base_distance.h"
#include "vm/bytecode/bytecode.h"

namespace tessera::jit {
namespace {

FunctionProto caller_with(Instr at_call) {
  FunctionProto p;
  p.code = {Instr::abc(Op::LOADI, 0, 0, 0), at_call, Instr::abc(Op::RET, 5, 0, 0)};
  return p;
}

TEST(CallerBaseDistance, IsTheCallRegisterPlusOne) {
  const FunctionProto p = caller_with(Instr::abc(Op::CALL, 4, 1, 0));
  EXPECT_EQ(caller_base_distance(p, 2), 5u);  // resumes after the CALL at pc 1
  const FunctionProto q = caller_with(Instr::abc(Op::CALL, 0, 2, 0));
  EXPECT_EQ(caller_base_distance(q, 2), 1u);
}

TEST(CallerBaseDistance, UnknownUnlessAPlainCallPrecedesTheReturnPc) {
  // Keyword calls never push a user function's frame; neither does
  // anything else, so the code must read the caller frame's base instead.
  EXPECT_EQ(caller_base_distance(caller_with(Instr::abc(Op::CALLKW, 4, 1, 0)), 2), 0u);
  EXPECT_EQ(caller_base_distance(caller_with(Instr::abc(Op::MOVE, 4, 1, 0)), 2), 0u);
  const FunctionProto p = caller_with(Instr::abc(Op::CALL, 4, 1, 0));
  EXPECT_EQ(caller_base_distance(p, 0), 0u);   // no instruction before pc 0
  EXPECT_EQ(caller_base_distance(p, 99), 0u);  // past the code
}

}  // namespace
}  // namespace tessera::jit
