// Guards and exits of the LLVM lowering (lower_state.h). A guard is a
// conditional branch to its snapshot's exit block, weighted as unlikely so
// that the code generator lays the loop out straight-line. The exit block
// emits the snapshot's exit plan (deopt/exit_plan.h): unlinked, it stores
// the plan's values into exit_vals and returns the snapshot number;
// linked, it writes the registers itself and tail-calls the next trace
// (or returns `code_base | snap` when the link is not set).
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/MDBuilder.h>

#include <string>

#include "codegen/host/llvm/lower_state.h"
#include "codegen/host/trace_abi.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_value_tags.h"

namespace tessera::jit::t2 {

// Continues on the fall-through path when `ok` holds, else leaves the
// trace through `snap`.
void Lowering::guard(llvm::Value* ok, uint16_t snap) {
  llvm::BasicBlock* exit = exit_block(snap);
  auto* cont = llvm::BasicBlock::Create(c_, "", f_);
  llvm::MDBuilder md(c_);
  b_.CreateCondBr(ok, cont, exit, md.createBranchWeights(1u << 20, 1));
  b_.SetInsertPoint(cont);
}

llvm::BasicBlock* Lowering::exit_block(uint16_t snap) {
  if (snap == kNoSnap) fail("guard without a snapshot");
  if (snap >= ir_.snapshots().size()) fail("snapshot #" + std::to_string(snap) + " does not exist");
  // Keyed by the base too: after FPUSH/FPOP the same snapshot number must
  // write and link relative to the new base frame.
  auto key = std::make_tuple(snap, in_loop_, base_);
  if (auto it = exits_.find(key); it != exits_.end()) return it->second;

  // The block is filled now, with the values current at the first guard
  // that uses it: a snapshot's entries are all defined before its first
  // guard, and every later guard of the same region is dominated by them.
  auto* bb = llvm::BasicBlock::Create(c_, "exit." + std::to_string(snap) + (in_loop_ ? ".loop" : ""), f_);
  llvm::IRBuilderBase::InsertPointGuard keep(b_);
  b_.SetInsertPoint(bb);
  // With debug lines (--dump), the exit's code is the guard's line at column
  // 1, which the disassembly heads as the exit (object_disassembly.h).
  struct RestoreLocation {
    llvm::IRBuilder<>& b;
    llvm::DebugLoc saved;
    ~RestoreLocation() { b.SetCurrentDebugLocation(saved); }
  } restore{b_, b_.getCurrentDebugLocation()};
  if (restore.saved)
    b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, restore.saved.getLine(), 1, restore.saved->getScope()));
  const ExitPlan& plan = env_.exit_plan(snap);
  if (env_.linking.links == nullptr) {
    for (size_t i = 0; i < plan.values.size(); ++i) {
      llvm::Value* v = to_payload(value_of(plan.values[i].ref));
      b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(i64_, exit_vals_, i));
    }
    b_.CreateRet(llvm::ConstantInt::get(i32_, snap));
  } else {
    // Write the registers ourselves, then go on to the linked trace, if
    // any, as a tail call: chains of linked traces keep the stack flat.
    const bool passes = !plan.passed.empty() && env_.linking.reads_passed_link(snap);
    if (plan.builds_objects()) restore_with_helper(plan);
    else write_registers(plan, passes);
    if (passes) {
      // Into the side trace recorded from this exit with the passed values
      // in registers (trace_abi.h), their registers in memory unwritten
      // (its exits write them); else they are written as the others were.
      std::array<llvm::Value*, kPassedValues> passed{};
      for (const PassedValue& p : plan.passed) passed[p.reg] = value_of(plan.values[plan.writes[p.write].value].ref);
      tail_call_link(env_.linking.passed_links, snap, "passed", passed);
      for (const PassedValue& p : plan.passed) write_register(plan, plan.writes[p.write]);
    }
    tail_call_link(env_.linking.links, snap, "link", {});
    b_.CreateRet(llvm::ConstantInt::get(i32_, env_.linking.code_base | snap));
  }
  exits_.emplace(key, bb);
  return bb;
}

