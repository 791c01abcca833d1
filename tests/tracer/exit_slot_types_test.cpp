// exit_slot_types: the register types a trace has proven at an exit, which a
// side trace from there inherits (its loads of those registers go unguarded).
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

}  // namespace
}  // namespace tessera::jit
