// The slot tags both host tiers know at a loop header and after a helper
// call (codegen/host/slot_tags.h).
#include "codegen/host/slot_tags.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/host/asmjit/asmjit_backend.h"
#include "codegen/host/llvm/llvm_backend.h"
#include "codegen/host/trace_abi.h"
#include "tracer/ir_verify.h"
#include "tracer/trace_ir.h"
#include "vm/builtins/builtin.h"
#include "vm/core/value.h"
#include "vm/interp/vm.h"

namespace tessera::jit {
namespace {

uint8_t tag(Tag t) { return static_cast<uint8_t>(t); }

// Slots 0..3 known before LOOP (three loads, a store); the body stores a
// float into the int slot 0 (its tag changes every iteration), a float into
// the float slot 2 (unchanged), and calls a helper whose result goes to slot 1.
constexpr const char* kBody =
    "0000    flt  KFLOAT 1.5\n"
    "0001    int  KINT   7\n"
    "0002 >  int  SLOAD  0  0  #0\n"
    "0003 >  str  SLOAD  1  0  #0\n"
    "0004 >  flt  SLOAD  2  0  #0\n"
    "0005    none SSTORE 3  0001\n"
    "0006    none LOOP\n"
    "0007    none SSTORE 0  0000\n"
    "0008    none SSTORE 2  0000\n"
    "0009    str  CALL   none  0  #0\n"
    "SNAP #0 ir=0002 pc=0 frames=[] []\n"
    "CALL #0 builtin 0 str 0x0 dest=1\n";

TEST(LoopHeaderSlotTags, KeepsWhatNoIterationChanges) {
  const TraceIR ir = parse_ir(kBody);
  EXPECT_EQ(loop_header_slot_tags(ir), (SlotTags{{2, tag(Tag::Float)}, {3, tag(Tag::Int)}}));
}

TEST(LoopHeaderSlotTags, BeforeTheLoopToo) {
  // A helper's result slot and a passed value's slot (its tag is not known:
  // Undef) before LOOP; no LOOP: nothing.
  TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  3\n"
      "0001 >  str  SLOAD  1  0  #0\n"
      "0002    str  CALL   none  0  #0\n"
      "0003    none LOOP\n"
      "SNAP #0 ir=0000 pc=0 frames=[] [0=0000]\n"
      "CALL #0 builtin 0 str 0x0 dest=1\n");
  EXPECT_EQ(loop_header_slot_tags(ir), (SlotTags{{0, tag(Tag::Undef)}}));
  TraceIR side = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  EXPECT_TRUE(loop_header_slot_tags(side).empty());
}

TEST(LoopHeaderSlotTags, AFrameSwitchForgetsAll) {
  TraceIR ir = parse_ir(kBody);
  const IRRef f = ir.kobj(&ir, IRType::Func);  // never run: only its opcode matters here
  ir.emit(IROp::FPOP, IRType::None, f);
  EXPECT_TRUE(loop_header_slot_tags(ir).empty());
}

// A store of a value out of range or of no value (malformed IR) changes no tag here.
TEST(LoopHeaderSlotTags, MalformedStoresChangeNothing) {
  TraceIR ir = parse_ir(kBody);
  ir[7].op2 = 0x7FFFFFF0u;
  ir[8].op2 = 6;  // LOOP: no value
  EXPECT_EQ(loop_header_slot_tags(ir), (SlotTags{{0, tag(Tag::Int)}, {2, tag(Tag::Float)}, {3, tag(Tag::Int)}}));
}

// T2's own copy of the scan read the stored value's type without T1's
// checks; T2 verifies every trace before lowering it, so such a store never
// reached the scan: it is rejected with a message, as before.
TEST(LoopHeaderSlotTags, T2RejectsAStoreOfAReferencePastTheTrace) {
  const ScopedIRVerifyMode throwing("1");  // the IR verifier's rejections throw here
  TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none LOOP\n"
      "0002    none SSTORE 0  0000\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  ir[2].op2 = 0x7FFFFFF0u;
  LlvmBackend be;
  try {
    be.compile(ir, "bad_store");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

// A helper's result slot holds what the helper stored there, whatever the
// CALL's type: the recorder's CALLs have type None (a reload types the
// result). T1 forgot the slot's tag only for CALLs of a type, so a scalar
// stored into the slot right after such a CALL skipped releasing the
// helper's object (a leak); both tiers now release it.
TEST(SlotTagsAtACall, AStoreAfterACallReleasesItsResult) {
  for (const char* tier : {"asmjit", "llvm"}) {
    SCOPED_TRACE(tier);
    TraceIR ir;
    ir.snapshots().emplace_back();
    const IRRef l = ir.emit(IROp::SLOAD, IRType::List, 0, 0, 0);
    ir.emit(IROp::SLOAD, IRType::Int, 1, 0, 0);  // slot 1's tag: int
    CallTarget pop{call::Builtin{builtin_global_value("pop").as_builtin()}, "pop"};
    pop.dest_slot = 1;
    ir.calls().push_back(pop);
    ir.emit(IROp::CALL, IRType::None, l, 0, 0);  // slot 1 now holds the popped string
    ir.emit(IROp::SSTORE, IRType::None, 1, ir.kint(5));
    ir.emit(IROp::EXIT, IRType::None, 0, 0, 0);
    std::unique_ptr<HostBackend> be;
    if (std::string(tier) == "asmjit") be = std::make_unique<AsmjitBackend>();
    else be = std::make_unique<LlvmBackend>();
    const CompiledTrace t = be->compile(ir, "store_after_call");
    const Value s = make_str("popped");
    std::vector<Value> regs = {make_list({s}), Value::integer(0)};
    ASSERT_EQ(s.as_str()->refcount, 2u);  // ours and the list's
    VM vm;
    JitContext ctx;
    ctx.vm = &vm;
    ctx.base = regs.data();
    uint64_t exit_vals[4] = {};
    EXPECT_EQ(t.fn(regs.data(), nullptr, exit_vals, &ctx), 0u);
    EXPECT_EQ(regs[1].as_int(), 5);
    EXPECT_EQ(s.as_str()->refcount, 1u);  // the register released the popped string
  }
}

}  // namespace
}  // namespace tessera::jit
