// The opcode table (tracer/ir.def) agrees with itself: the columns that
// passes and backends ask (memory, commutative, may trap, raises, clobbers
// memory, calls a helper, peelable) fit each opcode's mode and operands, and
// the verifier lets exactly the instructions that may exit name a snapshot.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tracer/ir_verify.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {
namespace {

IROp op_at(int i) { return static_cast<IROp>(i); }

// Runs `f(op, info)` for every opcode, with the opcode's name in failures.
template <typename F>
void for_each_op(F f) {
  for (int i = 0; i < kNumIROps; ++i) {
    const IROpInfo& info = ir_op_info(op_at(i));
    SCOPED_TRACE(info.name);
    f(op_at(i), info);
  }
}

TEST(IRTable, NamesAreUniqueAndEveryRowIsDescribed) {
  std::set<std::string> names;
  for_each_op([&](IROp, const IROpInfo& info) {
    EXPECT_TRUE(names.insert(info.name).second) << "two rows named " << info.name;
    EXPECT_NE(std::string(info.description), "");
  });
}

TEST(IRTable, MemorySpaceAndAccessGoTogether) {
  for_each_op([](IROp, const IROpInfo& info) {
    EXPECT_EQ(info.mem_space == IRMemSpace::None, info.mem_access == IRMemAccess::None);
  });
}

TEST(IRTable, ConstantsAreOnlyConstants) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (!ir_is_const(op)) return;
    EXPECT_EQ(info.mode, K);
    EXPECT_NE(info.op1, OperandKind::ref);
    EXPECT_NE(info.op2, OperandKind::ref);
    EXPECT_EQ(info.mem_space, IRMemSpace::None);
    EXPECT_FALSE(info.commutative || info.may_trap || info.raises || info.clobbers_memory || info.calls_helper);
  });
}

// CSE merges two equal pure instructions: nothing may tell them apart.
TEST(IRTable, PureInstructionsTouchNoMemoryAndNeverExit) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (!ir_is_cse(op)) return;
    EXPECT_FALSE(ir_is_guard(op));
    EXPECT_FALSE(ir_has_side_effect(op));
    EXPECT_EQ(info.mem_space, IRMemSpace::None);
    EXPECT_FALSE(info.raises);
    EXPECT_FALSE(info.clobbers_memory);
  });
}

TEST(IRTable, CommutativeOpsArePureWithTwoReferenceOperands) {
  int seen = 0;
  for_each_op([&](IROp op, const IROpInfo& info) {
    if (!info.commutative) return;
    ++seen;
    EXPECT_TRUE(ir_is_cse(op));
    EXPECT_EQ(info.op1, OperandKind::ref);
    EXPECT_EQ(info.op2, OperandKind::ref);
  });
  EXPECT_GT(seen, 0);
  EXPECT_TRUE(ir_op_info(IROp::ADD).commutative);
  EXPECT_FALSE(ir_op_info(IROp::SUB).commutative);
}

// Frame pushes and pops rebase the slots; they also release objects (clob)
// and are never copied by loop peeling.
TEST(IRTable, OnlyFramePushesAndPopsMoveTheBase) {
  for_each_op([&](IROp op, const IROpInfo& info) {
    EXPECT_EQ(info.moves_base, op == IROp::FPUSH || op == IROp::FPOP) << info.name;
    if (!info.moves_base) return;
    EXPECT_TRUE(info.clobbers_memory) << info.name;
    EXPECT_FALSE(info.peelable) << info.name;
  });
}

// Only LICM asks may_trap, and it hoists only pure instructions.
TEST(IRTable, OnlyPureInstructionsNeedTheTrapFlag) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (info.may_trap) {
      EXPECT_TRUE(ir_is_cse(op));
    }
  });
}

// An instruction that may exit without being a guard does so from inside a
// helper, which may write anything.
TEST(IRTable, WhatRaisesIsAHelperCallWithSideEffects) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (!info.raises) return;
    EXPECT_TRUE(info.calls_helper);
    EXPECT_TRUE(info.clobbers_memory);
    EXPECT_TRUE(ir_has_side_effect(op));
  });
}

TEST(IRTable, WhatClobbersMemoryIsKeptByDce) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (info.clobbers_memory) {
      EXPECT_TRUE(ir_has_side_effect(op));
    }
  });
}