// An exit plan without objects (deopt/exit_plan.h), inline and batched:
// new object values gain their reference first; then one test of all the
// overwritten registers' old tags (OR-ed: tags below Str fit in three
// bits, so the OR reaches Str only if some tag does) decides whether a
// helper must release old objects; then plain stores. One branch per exit
// instead of one (and a release block) per register keeps exits small for
// the code generator and cheap on the hot, linked path. Registers that
// hold a scalar at every exit (not in release_checked) need no test.
void Lowering::write_registers(const ExitPlan& plan, bool defer_passed) {
  for (const ExitWrite& w : plan.writes) {
    const IRRef v = plan.values[w.value].ref;
    if (static_cast<uint8_t>(tag_for(type_of_ref(v))) >= static_cast<uint8_t>(Tag::Str))
      add_refcount(to_payload(value_of(v)), 1);
  }
  llvm::Value* tags = nullptr;
  for (uint32_t slot : plan.release_checked) {
    llvm::Value* old = b_.CreateLoad(i8_, slot_addr(base_, slot));
    tags = tags ? b_.CreateOr(tags, old) : old;
  }
  // A helper rather than an inline release per register: measured on the
  // benchmarks, the inline form made compiling 30-90% slower and the code
  // no faster, even where hot exits overwrite objects every time.
  if_objects(tags, "exit.release", [&] {
    call_helper(trace_helper("tessera_jit_release_slots"),
                {base_, slot_list(plan.release_checked),
                 llvm::ConstantInt::get(i32_, static_cast<uint32_t>(plan.release_checked.size()))});
  });
  std::vector<bool> deferred(plan.writes.size(), false);
  if (defer_passed)
    for (const PassedValue& p : plan.passed) deferred[p.write] = true;
  for (size_t i = 0; i < plan.writes.size(); ++i)
    if (!deferred[i]) write_register(plan, plan.writes[i]);
}

void Lowering::write_register(const ExitPlan& plan, const ExitWrite& w) {
  const IRRef v = plan.values[w.value].ref;
  llvm::Value* dst = slot_addr(base_, w.slot);
  b_.CreateStore(llvm::ConstantInt::get(i8_, static_cast<uint8_t>(tag_for(type_of_ref(v)))), dst);
  b_.CreateStore(to_payload(value_of(v)), b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset));
}

// Where table[snap] is set, tail-calls that trace with `passed` in their
// registers (a chain of linked traces keeps the stack flat); goes on here
// where it is null.
void Lowering::tail_call_link(const NativeTrace* table, uint16_t snap, const char* kind,
                              const std::array<llvm::Value*, kPassedValues>& passed) {
  llvm::Value* slot =
      b_.CreateConstInBoundsGEP1_64(ptr_, ptr_const(reinterpret_cast<const void*>(table)), snap);
  llvm::Value* next = b_.CreateLoad(ptr_, slot);
  const std::string name = "exit." + std::to_string(snap) + "." + kind;
  auto* tail = llvm::BasicBlock::Create(c_, name, f_);
  auto* unset = llvm::BasicBlock::Create(c_, name + ".unset", f_);
  b_.CreateCondBr(b_.CreateIsNull(next), unset, tail);
  b_.SetInsertPoint(tail);
  llvm::CallInst* call = b_.CreateCall(f_->getFunctionType(), next, native_args(passed));
  call->setCallingConv(kTraceCallingConv);
  call->setTailCallKind(llvm::CallInst::TCK_MustTail);
  b_.CreateRet(call);
  b_.SetInsertPoint(unset);
}

// An exit plan that builds objects: its values go to a buffer in the
// frame and one helper runs the plan.
void Lowering::restore_with_helper(const ExitPlan& plan) {
  llvm::IRBuilder<> ab(entry_, entry_->begin());
  const uint64_t n = plan.values.size();
  llvm::Value* buf = ab.CreateAlloca(llvm::ArrayType::get(i64_, n == 0 ? 1 : n), nullptr, "exit.values");
  for (uint64_t i = 0; i < n; ++i)
    b_.CreateStore(to_payload(value_of(plan.values[i].ref)), b_.CreateConstInBoundsGEP1_64(i64_, buf, i));
  call_helper(trace_helper("tessera_jit_restore_exit"), {ptr_const(&plan), base_, buf});
}

// When the OR-ed tags `tags` (null: none) show some register holding an
// object, runs the code `cold` emits in a block off the hot path; then
// goes on after it.
void Lowering::if_objects(llvm::Value* tags, const char* name, const std::function<void()>& cold) {
  if (tags == nullptr) return;
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* then = llvm::BasicBlock::Create(c_, name, fn);
  auto* done = llvm::BasicBlock::Create(c_, std::string(name) + ".done", fn);
  llvm::MDBuilder md(c_);
  b_.CreateCondBr(b_.CreateICmpUGE(tags, llvm::ConstantInt::get(i8_, static_cast<uint8_t>(Tag::Str))), then, done,
                  md.createBranchWeights(1, 1u << 10));
  b_.SetInsertPoint(then);
  cold();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

// A constant array in the module (lives with the code): slot numbers,
// tensor layouts.
template <typename Word>
llvm::Value* Lowering::constant_array(const std::vector<Word>& words, const char* name) {
  llvm::Constant* data = llvm::ConstantDataArray::get(c_, llvm::ArrayRef<Word>(words));
  auto* g = new llvm::GlobalVariable(m_, data->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                     data, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return g;
}

llvm::Value* Lowering::slot_list(const std::vector<uint32_t>& slots) {
  return constant_array(slots, "slots");
}

}  // namespace tessera::jit::t2
