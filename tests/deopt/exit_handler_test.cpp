// The deopt protocol: raw exit values become Values (objects borrowed, with
// a new reference), snapshots write them into the registers with reference
// counting, and inlined frames resume after their CALLs.
#include <gtest/gtest.h>

#include <bit>

#include "deopt/exit_handler.h"
#include "vm/bytecode/bytecode.h"

namespace tessera::jit {
namespace {

TEST(ExitHandler, ValueFromPayloadByType) {
  EXPECT_EQ(value_from_payload(IRType::Int, static_cast<uint64_t>(-7)).as_int(), -7);
  EXPECT_EQ(value_from_payload(IRType::Float, std::bit_cast<uint64_t>(2.5)).as_float(), 2.5);
  EXPECT_TRUE(value_from_payload(IRType::Bool, 1).as_bool());
  EXPECT_FALSE(value_from_payload(IRType::Bool, 0).as_bool());
  EXPECT_TRUE(value_from_payload(IRType::Nil, 0).is_nil());
  Value list = make_list({Value::integer(1)});
  {
    Value v = value_from_payload(IRType::List, reinterpret_cast<uint64_t>(list.as_obj()));
    EXPECT_TRUE(v.is_list());
    EXPECT_EQ(list.as_obj()->refcount, 2u) << "an exit value holds its own reference";
  }
  EXPECT_EQ(list.as_obj()->refcount, 1u);
}

TEST(ExitHandler, RestoreWritesEntriesAndReleasesWhatTheyReplace) {
  TraceIR ir;
  IRRef i = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef f = ir.emit(IROp::SLOAD, IRType::Float, 1, 0, 0);
  Snapshot snap;
  snap.pc = 3;
  snap.entries = {SnapshotEntry{0, i}, SnapshotEntry{2, f}};
  Value regs[3];
  regs[0] = Value::integer(1);
  Value held = make_str("dropped");
  regs[2] = held;
  ASSERT_EQ(held.as_obj()->refcount, 2u);
  const uint64_t vals[] = {42, std::bit_cast<uint64_t>(0.25)};
  restore_snapshot(ir, snap, vals, regs);
  EXPECT_EQ(regs[0].as_int(), 42);
  EXPECT_TRUE(regs[1].is_nil()) << "slots not in the snapshot are left alone";
  EXPECT_EQ(regs[2].as_float(), 0.25);
  EXPECT_EQ(held.as_obj()->refcount, 1u) << "the overwritten string lost the register's reference";
}

TEST(ExitHandler, ResumePcsOfInlinedFrames) {
  FunctionProto g, h;
  Snapshot snap;
  snap.pc = 7;  // in the innermost frame, h
  snap.frames = {SnapshotFrame{&g, 5, 12}, SnapshotFrame{&h, 9, 4}};
  // The root resumes after the CALL that entered g (12 + 1); g after the CALL
  // that entered h (4 + 1); h at the snapshot's pc.
  EXPECT_EQ(resume_pcs(snap), (std::vector<uint32_t>{13, 5, 7}));
  Snapshot flat;
  flat.pc = 2;
  EXPECT_EQ(resume_pcs(flat), (std::vector<uint32_t>{2}));
}

}  // namespace
}  // namespace tessera::jit
