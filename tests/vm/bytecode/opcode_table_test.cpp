// The opcode table (opcodes.def): every row's operand roles fit its format
// and flow, and the register effects read from the roles are the ones the
// instruction set documents.
#include <gtest/gtest.h>

#include <string>

#include "vm/bytecode/bytecode.h"

namespace tessera {
namespace {

using R = OperandRole;

Op op_at(int k) { return static_cast<Op>(k); }

int count_role(const OpInfo& info, OperandRole role) {
  int n = 0;
  for (OperandRole r : info.roles) n += r == role;
  return n;
}

bool has_role(const OpInfo& info, OperandRole role) { return count_role(info, role) > 0; }

bool is_register_role(OperandRole r) {
  return r == R::dst || r == R::src || r == R::src4 || r == R::srcN || r == R::src1N || r == R::srcUp;
}

// A field the format lacks has no role; a 32-bit field (bx, sbx) holds no
// register; the signed sbx field is a jump or a literal, the unsigned bx an
// index.
TEST(OpcodeTable, RolesFitTheFormat) {
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(op_at(k));
    SCOPED_TRACE(info.name);
    const R a = info.roles[0], b = info.roles[1], c = info.roles[2];
    switch (info.format) {
      case OpFormat::ABC: break;
      case OpFormat::AB:
      case OpFormat::BR: EXPECT_EQ(c, R::none); break;
      case OpFormat::A:
        EXPECT_EQ(b, R::none);
        EXPECT_EQ(c, R::none);
        break;
      case OpFormat::ABx:
        EXPECT_TRUE(b == R::konst || b == R::global);
        EXPECT_EQ(c, R::none);
        break;
      case OpFormat::AsBx:
      case OpFormat::sBx:
        EXPECT_TRUE(b == R::target || b == R::imm);
        EXPECT_EQ(c, R::none);
        if (info.format == OpFormat::sBx) {
          EXPECT_EQ(a, R::none);
        }
        break;
    }
    for (int i = 0; i < kNumOperands; ++i) {
      if (info.roles[i] == R::target || info.roles[i] == R::imm) {
        EXPECT_EQ(i, 1) << "only sbx is signed";
      }
    }
  }
}

// Results go to R[A] (the interpreter, the compiler and the recorder all
// write the result there); register ranges take their length from the one
// count operand.
TEST(OpcodeTable, DestinationsAndRanges) {
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(op_at(k));
    SCOPED_TRACE(info.name);
    EXPECT_NE(info.roles[1], R::dst) << "dst only in A";
    EXPECT_NE(info.roles[2], R::dst) << "dst only in A";
    EXPECT_LE(count_role(info, R::count), 1);
    if (has_role(info, R::srcN) || has_role(info, R::src1N)) {
      EXPECT_EQ(count_role(info, R::count), 1);
    }
    if (has_role(info, R::dst)) {
      EXPECT_EQ(info.flow, OpFlow::next);
    }
  }
}

// Jumps and branches have a target; compare-and-branch pairs have the BR
// format; an unconditional jump reads nothing.
TEST(OpcodeTable, FlowAgreesWithTheOperands) {
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(op_at(k));
    SCOPED_TRACE(info.name);
    const bool jumps = info.flow == OpFlow::jump || info.flow == OpFlow::branch;
    EXPECT_EQ(jumps, has_role(info, R::target));
    EXPECT_EQ(info.flow == OpFlow::cmp, info.format == OpFormat::BR);
    if (info.flow == OpFlow::jump) {
      for (OperandRole r : info.roles) EXPECT_FALSE(is_register_role(r));
    }
  }
}

// The description names a constant or a global exactly when an operand is one.
TEST(OpcodeTable, DescriptionsAgreeWithTheRoles) {
  for (int k = 0; k < kNumOps; ++k) {
    const OpInfo& info = op_info(op_at(k));
    SCOPED_TRACE(info.name);
    const std::string desc = info.description;
    EXPECT_FALSE(desc.empty());
    EXPECT_EQ(desc.find("K[") != std::string::npos, has_role(info, R::konst)) << desc;
    EXPECT_EQ(desc.find("G[") != std::string::npos, has_role(info, R::global)) << desc;
  }
}

