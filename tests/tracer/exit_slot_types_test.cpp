// exit_slot_types: the register types a trace has proven at an exit, which a
// side trace from there inherits (its loads of those registers go unguarded);
// exit_slot_constants: the constants it left in registers there.
#include <gtest/gtest.h>

#include "tracer/exit_slot_types.h"

namespace tessera::jit {
namespace {

using Types = std::unordered_map<uint32_t, IRType>;

// Slot 1 loaded as int, slot 2 stored a float, slot 5 given a helper's
// checked int result, slot 6 a helper's result of any type; the exit's own
// entries (slot 3 := the float) count too.
const char* kTrace =
    "0000    int  KINT   1\n"
    "0001 >  int  SLOAD  1  0  #0\n"
    "0002    flt  KFLOAT 2.5\n"
    "0003    none SSTORE 2  0002\n"
    "0004    none CARG   0001  0001\n"
    "0005    int  CALL   0004  0  #1\n"
    "0006    none CALL   0004  1  #1\n"
    "0007    bool LT     0001  0005\n"
    "0008 >  none GUARDT 0007  #2\n"
    "0009 >  int  SLOAD  4  0  #2\n"
    "0010 >  none EXIT    #3\n"
    "SNAP #0 ir=0001 pc=0 frames=[] []\n"
    "SNAP #1 ir=0005 pc=1 frames=[] []\n"
    "SNAP #2 ir=0008 pc=2 frames=[] [3=0002]\n"
    "SNAP #3 ir=0010 pc=3 frames=[] []\n"
    "CALL #0 builtin 0 abs 0x0 dest=5\n"
    "CALL #1 builtin 0 abs 0x0 dest=6\n";

TEST(ExitSlotTypes, WhatTheTraceProvedBeforeItsFirstUseOfTheSnapshot) {
  const TraceIR ir = parse_ir(kTrace);
  // Exit #2: slot 4's load shares the snapshot but comes after the first
  // guard that uses it, so it is not known there.
  EXPECT_EQ(exit_slot_types(ir, 2), (Types{{1, IRType::Int}, {2, IRType::Float}, {3, IRType::Float}, {5, IRType::Int}}));
  EXPECT_EQ(exit_slot_types(ir, 3), (Types{{1, IRType::Int}, {2, IRType::Float}, {4, IRType::Int}, {5, IRType::Int}}));
  // Exit #1 (the helper calls fail): before them.
  EXPECT_EQ(exit_slot_types(ir, 1), (Types{{1, IRType::Int}, {2, IRType::Float}}));
  EXPECT_EQ(exit_slot_types(ir, 0), Types{});  // the first load's own guard
  EXPECT_EQ(exit_slot_types(ir, 9), Types{});  // no such snapshot
}

TEST(ExitSlotTypes, FramePushesAndInlinedFramesForgetEverything) {
  const TraceIR ir = parse_ir(
      "0000    func KOBJ   0x1\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  none FPUSH  0000  2  #1\n"
      "0003 >  int  SLOAD  0  1  #2\n"
      "0004 >  none EXIT    #3\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "SNAP #2 ir=0003 pc=0 frames=[] []\n"
      "SNAP #3 ir=0004 pc=0 frames=[g@4/9] []\n");
  EXPECT_EQ(exit_slot_types(ir, 1), (Types{{1, IRType::Int}}));
  EXPECT_EQ(exit_slot_types(ir, 2), Types{});  // the callee's registers: nothing known yet
  EXPECT_EQ(exit_slot_types(ir, 3), Types{});  // exits inside inlined frames
}

using Consts = std::unordered_map<uint32_t, IRRef>;

// Slot 2 holds a string constant stored before the exits; slot 3 one too
// until a helper's result replaces it; exit #2's own entries give slot 4 an
// int constant (slot 5's float and slot 6's loaded value are not taken).
TEST(ExitSlotConstants, TheSnapshotsConstantsAndTheConstantsStoredBeforeTheExit) {
  const TraceIR ir = parse_ir(
      "0000    int  KINT   7\n"
      "0001    str  KOBJ   0x10\n"
      "0002    flt  KFLOAT 2.5\n"
      "0003 >  int  SLOAD  1  0  #0\n"
      "0004    none SSTORE 2  0001\n"
      "0005    none SSTORE 3  0001\n"
      "0006    none CARG   0003  0003\n"
      "0007    int  CALL   0006  0  #1\n"
      "0008    bool LT     0003  0000\n"
      "0009 >  none GUARDT 0008  #2\n"
      "0010 >  none EXIT    #3\n"
      "SNAP #0 ir=0003 pc=0 frames=[] []\n"
      "SNAP #1 ir=0007 pc=1 frames=[] []\n"
      "SNAP #2 ir=0009 pc=2 frames=[] [4=0000 5=0002 6=0003]\n"
      "SNAP #3 ir=0010 pc=3 frames=[] [2=0003]\n"
      "CALL #0 builtin 0 abs 0x0 dest=3\n");
  EXPECT_EQ(exit_slot_constants(ir, 1), (Consts{{2, 1}, {3, 1}}));
  EXPECT_EQ(exit_slot_constants(ir, 2), (Consts{{2, 1}, {4, 0}}));
  EXPECT_EQ(exit_slot_constants(ir, 3), Consts{});  // slot 2 := the loaded int
  EXPECT_EQ(exit_slot_constants(ir, 9), Consts{});
}

// A loop's body may store another value after its exits, which the next
// iteration sees: what the entry stored before the LOOP is not taken.
TEST(ExitSlotConstants, ALoopBodyKeepsOnlyItsOwnStores) {
  const TraceIR ir = parse_ir(
      "0000    int  KINT   7\n"
      "0001    str  KOBJ   0x10\n"
      "0002 >  int  SLOAD  1  0  #0\n"
      "0003    none SSTORE 2  0001\n"
      "0004    none LOOP\n"
      "0005    none SSTORE 3  0001\n"
      "0006    bool LT     0002  0000\n"
      "0007 >  none GUARDT 0006  #1\n"
      "0008    none SSTORE 2  0002\n"
      "SNAP #0 ir=0002 pc=0 frames=[] []\n"
      "SNAP #1 ir=0007 pc=1 frames=[] []\n");
  EXPECT_EQ(exit_slot_constants(ir, 1), (Consts{{3, 1}}));
}

TEST(ExitSlotConstants, SameConstantComparesValuesAcrossTraces) {
  const TraceIR a = parse_ir("0000    int  KINT   7\n0001    str  KOBJ   0x10\n0002    bool KBOOL  true\n");
  const TraceIR b = parse_ir("0000    str  KOBJ   0x10\n0001    int  KINT   7\n0002    int  KINT   8\n0003    str  KOBJ   0x20\n");
  EXPECT_TRUE(same_constant(a, 0, b, 1));
  EXPECT_TRUE(same_constant(a, 1, b, 0));
  EXPECT_FALSE(same_constant(a, 0, b, 2));
  EXPECT_FALSE(same_constant(a, 1, b, 3));
  EXPECT_FALSE(same_constant(a, 2, b, 1));  // a bool is no int
}

}  // namespace
}  // namespace tessera::jit
