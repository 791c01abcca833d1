// The IR verifier (tracer/ir_verify.h): traces that keep every rule, and
// one trace per rule that breaks it (parsed, or parsed and then edited where
// the text form's own checks would already reject the text).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tracer/ir_operands.h"
#include "tracer/ir_verify.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {
namespace {

// A loop trace as the recorder closes it: constants, the entry SLOAD, LOOP,
// the body with a bounds check and a guard, and a PHI.
constexpr const char* kLoop =
    "0000    int  KINT   1\n"
    "0001    int  KINT   100\n"
    "0002 >  int  SLOAD  0  0  #0\n"
    "0003    none LOOP\n"
    "0004    int  ADD    0002  0000\n"
    "0005    bool LT     0004  0001\n"
    "0006 >  none GUARDT 0005  #1\n"
    "0007    int  PHI    0002  0004\n"
    "SNAP #0 ir=0002 pc=0 frames=[] []\n"
    "SNAP #1 ir=0006 pc=3 frames=[] [0=0004]\n";

std::string error_of(std::string_view text) { return ir_verify_error(parse_ir(text)); }

TEST(IRVerify, WellFormedTracesPass) {
  EXPECT_EQ(error_of(kLoop), "");
  EXPECT_NO_THROW(verify_ir(parse_ir(kLoop)));
  // A side trace: no LOOP, ends in EXIT; a snapshot naming a constant.
  EXPECT_EQ(error_of("0000    int  KINT   7\n"
                     "0001 >  flt  SLOAD  2  2\n"
                     "0002    flt  FADD   0001  0001\n"
                     "0003 >  none EXIT    #0\n"
                     "SNAP #0 ir=0003 pc=5 frames=[] [1=0000 2=0002]\n"),
            "");
  // A sunk list named by a snapshot, its elements a CARG chain.
  EXPECT_EQ(error_of("0000    int  KINT   1\n"
                     "0001    int  KINT   2\n"
                     "0002 >  int  SLOAD  0  0  #0\n"
                     "0003    none CARG   0000  0001\n"
                     "0004    list VNEWLIST 0003  2\n"
                     "0005    bool LT     0002  0001\n"
                     "0006 >  none GUARDT 0005  #1\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0006 pc=4 frames=[] [3=0004]\n"),
            "");
}

TEST(IRVerify, UseBeforeDefinition) {
  TraceIR ir = parse_ir(kLoop);
  ir[4].op1 = 5;  // ADD 0005 0000 at 0004: the text form rejects this outright
  EXPECT_NE(ir_verify_error(ir).find("0004 ADD: operand 0005 is used before it is defined"), std::string::npos)
      << ir_verify_error(ir);
  EXPECT_THROW(verify_ir(ir, "after test"), IRVerifyError);
  try {
    verify_ir(ir, "after test");
  } catch (const IRVerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("(after test)"), std::string::npos) << e.what();
  }
}

TEST(IRVerify, PhiBeforeLoop) {
  EXPECT_NE(error_of("0000    int  KINT   1\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002    int  ADD    0001  0000\n"
                     "0003    int  PHI    0001  0002\n"
                     "0004    none LOOP\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n")
                .find("0003 PHI: a PHI before LOOP"),
            std::string::npos);
}

TEST(IRVerify, PhiOperandsAndPlace) {
  // First operand defined in the body, not before LOOP.
  EXPECT_NE(error_of("0000    int  KINT   1\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002    none LOOP\n"
                     "0003    int  ADD    0001  0000\n"
                     "0004    int  PHI    0003  0003\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n")
                .find("is not defined before LOOP"),
            std::string::npos);
  // An instruction after the PHIs.
  EXPECT_NE(error_of("0000    int  KINT   1\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002    none LOOP\n"
                     "0003    int  ADD    0001  0000\n"
                     "0004    int  PHI    0001  0003\n"
                     "0005    int  ADD    0003  0000\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n")
                .find("0005 ADD: an instruction after the PHIs"),
            std::string::npos);
  // Types differ.
  EXPECT_NE(error_of("0000    int  KINT   1\n"
                     "0001 >  int  SLOAD  0  0  #0\n"
                     "0002    none LOOP\n"
                     "0003    flt  CONV   0001\n"
                     "0004    int  PHI    0001  0003\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n")
                .find("PHI of int and flt"),
            std::string::npos);
  // Two LOOPs.
  EXPECT_NE(error_of("0000 >  int  SLOAD  0  0  #0\n"
                     "0001    none LOOP\n"
                     "0002    none LOOP\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n")
                .find("a second LOOP"),
            std::string::npos);
}

