// Exit plans (deopt/exit_plan.h): what an exit through each snapshot writes,
// the sunk objects it builds (inner objects first, one object however many
// registers or enclosing lists name it), the frames it rebuilds, and
// execute_exit_plan, which runs a plan with reference counting.
#include <gtest/gtest.h>

#include <bit>

#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"
#include "vm/bytecode/bytecode.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {
namespace {

TEST(ExitPlan, ValueFromPayloadByType) {
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

TEST(ExitPlan, PlainSnapshotWritesEntriesInOrderAndReleasesWhatTheyReplace) {
  TraceIR ir;
  IRRef i = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef f = ir.emit(IROp::SLOAD, IRType::Float, 1, 0, 0);
  Snapshot snap;
  snap.pc = 3;
  snap.entries = {SnapshotEntry{0, i}, SnapshotEntry{2, f}};
  ir.snapshots().push_back(snap);
  const std::vector<ExitPlan> plans = plan_exits(ir);
  ASSERT_EQ(plans.size(), 1u);
  const ExitPlan& plan = plans[0];
  EXPECT_FALSE(plan.builds_objects());
  ASSERT_EQ(plan.values.size(), 2u);
  EXPECT_EQ(plan.values[0].ref, i) << "without sunk objects the values are the entries, in order";
  EXPECT_EQ(plan.values[1].ref, f);
  EXPECT_EQ(plan.resume_pcs, (std::vector<uint32_t>{3}));
  // Slot 0 was loaded as an int and never given an object: no release test.
  EXPECT_EQ(plan.release_checked, (std::vector<uint32_t>{2}));

  Value regs[3];
  regs[0] = Value::integer(1);
  Value held = make_str("dropped");
  regs[2] = held;
  ASSERT_EQ(held.as_obj()->refcount, 2u);
  const uint64_t vals[] = {42, std::bit_cast<uint64_t>(0.25)};
  execute_exit_plan(plan, vals, regs);
  EXPECT_EQ(regs[0].as_int(), 42);
  EXPECT_TRUE(regs[1].is_nil()) << "slots not in the snapshot are left alone";
  EXPECT_EQ(regs[2].as_float(), 0.25);
  EXPECT_EQ(held.as_obj()->refcount, 1u) << "the overwritten string lost the register's reference";
}

// The values a linked exit may pass to its side trace in registers
// (codegen/host/trace_abi.h): the first three non-constant ints and two
// floats of the snapshot, in entry order; constants and bools stay writes.
const char* kPassable =
    "0000    int  KINT   7\n"
    "0001 >  int  SLOAD  0  0  #0\n"
    "0002 >  flt  SLOAD  1  0  #0\n"
    "0003    int  ADD    0001  0000\n"
    "0004    flt  FADD   0002  0002\n"
    "0005    int  SUB    0001  0000\n"
    "0006    int  MUL    0001  0000\n"
    "0007    flt  FMUL   0002  0002\n"
    "0008    flt  FSUB   0002  0002\n"
    "0009    bool LT     0001  0003\n"
    "0010 >  none GUARDT 0009  #1\n"
    "0011 >  none EXIT    #2\n"
    "SNAP #0 ir=0001 pc=0 frames=[] []\n"
    "SNAP #1 ir=0010 pc=4 frames=[] [0=0003 1=0004 2=0000 3=0005 4=0009 5=0006 6=0007 7=0008 8=0001]\n"
    "SNAP #2 ir=0011 pc=9 frames=[f@4/12] [0=0003 1=0004]\n";

TEST(ExitPlan, PassedValuesAreTheFirstIntsAndFloatsThatAreNotConstants) {
  const TraceIR ir = parse_ir(kPassable);
  const std::vector<ExitPlan> plans = plan_exits(ir);
  const ExitPlan& plan = plans[1];
  ASSERT_EQ(plan.passed.size(), kPassedValues);
  // {slot, passed register}: slots 0, 3, 5 (ints; slot 2's constant and
  // slot 8, the fourth int, are not passed), slots 1 and 6 (floats; slot 7
  // is the third).
  std::vector<std::pair<uint32_t, uint32_t>> got;
  for (const PassedValue& p : plan.passed) got.emplace_back(plan.writes[p.write].slot, p.reg);
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {1, 3}, {3, 1}, {5, 2}, {6, 4}}));
  EXPECT_TRUE(plans[0].passed.empty()) << "snapshot 0 writes nothing";
  EXPECT_TRUE(plans[2].passed.empty()) << "an exit into an inlined frame passes nothing";
}