// A helper call clobbers the caller-saved registers; the register allocator
// (calls_helper) and the memory passes (clobbers_memory) must agree on what
// it may touch: a helper either writes memory or computes a pure value.
TEST(IRTable, HelperCallsArePureOrClobberMemory) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (!info.calls_helper) return;
    EXPECT_FALSE(ir_is_const(op));
    EXPECT_TRUE(info.clobbers_memory || ir_is_cse(op));
    EXPECT_EQ(info.mem_space, IRMemSpace::None);
  });
}

TEST(IRTable, MemoryAccessesFitTheirOperands) {
  for_each_op([](IROp op, const IROpInfo& info) {
    switch (info.mem_space) {
      case IRMemSpace::None: return;
      case IRMemSpace::Slot:
      case IRMemSpace::Global:
        EXPECT_EQ(info.op1, OperandKind::lit);  // the slot or global index
        EXPECT_NE(info.mem_access, IRMemAccess::Address);
        break;
      case IRMemSpace::ListLength:
        EXPECT_EQ(info.mem_access, IRMemAccess::Load);
        EXPECT_EQ(info.op1, OperandKind::ref);
        break;
      case IRMemSpace::ListElement:
      case IRMemSpace::TensorElement:
        EXPECT_EQ(info.op1, OperandKind::ref);  // the object, or (stores) the element's address
        EXPECT_EQ(info.op2, OperandKind::ref);  // the index, or (stores) the value
        break;
    }
    switch (info.mem_access) {
      case IRMemAccess::None: break;
      case IRMemAccess::Load:
        EXPECT_FALSE(ir_is_cse(op));  // a store in between may change what it reads
        EXPECT_FALSE(ir_has_side_effect(op));
        break;
      case IRMemAccess::Address: EXPECT_EQ(info.mode, N); break;
      case IRMemAccess::Store:
        EXPECT_TRUE(ir_has_side_effect(op));
        EXPECT_EQ(info.op2, OperandKind::ref);  // the value stored
        break;
    }
  });
}

// Element stores write through an address of their own space.
TEST(IRTable, EveryElementSpaceHasOneAddressOpcode) {
  for (IRMemSpace space : {IRMemSpace::ListElement, IRMemSpace::TensorElement}) {
    int addresses = 0, stores = 0;
    for_each_op([&](IROp, const IROpInfo& info) {
      if (info.mem_space != space) return;
      addresses += info.mem_access == IRMemAccess::Address;
      stores += info.mem_access == IRMemAccess::Store;
    });
    EXPECT_EQ(addresses, 1);
    EXPECT_EQ(stores, 1);
  }
}

// Peeling copies an instruction before LOOP: not the loop structure, nothing
// that exits from inside a helper or rebases frames, nothing that moves or
// frees memory behind the copy's back.
TEST(IRTable, PeelableInstructionsAreOrdinaryOnes) {
  for_each_op([](IROp op, const IROpInfo& info) {
    if (!info.peelable) return;
    EXPECT_FALSE(info.raises);
    EXPECT_FALSE(info.clobbers_memory);
    EXPECT_NE(op, IROp::LOOP);
    EXPECT_NE(op, IROp::PHI);
    EXPECT_NE(op, IROp::EXIT);
  });
}

// Every guard needs a snapshot and what may exit may name one; the verifier
// rejects a snapshot on anything else.
TEST(IRTable, OnlyWhatMayExitNamesASnapshot) {
  for_each_op([](IROp op, const IROpInfo& info) {
    EXPECT_EQ(ir_may_exit(op), ir_is_guard(op) || info.raises);
  });
  TraceIR ok = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none CALL   none  0  #0\n"
      "0002 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "CALL #0 builtin 0 print 0x0\n");
  EXPECT_NO_THROW(verify_ir(ok, "test"));
  TraceIR bad = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    int  ADD    0000  0000\n"
      "0002 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  bad[1].snap = 0;
  EXPECT_THROW(verify_ir(bad, "test"), IRVerifyError);
  TraceIR unguarded = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  unguarded[1].snap = kNoSnap;
  EXPECT_THROW(verify_ir(unguarded, "test"), IRVerifyError);
}

}  // namespace
}  // namespace tessera::jit