TEST(IRVerify, GuardWithoutSnapshot) {
  TraceIR ir = parse_ir(kLoop);
  ir[6].snap = kNoSnap;
  EXPECT_NE(ir_verify_error(ir).find("0006 GUARDT: a guard without a snapshot"), std::string::npos);
  ir[6].snap = 7;
  EXPECT_NE(ir_verify_error(ir).find("snapshot #7 does not exist"), std::string::npos);
  // An SLOAD of a parent-typed entry value (op2 = 2) checks nothing: no snapshot.
  EXPECT_EQ(error_of("0000 >  int  SLOAD  0  2\n"
                     "0001 >  none EXIT    #0\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] [0=0000]\n"),
            "");
  // A pure instruction cannot exit.
  ir = parse_ir(kLoop);
  ir[4].snap = 1;
  EXPECT_NE(ir_verify_error(ir).find("0004 ADD: names snapshot #1 but cannot exit"), std::string::npos);
}

TEST(IRVerify, PassedValueLoads) {
  // SLOAD mode 3 + i: passed value i (an int for i < 3, a float after), no
  // snapshot, named by snapshot 0.
  EXPECT_EQ(error_of("0000 >  int  SLOAD  0  3\n"
                     "0001 >  flt  SLOAD  4  6\n"
                     "0002 >  none EXIT    #0\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] [0=0000 4=0001]\n"),
            "");
  EXPECT_NE(error_of("0000 >  flt  SLOAD  0  4\n"
                     "0001 >  none EXIT    #0\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] [0=0000]\n")
                .find("passed value 1 of the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of("0000 >  int  SLOAD  0  8\n"
                     "0001 >  none EXIT    #0\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] [0=0000]\n")
                .find("SLOAD mode 8"),
            std::string::npos);
}

TEST(IRVerify, SnapshotNamingALaterValue) {
  // Snapshot #1's guard is 0005, but the snapshot names 0006.
  std::string e = error_of(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0001  0000\n"
      "0004    bool LT     0003  0000\n"
      "0005 >  none GUARDT 0004  #1\n"
      "0006    int  ADD    0003  0000\n"
      "0007    int  PHI    0001  0006\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0005 pc=3 frames=[] [0=0006]\n");
  EXPECT_NE(e.find("snapshot #1: slot 0 = 0006 is not defined before 0005"), std::string::npos) << e;
  // A snapshot naming a PHI (the body names its first operand).
  e = error_of(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    none LOOP\n"
      "0003    int  ADD    0001  0000\n"
      "0004    int  PHI    0001  0003\n"
      "SNAP #0 ir=0001 pc=0 frames=[] [0=0004]\n");
  EXPECT_NE(e.find("is a PHI"), std::string::npos) << e;
  // ir= naming a constant (the recorder's close_trace did this for a
  // snapshot taken just before a constant was interned; now it names the
  // next instruction).
  TraceIR kir = parse_ir(kLoop);
  kir.snapshots()[1].ir_ref = 1;
  EXPECT_NE(ir_verify_error(kir).find("snapshot #1: ir=0001 names a constant"), std::string::npos)
      << ir_verify_error(kir);
  EXPECT_EQ(ir_verify_error(kir, IRVerifyOptions{.constants_first = false}), "");
  // ir= after the guard that exits through it.
  TraceIR ir = parse_ir(kLoop);
  ir.snapshots()[1].ir_ref = 7;
  EXPECT_NE(ir_verify_error(ir).find("snapshot #1: ir=0007 is after 0006"), std::string::npos) << ir_verify_error(ir);
}

TEST(IRVerify, SnapshotEntriesSortedAndExisting) {
  TraceIR ir = parse_ir(kLoop);
  ir.snapshots()[1].entries = {SnapshotEntry{3, 4}, SnapshotEntry{1, 4}};
  EXPECT_NE(ir_verify_error(ir).find("not sorted by slot"), std::string::npos);
  ir.snapshots()[1].entries = {SnapshotEntry{1, 4}, SnapshotEntry{1, 2}};
  EXPECT_NE(ir_verify_error(ir).find("each slot once"), std::string::npos);
  ir.snapshots()[1].entries = {SnapshotEntry{1, 99}};
  EXPECT_NE(ir_verify_error(ir).find("slot 1 = 0099: no such instruction"), std::string::npos);
  ir.snapshots()[1].entries = {SnapshotEntry{1, 3}};
  EXPECT_NE(ir_verify_error(ir).find("(LOOP) has no value"), std::string::npos);
}

