// The op table and the TraceIR builder: emission, constant dedup, accessors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "tracer/trace_ir.h"

namespace tessera::jit {
namespace {

TEST(IROpTable, EveryOpHasAUniqueNameAndDescription) {
  std::set<std::string> names;
  for (int k = 0; k < kNumIROps; ++k) {
    const IROpInfo& info = ir_op_info(static_cast<IROp>(k));
    ASSERT_NE(info.name, nullptr);
    EXPECT_FALSE(std::string(info.name).empty());
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    ASSERT_NE(info.description, nullptr);
    EXPECT_FALSE(std::string(info.description).empty()) << info.name;
  }
  EXPECT_STREQ(ir_op_info(IROp::KNIL).name, "KNIL");
  EXPECT_STREQ(ir_op_info(IROp::PHI).name, "PHI");
  EXPECT_STREQ(ir_op_info(IROp::FFLOORDIV).name, "FFLOORDIV");
}

TEST(IROpTable, GuardsAreExactlyTheGOps) {
  const std::set<IROp> guards = {IROp::SLOAD, IROp::GLOAD, IROp::GUARDT, IROp::GUARDF, IROp::LLOAD, IROp::LLOADN,
                                 IROp::EXIT, IROp::FPUSH, IROp::RETGUARD};
  for (int k = 0; k < kNumIROps; ++k) {
    IROp op = static_cast<IROp>(k);
    EXPECT_EQ(ir_is_guard(op), guards.count(op) == 1) << ir_op_info(op).name;
  }
}

TEST(IROpTable, ModesAndOperandKindsAreConsistent) {
  for (int k = 0; k < kNumIROps; ++k) {
    IROp op = static_cast<IROp>(k);
    const IROpInfo& info = ir_op_info(op);
    EXPECT_EQ(info.mode & ~(G | S | C | K), 0) << info.name;
    // Constants are only constants, and only they use the constant pool.
    if (ir_is_const(op)) {
      EXPECT_EQ(info.mode, K) << info.name;
    }
    bool uses_pool = info.op1 == OperandKind::cst || info.op2 == OperandKind::cst;
    if (uses_pool) {
      EXPECT_TRUE(ir_is_const(op)) << info.name;
    }
    // A CSE'd instruction cannot have side effects.
    if (ir_is_cse(op)) {
      EXPECT_FALSE(ir_has_side_effect(op)) << info.name;
    }
    // Operands are filled from the left.
    if (info.op1 == OperandKind::none) {
      EXPECT_EQ(info.op2, OperandKind::none) << info.name;
    }
  }
  EXPECT_TRUE(ir_has_side_effect(IROp::SSTORE));
  EXPECT_TRUE(ir_has_side_effect(IROp::CALL));
  EXPECT_TRUE(ir_is_cse(IROp::ADD));
  EXPECT_FALSE(ir_is_cse(IROp::LLEN));
  EXPECT_EQ(ir_op_info(IROp::SLOAD).op1, OperandKind::lit);
  EXPECT_EQ(ir_op_info(IROp::KINT).op1, OperandKind::cst);
  EXPECT_EQ(ir_op_info(IROp::CALL).op2, OperandKind::lit);
}

TEST(IRType, NamesAreShortAndDistinct) {
  std::set<std::string> names;
  for (IRType t : {IRType::None, IRType::Nil, IRType::Bool, IRType::Int, IRType::Float, IRType::Str,
                   IRType::List, IRType::Tensor, IRType::Func, IRType::Builtin, IRType::DType}) {
    std::string n = ir_type_name(t);
    EXPECT_LE(n.size(), 4u) << n;
    EXPECT_NE(n, "?");
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_STREQ(ir_type_name(IRType::Int), "int");
  EXPECT_STREQ(ir_type_name(IRType::Float), "flt");
  EXPECT_STREQ(ir_type_name(IRType::Bool), "bool");
}

TEST(TraceIRBuilder, EmitReturnsConsecutiveRefs) {
  TraceIR ir;
  IRRef a = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef b = ir.emit(IROp::SLOAD, IRType::Int, 1);
  IRRef c = ir.emit(IROp::ADD, IRType::Int, a, b);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(ir.size(), 3u);
  EXPECT_EQ(ir[c].op, IROp::ADD);
  EXPECT_EQ(ir[c].op1, a);
  EXPECT_EQ(ir[c].op2, b);
  EXPECT_EQ(ir[c].snap, kNoSnap);
  EXPECT_EQ(ir[a].snap, 0);
  // Two equal pure instructions are both emitted: CSE is the optimizer's job.
  EXPECT_NE(ir.emit(IROp::ADD, IRType::Int, a, b), c);
}

TEST(TraceIRBuilder, EmitRejectsConstantOpcodes) {
  TraceIR ir;
  EXPECT_THROW(ir.emit(IROp::KINT, IRType::Int, 0), std::invalid_argument);
  EXPECT_THROW(ir.emit(IROp::KNIL, IRType::Nil), std::invalid_argument);
  EXPECT_EQ(ir.size(), 0u);
}

TEST(TraceIRBuilder, ConstantsAreDeduplicated) {
  TraceIR ir;
  IRRef i1 = ir.kint(1);
  IRRef i2 = ir.kint(2);
  ir.emit(IROp::ADD, IRType::Int, i1, i2);
  EXPECT_EQ(ir.kint(1), i1);
  EXPECT_EQ(ir.kint(2), i2);
  EXPECT_NE(i1, i2);

  IRRef n = ir.knil();
  EXPECT_EQ(ir.knil(), n);
  IRRef t = ir.kbool(true), f = ir.kbool(false);
  EXPECT_NE(t, f);
  EXPECT_EQ(ir.kbool(true), t);
  EXPECT_EQ(ir.kbool(false), f);

  // Floats by bit pattern: 0.0 and -0.0 differ, NaN equals itself, and a
  // float never aliases an int with the same bits.
  IRRef z = ir.kfloat(0.0), nz = ir.kfloat(-0.0);
  EXPECT_NE(z, nz);
  EXPECT_EQ(ir.kfloat(0.0), z);
  EXPECT_EQ(ir.kfloat(-0.0), nz);
  double qnan = std::numeric_limits<double>::quiet_NaN();
  IRRef nan1 = ir.kfloat(qnan);
  EXPECT_EQ(ir.kfloat(qnan), nan1);
  EXPECT_NE(ir.kfloat(-qnan), nan1);
  EXPECT_NE(ir.kint(0), z);
  EXPECT_NE(ir.kfloat(1.0), ir.kint(std::bit_cast<int64_t>(1.0)));

  // Objects by (pointer, type).
  static int a, b;
  IRRef pa = ir.kobj(&a, IRType::Str);
  EXPECT_EQ(ir.kobj(&a, IRType::Str), pa);
  EXPECT_NE(ir.kobj(&a, IRType::List), pa);
  EXPECT_NE(ir.kobj(&b, IRType::Str), pa);

  size_t before = ir.size();
  ir.kint(1);
  ir.kfloat(-0.0);
  ir.kobj(&a, IRType::Str);
  EXPECT_EQ(ir.size(), before);
}

TEST(TraceIRBuilder, ConstantAccessors) {
  TraceIR ir;
  IRRef i = ir.kint(std::numeric_limits<int64_t>::min());
  IRRef f = ir.kfloat(-2.5);
  static int obj;
  IRRef p = ir.kobj(&obj, IRType::Func);
  EXPECT_EQ(ir.const_int(i), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ir.const_float(f), -2.5);
  EXPECT_EQ(ir.const_ptr(p), &obj);
  EXPECT_EQ(ir[i].type, IRType::Int);
  EXPECT_EQ(ir[f].type, IRType::Float);
  EXPECT_EQ(ir[p].type, IRType::Func);
  EXPECT_EQ(ir.const_pool().size(), 3u);
  EXPECT_EQ(ir[ir.kbool(true)].op1, 1u);
  EXPECT_EQ(ir[ir.knil()].type, IRType::Nil);
}

TEST(TraceIRBuilder, DedupSurvivesRewritingAConstant) {
  // operator[] hands out mutable instructions; a rewritten constant must not
  // be returned for its old value.
  TraceIR ir;
  IRRef one = ir.kint(1);
  ir[one].op = IROp::KNIL;
  ir[one].type = IRType::Nil;
  IRRef again = ir.kint(1);
  EXPECT_NE(again, one);
  EXPECT_EQ(ir.const_int(again), 1);
}

TEST(TraceIRBuilder, LoopRef) {
  TraceIR ir;
  EXPECT_EQ(ir.loop_ref(), kNoRef);
  ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef loop = ir.emit(IROp::LOOP, IRType::None);
  ir.emit(IROp::SLOAD, IRType::Int, 1, 0, 0);
  EXPECT_EQ(ir.loop_ref(), loop);
}

}  // namespace
}  // namespace tessera::jit