TEST(OpcodeTable, OperandValuesFollowTheFormat) {
  const Instr jmp = Instr::asbx(Op::JMP, 7, -4);
  EXPECT_EQ(operand_value(jmp, 0), 0);  // sBx has no A
  EXPECT_EQ(operand_value(jmp, 1), -4);
  const Instr loadk = Instr::abx(Op::LOADK, 2, 70000);
  EXPECT_EQ(operand_value(loadk, 0), 2);
  EXPECT_EQ(operand_value(loadk, 1), 70000);
  EXPECT_EQ(operand_value(loadk, 2), 0);
  const Instr addk = Instr::abc(Op::ADDK, 1, 2, 3);
  EXPECT_EQ(operand_value(addk, 2), 3);
  const Instr move = Instr::abc(Op::MOVE, 1, 2, 3);
  EXPECT_EQ(operand_value(move, 2), 0);  // AB has no C
}

bool reads(const Instr& in, uint32_t reg) { return reads_register(in, reg); }

TEST(OpcodeTable, RegisterEffectsOfEachKindOfRole) {
  const Instr add = Instr::abc(Op::ADD, 1, 2, 3);
  EXPECT_TRUE(reads(add, 2) && reads(add, 3));
  EXPECT_FALSE(reads(add, 1));
  EXPECT_TRUE(writes_register(add, 1));
  EXPECT_FALSE(writes_register(add, 2));

  const Instr addk = Instr::abc(Op::ADDK, 1, 2, 3);  // C is a constant index
  EXPECT_FALSE(reads(addk, 3));

  const Instr forloop = Instr::asbx(Op::FORLOOP, 4, -3);  // R[A..A+3]
  EXPECT_FALSE(reads(forloop, 3));
  for (uint32_t r = 4; r <= 7; ++r) EXPECT_TRUE(reads(forloop, r)) << r;
  EXPECT_FALSE(reads(forloop, 8));
  EXPECT_FALSE(writes_register(forloop, 4));

  const Instr call = Instr::abc(Op::CALL, 3, 2, 0);  // the callee and B arguments
  EXPECT_FALSE(reads(call, 2));
  EXPECT_TRUE(reads(call, 3) && reads(call, 5));
  EXPECT_FALSE(reads(call, 6));

  const Instr callkw = Instr::abc(Op::CALLKW, 3, 1, 0);  // A and everything above
  EXPECT_FALSE(reads(callkw, 2));
  EXPECT_TRUE(reads(callkw, 3) && reads(callkw, 1000));

  const Instr newlist = Instr::abc(Op::NEWLIST, 1, 4, 2);  // R[B..B+C-1]
  EXPECT_TRUE(reads(newlist, 4) && reads(newlist, 5));
  EXPECT_FALSE(reads(newlist, 6) || reads(newlist, 1));
  EXPECT_TRUE(writes_register(newlist, 1));
  EXPECT_FALSE(reads(Instr::abc(Op::NEWLIST, 1, 4, 0), 4));  // the empty list

  const Instr listext = Instr::abc(Op::LISTEXT, 1, 4, 1);
  EXPECT_TRUE(reads(listext, 1) && reads(listext, 4));
  EXPECT_FALSE(reads(listext, 5) || writes_register(listext, 1));

  const Instr getn = Instr::abc(Op::GETINDEXN, 0, 2, 2);  // R[B..B+C]
  EXPECT_TRUE(reads(getn, 2) && reads(getn, 4));
  EXPECT_FALSE(reads(getn, 5) || reads(getn, 0));
  const Instr setn = Instr::abc(Op::SETINDEXN, 2, 7, 1);  // R[A..A+C] and R[B]
  EXPECT_TRUE(reads(setn, 2) && reads(setn, 3) && reads(setn, 7));
  EXPECT_FALSE(reads(setn, 4));

  const Instr jmp = Instr::asbx(Op::JMP, 0, 5);
  const Instr ret = Instr::abc(Op::RET, 2, 0, 0);
  EXPECT_FALSE(reads(jmp, 0));
  EXPECT_TRUE(reads(ret, 2));
  EXPECT_FALSE(reads(Instr::abc(Op::RETNIL, 0, 0, 0), 0));
  EXPECT_FALSE(reads(Instr::abc(Op::LOOP, 0, 0, 0), 0));
}

TEST(OpcodeTable, AnInvalidOpcodeReadsEverything) {
  Instr bad = Instr::abc(Op::MOVE, 0, 1, 0);
  bad.op = static_cast<Op>(kNumOps + 3);
  EXPECT_STREQ(op_info(bad.op).name, "???");
  EXPECT_TRUE(reads_register(bad, 42));
  EXPECT_FALSE(writes_register(bad, 0));
}

}  // namespace
}  // namespace tessera