TEST(IRVerify, ConstantsInTheConstantArea) {
  TraceIR ir = parse_ir(kLoop);
  // A constant a pass appended after the instructions and left there.
  ir.kint(12345);
  EXPECT_NE(ir_verify_error(ir).find("0008 KINT: a constant outside the constant area"), std::string::npos)
      << ir_verify_error(ir);
  ir = parse_ir(kLoop);
  ir[0].op1 = 40;  // pool index out of range
  EXPECT_NE(ir_verify_error(ir).find("constant pool entry 40 does not exist"), std::string::npos);
  ir = parse_ir(kLoop);
  ir[0].type = IRType::Float;
  EXPECT_NE(ir_verify_error(ir).find("0000 KINT: a constant of type flt"), std::string::npos);
}

TEST(IRVerify, OperandTypes) {
  std::string e = error_of(
      "0000    flt  KFLOAT 1.5\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    int  ADD    0001  0000\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0002 ADD: op2 0000 is flt, not int"), std::string::npos) << e;
  e = error_of(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002 >  none GUARDT 0001  #0\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0002 GUARDT: op1 0001 is int, not bool"), std::string::npos) << e;
  e = error_of(
      "0000    flt  KFLOAT 1.5\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    bool LT     0001  0000\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("compares int with flt"), std::string::npos) << e;
  e = error_of(
      "0000    int  KINT   0\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002 >  int  LLOAD  0001  0000  #0\n"
      "0003    int  LREF   0001  0000\n"
      "0004    none LSTORE 0002  0002\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0004 LSTORE: op1 0002 is not a LREF"), std::string::npos) << e;
  // A value-less operand (a store's "result").
  e = error_of(
      "0000    int  KINT   0\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002    int  LREF   0001  0000\n"
      "0003    none LSTORE 0002  0000\n"
      "0004    none SSTORE 2  0003\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0004 SSTORE: operand 0003 (LSTORE) has no value"), std::string::npos) << e;
  // Characters of strings: SLEN and SBYTE read a string, SCHAR makes one of an int.
  EXPECT_EQ(error_of("0000    int  KINT   0\n"
                     "0001 >  str  SLOAD  0  0  #0\n"
                     "0002    int  SLEN   0001\n"
                     "0003    bool ULT    0000  0002\n"
                     "0004 >  none GUARDT 0003  #0\n"
                     "0005    int  SBYTE  0001  0000\n"
                     "0006    str  SCHAR  0005\n"
                     "SNAP #0 ir=0001 pc=0 frames=[] []\n"),
            "");
  e = error_of(
      "0000    int  KINT   0\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002    int  SLEN   0001\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0002 SLEN: op1 0001 is list, not str"), std::string::npos) << e;
  e = error_of(
      "0000 >  list SLOAD  0  0  #0\n"
      "0001    str  SCHAR  0000\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0001 SCHAR: op1 0000 is list, not int"), std::string::npos) << e;
  // LPUSH appends any value to a list, and has no value itself.
  EXPECT_EQ(error_of("0000 >  list SLOAD  0  0  #0\n"
                     "0001 >  str  SLOAD  1  0  #0\n"
                     "0002    none LPUSH  0000  0001  #0\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"),
            "");
  e = error_of(
      "0000 >  str  SLOAD  0  0  #0\n"
      "0001    none LPUSH  0000  0000  #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0001 LPUSH: op1 0000 is str, not list"), std::string::npos) << e;
}

// ir.def's type columns (tracer/ir_type_check.h): one rejected combination
// per kind of column, and the rules the columns cannot say.
TEST(IRVerify, TypeColumnsRejectWrongCombinations) {
  struct Case {
    const char* what;
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"num: an ordered comparison of strings",
       "0000 >  str  SLOAD  0  0  #0\n"
       "0001    bool LT     0000  0000\n",
       "0001 LT: op1 0000 is str, not int or flt"},
      {"same: EQ of an int and a bool",
       "0000    bool KBOOL  true\n"
       "0001 >  int  SLOAD  0  0  #0\n"
       "0002    bool EQ     0001  0000\n",
       "0002 EQ: compares int with bool"},
      {"the result column: a float ADD",
       "0000 >  int  SLOAD  0  0  #0\n"
       "0001    flt  ADD    0000  0000\n",
       "0001 ADD: result type flt, ir.def says int"},
      {"a CONV that claims to give an int",
       "0000 >  int  SLOAD  0  0  #0\n"
       "0001    int  CONV   0000\n",
       "0001 CONV: result type int, ir.def says flt"},
      {"none: LPUSH has no value",
       "0000 >  list SLOAD  0  0  #0\n"
       "0001    int  LPUSH  0000  0000  #0\n",
       "0001 LPUSH: result type int, ir.def says none"},
      {"a tensor access of a list",
       "0000 >  list SLOAD  0  0  #0\n"
       "0001    int  TRANK  0000\n",
       "0001 TRANK: op1 0000 is list, not tens"},
      {"a float index into a string",
       "0000    flt  KFLOAT 1.5\n"
       "0001 >  str  SLOAD  0  0  #0\n"
       "0002    int  SBYTE  0001  0000\n",
       "0002 SBYTE: op2 0000 is flt, not int"},
      {"FMATH of an int",
       "0000 >  int  SLOAD  0  0  #0\n"
       "0001    flt  FMATH  0000  1\n",
       "0001 FMATH: op1 0000 is int, not flt"},
      {"beside the columns: TLOAD at something other than a TIDX",
       "0000    int  KINT   0\n"
       "0001 >  tens SLOAD  0  0  #0\n"
       "0002    flt  TLOAD  0001  0000\n",
       "0002 TLOAD: op2 0000 is not a TIDX"},
  };
  for (const Case& c : cases) {
    // Every trace's SLOAD guards through snapshot #0, taken at the SLOAD.
    const std::string body = c.text;
    const std::string sload = body.substr(body.find(" >  ") - 4, 4);
    const std::string text = body + "SNAP #0 ir=" + sload + " pc=0 frames=[] []\n";
    const std::string e = error_of(text);
    EXPECT_NE(e.find(c.error), std::string::npos) << c.what << ": " << e;
  }
  // val: a load of no type.
  TraceIR ir = parse_ir(kLoop);
  ir[2].type = IRType::None;
  const std::string e = ir_verify_error(ir);
  EXPECT_NE(e.find("0002 SLOAD: result type none, ir.def says a value"), std::string::npos) << e;
}