TEST(ExitPlan, ResumePcsAndFramesOfInlinedFrames) {
  FunctionProto g, h;
  TraceIR ir;
  Snapshot snap;
  snap.pc = 7;  // in the innermost frame, h
  snap.frames = {SnapshotFrame{&g, 5, 12}, SnapshotFrame{&h, 9, 4}};
  ir.snapshots().push_back(snap);
  const ExitPlan plan = plan_exits(ir)[0];
  // The root resumes after the CALL that entered g (12 + 1); g after the CALL
  // that entered h (4 + 1); h at the snapshot's pc.
  EXPECT_EQ(plan.resume_pcs, (std::vector<uint32_t>{13, 5, 7}));
  ASSERT_EQ(plan.frames.size(), 2u);
  EXPECT_EQ(plan.frames[0].proto, &g);
  EXPECT_EQ(plan.frames[1].base, 9u);
}

// c = [[x], b] with b = [x] named by register 1 too: the exit builds the
// inner list once, before the outer one, and both registers and the outer
// list hold that one object.
const char* kNested =
    "0000 >  int  SLOAD  0  0  #0\n"
    "0001    list VNEWLIST 0000  1\n"
    "0002    none CARG   0001  0000\n"
    "0003    list VNEWLIST 0002  2\n"
    "0004 >  none EXIT    #1\n"
    "SNAP #0 ir=0000 pc=0 frames=[] []\n"
    "SNAP #1 ir=0004 pc=9 frames=[] [1=0001 2=0003 3=0000]\n";

TEST(ExitPlan, NestedSunkListsAreBuiltInnerFirstAndShared) {
  const TraceIR ir = parse_ir(kNested);
  const ExitPlan plan = plan_exits(ir)[1];
  ASSERT_TRUE(plan.builds_objects());
  ASSERT_EQ(plan.objects.size(), 2u);
  EXPECT_EQ(plan.objects[0].ref, 1u) << "the inner list first";
  EXPECT_EQ(plan.objects[0].slots, (std::vector<uint32_t>{1}));
  EXPECT_EQ(plan.objects[1].ref, 3u);
  ASSERT_EQ(plan.objects[1].elements.size(), 2u);
  EXPECT_TRUE(plan.objects[1].elements[0].object);
  EXPECT_EQ(plan.objects[1].elements[0].index, 0u);

  Value regs[4];
  std::vector<uint64_t> vals(plan.values.size());
  for (size_t k = 0; k < vals.size(); ++k) vals[k] = 7;  // every value is SLOAD 0, the int 7
  execute_exit_plan(plan, vals.data(), regs);
  ASSERT_TRUE(regs[1].is_list() && regs[2].is_list());
  EXPECT_EQ(regs[3].as_int(), 7);
  const ListObj& outer = *regs[2].as_list();
  ASSERT_EQ(outer.items.size(), 2u);
  EXPECT_EQ(outer.items[0].as_obj(), regs[1].as_obj()) << "one inner list, in register 1 and in the outer list";
  EXPECT_EQ(outer.items[1].as_int(), 7);
  EXPECT_EQ(regs[1].as_obj()->refcount, 2u);
}

TEST(ExitPlan, SunkTensorIsOneObjectInEveryRegisterThatNamesIt) {
  const TraceIR ir = parse_ir(
      "0000 >  flt  SLOAD  0  0  #0\n"
      "0001    flt  KFLOAT 1.5\n"
      "0002    none CARG   0000  0001\n"
      "0003    tens VNEWTENSOR 0002  0\n"
      "0004 >  none EXIT    #1\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=4 frames=[] [1=0003 2=0003]\n"
      "VTENSOR #0 f32 [2]\n");
  const ExitPlan plan = plan_exits(ir)[1];
  ASSERT_EQ(plan.objects.size(), 1u);
  EXPECT_EQ(plan.objects[0].slots, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(plan.objects[0].tensor_layout, (std::vector<int64_t>{static_cast<int64_t>(DType::F32), 1, 2}));
  std::vector<uint64_t> vals;
  for (const ExitValue& v : plan.values) vals.push_back(std::bit_cast<uint64_t>(v.ref == 0 ? 0.1 : 1.5));
  Value regs[3];
  execute_exit_plan(plan, vals.data(), regs);
  ASSERT_TRUE(regs[1].is_tensor());
  EXPECT_EQ(regs[1].as_obj(), regs[2].as_obj());
  EXPECT_EQ(tensor_of(regs[1]).get_f(0), static_cast<double>(0.1f)) << "rounded to f32 as the store rounds";
  EXPECT_EQ(tensor_of(regs[1]).get_f(1), 1.5);
}

TEST(ExitPlan, RefusesATensorWhoseElementsDoNotFitItsLayout) {
  const TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    tens VNEWTENSOR 0000  0\n"
      "0002 >  none EXIT    #1\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=4 frames=[] [1=0001]\n"
      "VTENSOR #0 f32 [1]\n");
  EXPECT_THROW(plan_exits(ir), std::runtime_error);
}

}  // namespace
}  // namespace tessera::jit