// Every column keeps what the backends rely on: a reference operand typed
// `any` is one that may name a value-less instruction, and only such.
TEST(IRVerify, OnlyChainsAndAddressesTakeValuelessOperands) {
  for (int i = 0; i < kNumIROps; ++i) {
    const IROp op = static_cast<IROp>(i);
    for (int k = 0; k < 2; ++k) {
      if (!ir_operand_is_ref(op, k) || !ir_operand_type(op, k).allows(IRType::None)) continue;
      const bool chain = k == 0 && (op == IROp::CARG || op == IROp::CALL || ir_is_sunk_allocation(op));
      const bool address = k == 0 && (op == IROp::LSTORE || op == IROp::TSTORE);
      EXPECT_TRUE(chain || address) << ir_op_info(op).name << " operand " << k;
    }
  }
}

TEST(IRVerify, SunkAllocationsOnlyInSnapshots) {
  std::string e = error_of(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    list VNEWLIST 0000  1\n"
      "0003    int  LLEN   0002\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  EXPECT_NE(e.find("0003 LLEN: operand 0002 is a sunk allocation"), std::string::npos) << e;
  e = error_of(
      "0000    int  KINT   1\n"
      "0001    int  KINT   2\n"
      "0002    list VNEWLIST 0000  2\n"
      "0003 >  none EXIT    #0\n"
      "SNAP #0 ir=0003 pc=0 frames=[] [0=0002]\n");
  EXPECT_NE(e.find("element count does not match op2 = 2"), std::string::npos) << e;
}

TEST(IROperands, VisitsOnlyReferenceOperands) {
  TraceIR ir = parse_ir(kLoop);
  std::vector<IRRef> refs;
  operand_refs(ir[2], refs);  // SLOAD 0 0: two literals
  EXPECT_TRUE(refs.empty());
  operand_refs(ir[4], refs);  // ADD 0002 0000
  EXPECT_EQ(refs, (std::vector<IRRef>{2, 0}));
  std::vector<int> ks;
  for_each_operand_ref(ir[7], [&](IRRef, int k) { ks.push_back(k); });
  EXPECT_EQ(ks, (std::vector<int>{0, 1}));
  IRIns add = ir[4];
  map_operand_refs(add, [](IRRef r) { return r + 10; });
  EXPECT_EQ(add.op1, 12u);
  EXPECT_EQ(add.op2, 10u);
}

TEST(IROperands, CopyConstants) {
  TraceIR from = parse_ir(
      "0000    nil  KNIL\n"
      "0001    bool KBOOL  true\n"
      "0002    int  KINT   -5\n"
      "0003    flt  KFLOAT -0.0\n"
      "0004 >  int  SLOAD  0  0  #0\n"
      "SNAP #0 ir=0004 pc=0 frames=[] []\n");
  TraceIR to;
  to.kint(99);
  std::vector<IRRef> remap = copy_constants(from, to, {true, false, true, true});
  EXPECT_EQ(remap[1], kNoRef);
  EXPECT_EQ(remap[4], kNoRef);
  EXPECT_EQ(to[remap[0]].op, IROp::KNIL);
  EXPECT_EQ(to.const_int(remap[2]), -5);
  EXPECT_TRUE(std::signbit(to.const_float(remap[3])));
  EXPECT_THROW(copy_constant(from, 4, to), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::jit
