// Trace IR -> LLVM IR.
//
// Shape of the generated function (LuaJIT's loop model):
//
//   entry:      allocas for call arguments; the instructions before LOOP
//   loop:       one LLVM phi per trace PHI; the instructions after LOOP;
//               br loop (the latch is wherever the body ends)
//   exit.N.R:   one block per (snapshot, region): stores the snapshot's
//               entry values into exit_vals and returns N
//
// Guards are conditional branches to the exit blocks, weighted as unlikely
// so that the code generator lays the loop out straight-line. Scalars live
// only in SSA values; all memory effects on interpreter state go through the
// C++ helpers of trace_abi.h, whose addresses are embedded as constants.
// `base_` is the current base frame's register 0: FPUSH and FPOP (recursion)
// replace it, and every later slot access and exit uses the new one.
#include "codegen/host/llvm/ir_lowering.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <stdexcept>
#include <utility>

#include "tracer/ir_value_tags.h"
#include "codegen/host/trace_abi.h"
#include "vm/bytecode/bytecode.h"
#include "vm/core/value.h"
#include "vm/interp/jit_hooks.h"

namespace tessera::jit {
namespace {

constexpr uint64_t kValueSize = sizeof(tessera::Value);
// NativeTrace's convention (trace_abi.h): no callee-saved registers but RSP
// and RBP, so hops between linked traces cost a jump.
constexpr llvm::CallingConv::ID kTraceCallingConv = llvm::CallingConv::PreserveNone;
static_assert(kValueSize == 16);


class Lowering {
 public:
  Lowering(const TraceIR& ir, const LoweringEnv& env, llvm::Module& m)
      : ir_(ir), env_(env), m_(m), c_(m.getContext()), b_(c_) {
    i1_ = llvm::Type::getInt1Ty(c_);
    i8_ = llvm::Type::getInt8Ty(c_);
    i32_ = llvm::Type::getInt32Ty(c_);
    i64_ = llvm::Type::getInt64Ty(c_);
    f64_ = llvm::Type::getDoubleTy(c_);
    ptr_ = llvm::PointerType::get(c_, 0);
    val_.assign(ir.size(), nullptr);
    cur_proto_ = env.proto;
  }

  void run(const std::string& fn_name) {
    const IRRef loop = find_loop();
    auto* fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_}, false);
    f_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, m_);
    f_->setCallingConv(kTraceCallingConv);
    f_->setDoesNotThrow();  // the helpers catch everything
    emit_entry_wrapper(fn_name, fty);
    base_ = f_->getArg(0);
    globals_ = f_->getArg(1);
    exit_vals_ = f_->getArg(2);
    ctx_ = f_->getArg(3);
    base_->setName("base");
    globals_->setName("globals");
    exit_vals_->setName("exit_vals");
    ctx_->setName("ctx");
    // exit_vals is a buffer of the caller's that nothing else reaches.
    f_->addParamAttr(2, llvm::Attribute::NoAlias);

    entry_ = llvm::BasicBlock::Create(c_, "entry", f_);
    b_.SetInsertPoint(entry_);

    for (IRRef r = 0; r < ir_.size(); ++r) {
      cur_ = r;
      const IRIns& ins = ir_[r];
      if (ir_is_const(ins.op)) continue;  // materialized on use
      if (r == loop) {
        begin_loop(loop);
        continue;
      }
      if (ins.op == IROp::PHI) continue;  // wired up at LOOP and at the latch
      lower(r, ins);
    }
    if (loop != kNoRef) end_loop();
    else if (!b_.GetInsertBlock()->getTerminator()) b_.CreateUnreachable();
  }

 private:

  // The TraceFn for C++: calls the trace and returns its exit code. The
  // callee-saved registers the trace may clobber are saved here, once per
  // entry from the interpreter rather than once per trace-to-trace hop.
  void emit_entry_wrapper(const std::string& fn_name, llvm::FunctionType* fty) {
    auto* w = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name + "_entry", m_);
    w->setDoesNotThrow();
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c_, "entry", w));
    std::vector<llvm::Value*> args;
    for (llvm::Argument& a : w->args()) args.push_back(&a);
    w->addParamAttr(2, llvm::Attribute::NoAlias);
    llvm::CallInst* call = b.CreateCall(fty, f_, args);
    call->setCallingConv(kTraceCallingConv);
    b.CreateRet(call);
  }

  // --- errors
  [[noreturn]] void fail(const std::string& msg) const { throw_at_instruction(ir_, cur_, msg); }

  IRRef find_loop() {
    IRRef loop = kNoRef;
    for (IRRef r = 0; r < ir_.size(); ++r) {
      if (ir_[r].op == IROp::LOOP) {
        if (loop != kNoRef) {
          cur_ = r;
          fail("more than one LOOP");
        }
        loop = r;
      }
    }
    // No LOOP: a linear (side) trace, which must end in an EXIT.
    if (loop == kNoRef && (ir_.size() == 0 || ir_[ir_.size() - 1].op != IROp::EXIT))
      throw std::runtime_error("trace has neither a LOOP nor a final EXIT");
    return loop;
  }

  // --- types and values
  llvm::Type* type_of(IRType t) {
    switch (t) {
      case IRType::Bool: return i1_;
      case IRType::Float: return f64_;
      case IRType::Int:
      case IRType::Nil:
      case IRType::DType: return i64_;  // nil's payload is 0; a dtype's is its number
      case IRType::None: fail("an instruction of type None has no value");
      default: return ptr_;
    }
  }

  llvm::Value* const_of(IRRef r) {
    const IRIns& k = ir_[r];
    switch (k.op) {
      case IROp::KNIL: return llvm::ConstantInt::get(i64_, 0);
      case IROp::KBOOL: return llvm::ConstantInt::get(i1_, k.op1 != 0);
      case IROp::KINT: return llvm::ConstantInt::get(i64_, static_cast<uint64_t>(ir_.const_int(r)));
      case IROp::KFLOAT: return llvm::ConstantFP::get(f64_, ir_.const_float(r));
      case IROp::KOBJ: return ptr_const(ir_.const_ptr(r));
      default: fail("not a constant");
    }
  }

  llvm::Constant* ptr_const(const void* p) {
    return llvm::ConstantExpr::getIntToPtr(
        llvm::ConstantInt::get(i64_, reinterpret_cast<uint64_t>(p)), ptr_);
  }

  // The LLVM value of reference `r` at the current point.
  llvm::Value* value_of(IRRef r) {
    if (r >= ir_.size()) fail("reference " + std::to_string(r) + " is out of range");
    if (val_[r] != nullptr) return val_[r];
    if (ir_is_const(ir_[r].op)) return const_of(r);
    fail("reference " + std::to_string(r) + " (" + ir_op_info(ir_[r].op).name +
         ") has no value here (used before its definition, or produces none)");
  }

  IRType type_of_ref(IRRef r) const { return ir_[r].type; }

  // The raw 64-bit payload of a typed value (the exit_vals / helper format).
  llvm::Value* to_payload(llvm::Value* v) {
    llvm::Type* t = v->getType();
    if (t == i1_) return b_.CreateZExt(v, i64_);
    if (t == f64_) return b_.CreateBitCast(v, i64_);
    if (t == ptr_) return b_.CreatePtrToInt(v, i64_);
    return v;
  }

  llvm::Value* from_payload(llvm::Value* p, IRType t) {
    llvm::Type* ty = type_of(t);
    if (ty == i1_) return b_.CreateICmpNE(p, llvm::ConstantInt::get(i64_, 0));
    if (ty == f64_) return b_.CreateBitCast(p, f64_);
    if (ty == ptr_) return b_.CreateIntToPtr(p, ptr_);
    return p;
  }

  llvm::Value* byte_gep(llvm::Value* p, uint64_t off) {
    return off == 0 ? p : b_.CreateConstInBoundsGEP1_64(i8_, p, off);
  }
  llvm::Value* slot_addr(llvm::Value* array, uint32_t index) {
    return byte_gep(array, uint64_t{index} * kValueSize);
  }

  // --- exits and guards
  llvm::BasicBlock* exit_block(uint16_t snap) {
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
      if (plan.builds_objects()) restore_with_helper(plan);
      else write_registers(plan);
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(
          ptr_, ptr_const(reinterpret_cast<const void*>(env_.linking.links)), snap);
      llvm::Value* next = b_.CreateLoad(ptr_, slot);
      auto* tail = llvm::BasicBlock::Create(c_, "exit." + std::to_string(snap) + ".link", f_);
      auto* back = llvm::BasicBlock::Create(c_, "exit." + std::to_string(snap) + ".return", f_);
      b_.CreateCondBr(b_.CreateIsNull(next), back, tail);
      b_.SetInsertPoint(back);
      b_.CreateRet(llvm::ConstantInt::get(i32_, env_.linking.code_base | snap));
      b_.SetInsertPoint(tail);
      llvm::CallInst* call =
          b_.CreateCall(f_->getFunctionType(), next, {base_, globals_, exit_vals_, ctx_});
      call->setCallingConv(kTraceCallingConv);
      call->setTailCallKind(llvm::CallInst::TCK_MustTail);
      b_.CreateRet(call);
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
  void write_registers(const ExitPlan& plan) {
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
      auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr_, ptr_, i32_}, false);
      call_addr(reinterpret_cast<const void*>(&tessera_jit_release_slots), fty,
                {base_, slot_list(plan.release_checked),
                 llvm::ConstantInt::get(i32_, static_cast<uint32_t>(plan.release_checked.size()))},
                false);
    });
    for (const ExitWrite& w : plan.writes) {
      const IRRef v = plan.values[w.value].ref;
      llvm::Value* dst = slot_addr(base_, w.slot);
      b_.CreateStore(llvm::ConstantInt::get(i8_, static_cast<uint8_t>(tag_for(type_of_ref(v)))), dst);
      b_.CreateStore(to_payload(value_of(v)), b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset));
    }
  }

  // An exit plan that builds objects: its values go to a buffer in the
  // frame and one helper runs the plan.
  void restore_with_helper(const ExitPlan& plan) {
    llvm::IRBuilder<> ab(entry_, entry_->begin());
    const uint64_t n = plan.values.size();
    llvm::Value* buf = ab.CreateAlloca(llvm::ArrayType::get(i64_, n == 0 ? 1 : n), nullptr, "exit.values");
    for (uint64_t i = 0; i < n; ++i)
      b_.CreateStore(to_payload(value_of(plan.values[i].ref)), b_.CreateConstInBoundsGEP1_64(i64_, buf, i));
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr_, ptr_, ptr_}, false);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_restore_exit), fty,
              {ptr_const(&plan), base_, buf}, false);
  }

  // When the OR-ed tags `tags` (null: none) show some register holding an
  // object, runs the code `cold` emits in a block off the hot path; then
  // goes on after it.
  void if_objects(llvm::Value* tags, const char* name, const std::function<void()>& cold) {
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
  llvm::Value* constant_array(const std::vector<Word>& words, const char* name) {
    llvm::Constant* data = llvm::ConstantDataArray::get(c_, llvm::ArrayRef<Word>(words));
    auto* g = new llvm::GlobalVariable(m_, data->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                       data, name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  }
  llvm::Value* slot_list(const std::vector<uint32_t>& slots) { return constant_array(slots, "slots"); }

  // Continues on the fall-through path when `ok` holds, else leaves the
  // trace through `snap`.
  void guard(llvm::Value* ok, uint16_t snap) {
    llvm::BasicBlock* exit = exit_block(snap);
    auto* cont = llvm::BasicBlock::Create(c_, "", f_);
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(ok, cont, exit, md.createBranchWeights(1u << 20, 1));
    b_.SetInsertPoint(cont);
  }

  // Loads a Value at `addr`, guarding that its tag matches `t`.
  llvm::Value* load_guarded(llvm::Value* addr, IRType t, uint16_t snap) {
    const uint8_t tag = static_cast<uint8_t>(tag_for(t));
    llvm::Value* got = b_.CreateLoad(i8_, byte_gep(addr, tessera::Value::kTagOffset));
    guard(b_.CreateICmpEQ(got, llvm::ConstantInt::get(i8_, tag)), snap);
    return load_typed(addr, t);
  }
  // The payload of a value whose tag is known to be t's.
  llvm::Value* load_typed(llvm::Value* addr, IRType t) {
    if (t == IRType::Nil) return llvm::ConstantInt::get(i64_, 0);
    llvm::Value* p = byte_gep(addr, tessera::Value::kPayloadOffset);
    llvm::Type* ty = type_of(t);
    if (ty == i1_) return b_.CreateICmpNE(b_.CreateLoad(i8_, p), llvm::ConstantInt::get(i8_, 0));
    return b_.CreateLoad(ty, p);
  }

  // --- helper calls
  llvm::CallInst* call_addr(const void* fn, llvm::FunctionType* fty, llvm::ArrayRef<llvm::Value*> args,
                            bool pure) {
    llvm::CallInst* ci = b_.CreateCall(fty, ptr_const(fn), args);
    ci->setDoesNotThrow();
    if (pure) {
      // Pure scalar functions: lets LLVM CSE and hoist them.
      ci->setDoesNotAccessMemory();
      ci->addFnAttr(llvm::Attribute::WillReturn);
    }
    return ci;
  }

  llvm::Value* call_ff(double (*fn)(double, double), llvm::Value* a, llvm::Value* b) {
    auto* fty = llvm::FunctionType::get(f64_, {f64_, f64_}, false);
    return call_addr(reinterpret_cast<const void*>(fn), fty, {a, b}, true);
  }
  llvm::Value* call_f(double (*fn)(double), llvm::Value* a) {
    auto* fty = llvm::FunctionType::get(f64_, {f64_}, false);
    return call_addr(reinterpret_cast<const void*>(fn), fty, {a}, true);
  }

  // SSTORE: where the slot's current tag is known to be a scalar's (an SLOAD
  // guarded it, or the trace stored it), no reference counting is needed,
  // and with the same tag only the payload changes.
  void store_slot(uint32_t slot, IRRef v) {
    llvm::Value* dst = slot_addr(base_, slot);
    const uint8_t tag = static_cast<uint8_t>(tag_for(type_of_ref(v)));
    const uint8_t obj = static_cast<uint8_t>(Tag::Str);
    auto known = slot_tags_.find(slot);
    if (known != slot_tags_.end() && known->second < obj && tag < obj) {
      if (known->second != tag) b_.CreateStore(llvm::ConstantInt::get(i8_, tag), dst);
      b_.CreateStore(to_payload(value_of(v)),
                     b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset));
    } else {
      store_value(dst, v);
    }
    slot_tags_[slot] = tag;
  }

  // *dst = v with Value's reference counting, inline: the new object (if
  // any) gains a reference first, then the old one (if any) loses one; only
  // freeing an object whose count reached zero calls into C++.
  void store_value(llvm::Value* dst, IRRef v) {
    const IRType t = type_of_ref(v);
    const uint8_t tag = static_cast<uint8_t>(tag_for(t));
    llvm::Value* payload = to_payload(value_of(v));
    llvm::Value* payload_addr = b_.CreateConstInBoundsGEP1_64(i8_, dst, Value::kPayloadOffset);
    llvm::Value* old_tag = b_.CreateLoad(i8_, dst);
    llvm::Value* old_payload = b_.CreateLoad(i64_, payload_addr);
    if (tag >= static_cast<uint8_t>(Tag::Str)) add_refcount(payload, 1);
    b_.CreateStore(llvm::ConstantInt::get(i8_, tag), dst);
    b_.CreateStore(payload, payload_addr);

    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* release = llvm::BasicBlock::Create(c_, "store.release", fn);
    auto* free = llvm::BasicBlock::Create(c_, "store.free", fn);
    auto* done = llvm::BasicBlock::Create(c_, "store.done", fn);
    llvm::Value* old_is_obj =
        b_.CreateICmpUGE(old_tag, llvm::ConstantInt::get(i8_, static_cast<uint8_t>(Tag::Str)));
    b_.CreateCondBr(old_is_obj, release, done);
    b_.SetInsertPoint(release);
    llvm::Value* left = add_refcount(old_payload, -1);
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(b_.CreateICmpEQ(left, llvm::ConstantInt::get(i32_, 0)), free, done,
                    md.createBranchWeights(1, 1u << 10));
    b_.SetInsertPoint(free);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {i64_}, false);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_free), fty, {old_payload}, false);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // Adds `delta` to the reference count of the object at address `payload`
  // and returns the new count.
  llvm::Value* add_refcount(llvm::Value* payload, int delta) {
    llvm::Value* rc = byte_gep(b_.CreateIntToPtr(payload, ptr_), env_.obj_refcount_offset);
    llvm::Value* n = b_.CreateAdd(b_.CreateLoad(i32_, rc), llvm::ConstantInt::getSigned(i32_, delta));
    b_.CreateStore(n, rc);
    return n;
  }

  llvm::Value* lower_call(const IRIns& ins) {
    if (ins.op2 >= env_.calls.size()) fail("call table index " + std::to_string(ins.op2) + " out of range");
    const std::vector<IRRef> args = carg_list(ir_, ins.op1);
    const uint32_t n = static_cast<uint32_t>(args.size());

    // Argument buffers live in the entry block's frame, so a call inside the
    // loop does not grow the stack on each iteration.
    llvm::IRBuilder<> ab(entry_, entry_->begin());
    const uint32_t cap = n == 0 ? 1 : n;
    llvm::Value* tags = ab.CreateAlloca(llvm::ArrayType::get(i8_, cap), nullptr, "call.tags");
    llvm::Value* pays = ab.CreateAlloca(llvm::ArrayType::get(i64_, cap), nullptr, "call.payloads");
    llvm::Value* result = ab.CreateAlloca(i64_, nullptr, "call.result");
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t tag = static_cast<uint8_t>(tag_for(type_of_ref(args[i])));
      b_.CreateStore(llvm::ConstantInt::get(i8_, tag), b_.CreateConstInBoundsGEP1_64(i8_, tags, i));
      b_.CreateStore(to_payload(value_of(args[i])), b_.CreateConstInBoundsGEP1_64(i64_, pays, i));
    }
    const uint8_t expect = ins.type == IRType::None ? kJitAnyTag : static_cast<uint8_t>(tag_for(ins.type));
    auto* fty = llvm::FunctionType::get(i8_, {ptr_, ptr_, ptr_, ptr_, i32_, i8_, ptr_}, false);
    // The helper writes its result register through ctx->base, which frame
    // pushes and pops leave stale (trace_abi.h): bring it up to date here.
    b_.CreateStore(base_, field(ctx_, offsetof(JitContext, base)));
    top_ = nullptr;  // see frame_top()
    llvm::CallInst* ci = call_addr(
        reinterpret_cast<const void*>(&tessera_jit_call), fty,
        {ctx_, ptr_const(env_.calls[ins.op2]), tags, pays, llvm::ConstantInt::get(i32_, n),
         llvm::ConstantInt::get(i8_, expect), result},
        false);
    ci->addParamAttr(5, llvm::Attribute::ZExt);
    ci->addRetAttr(llvm::Attribute::ZExt);
    guard(b_.CreateICmpNE(ci, llvm::ConstantInt::get(i8_, 0)), ins.snap);
    if (ins.type == IRType::None) return nullptr;
    return from_payload(b_.CreateLoad(i64_, result), ins.type);
  }

  // --- int division: floored, never traps
  // b == 0 gives 0 (the recorder guards it, this is belt and braces);
  // b == -1 gives the wrapping negation and remainder 0 (x86 idiv faults on
  // INT64_MIN / -1). Both are handled by dividing by 1 and selecting.
  std::pair<llvm::Value*, llvm::Value*> floored_divmod(llvm::Value* a, llvm::Value* b) {
    auto* zero = llvm::ConstantInt::get(i64_, 0);
    auto* one = llvm::ConstantInt::get(i64_, 1);
    auto* minus1 = llvm::ConstantInt::getSigned(i64_, -1);
    llvm::Value* is0 = b_.CreateICmpEQ(b, zero);
    llvm::Value* ism1 = b_.CreateICmpEQ(b, minus1);
    llvm::Value* special = b_.CreateOr(is0, ism1);
    llvm::Value* d = b_.CreateSelect(special, one, b);
    llvm::Value* q = b_.CreateSDiv(a, d);
    llvm::Value* r = b_.CreateSRem(a, d);
    // Truncated -> floored: when the remainder is non-zero and its sign
    // differs from the divisor's, step the quotient down and the remainder
    // up by the divisor.
    llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                       b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
    q = b_.CreateSelect(adjust, b_.CreateSub(q, one), q);
    r = b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
    q = b_.CreateSelect(is0, zero, b_.CreateSelect(ism1, b_.CreateSub(zero, a), q));
    r = b_.CreateSelect(special, zero, r);
    return {q, r};
  }

  llvm::Value* compare(IROp op, IRRef x, IRRef y) {
    llvm::Value* a = value_of(x);
    llvm::Value* b = value_of(y);
    if (a->getType() != b->getType()) fail("comparison of operands of different types");
    if (op == IROp::ULT) return b_.CreateICmpULT(a, b);
    if (a->getType() == f64_) {
      switch (op) {
        case IROp::LT: return b_.CreateFCmpOLT(a, b);
        case IROp::LE: return b_.CreateFCmpOLE(a, b);
        case IROp::GT: return b_.CreateFCmpOGT(a, b);
        case IROp::GE: return b_.CreateFCmpOGE(a, b);
        case IROp::EQ: return b_.CreateFCmpOEQ(a, b);
        default: return b_.CreateFCmpUNE(a, b);  // NE: true when unordered
      }
    }
    // Ints order signed; bools and pointers (identity) unsigned.
    const bool is_signed = type_of_ref(x) == IRType::Int;
    switch (op) {
      case IROp::LT: return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case IROp::LE: return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
      case IROp::GT: return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
      case IROp::GE: return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
      case IROp::EQ: return b_.CreateICmpEQ(a, b);
      default: return b_.CreateICmpNE(a, b);
    }
  }

  // --- lists
  llvm::Value* list_begin(llvm::Value* list) {
    return b_.CreateLoad(ptr_, byte_gep(list, env_.list.items_offset + env_.list.begin_offset));
  }
  llvm::Value* element_addr(IRRef list, IRRef index) {
    llvm::Value* begin = list_begin(value_of(list));
    llvm::Value* off = b_.CreateShl(value_of(index), 4);  // * sizeof(Value)
    return b_.CreateGEP(i8_, begin, off);
  }

  // --- tensors
  DType tensor_dtype(IRRef tidx) {
    if (tidx >= ir_.size() || ir_[tidx].op != IROp::TIDX) fail("tensor element index must be a TIDX");
    return static_cast<DType>(ir_[tidx].op2);
  }
  llvm::Value* tensor_element_addr(IRRef tensor, IRRef tidx) {
    const DType d = tensor_dtype(tidx);
    const uint64_t size = d == DType::I64 ? 8 : d == DType::Bool ? 1 : 4;
    llvm::Value* data = b_.CreateLoad(ptr_, byte_gep(value_of(tensor), env_.tensor.data_offset));
    return b_.CreateGEP(i8_, data, b_.CreateMul(value_of(tidx), llvm::ConstantInt::get(i64_, size)));
  }

  llvm::Value* float_math(llvm::Value* x, uint32_t id) {
    switch (static_cast<FloatMath>(id)) {
      case FloatMath::Sqrt: return b_.CreateIntrinsic(llvm::Intrinsic::sqrt, {f64_}, {x});
      case FloatMath::Exp: return call_f(&tessera_jit_exp, x);
      case FloatMath::Log: return call_f(&tessera_jit_log, x);
      case FloatMath::Sin: return call_f(&tessera_jit_sin, x);
      case FloatMath::Cos: return call_f(&tessera_jit_cos, x);
      case FloatMath::Tanh: return call_f(&tessera_jit_tanh, x);
      case FloatMath::NumFns: break;
    }
    fail("unknown FloatMath id " + std::to_string(id));
  }

  void expect_type(IRRef r, llvm::Type* t, const char* what) {
    if (value_of(r)->getType() != t) fail(std::string("operand ") + std::to_string(r) + " is not " + what);
  }

  // --- one instruction
  void lower(IRRef r, const IRIns& ins) {
    llvm::Value* v = nullptr;
    auto A = [&] { return value_of(ins.op1); };
    auto B = [&] { return value_of(ins.op2); };
    auto ints = [&] {
      expect_type(ins.op1, i64_, "an int");
      expect_type(ins.op2, i64_, "an int");
    };
    auto floats = [&] {
      expect_type(ins.op1, f64_, "a float");
      expect_type(ins.op2, f64_, "a float");
    };
    switch (ins.op) {
      case IROp::SLOAD:
        v = ins.op2 == 2 ? load_typed(slot_addr(base_, ins.op1), ins.type)
                         : load_guarded(slot_addr(base_, ins.op1), ins.type, ins.snap);
        slot_tags_[ins.op1] = static_cast<uint8_t>(tag_for(ins.type));
        break;
      case IROp::GLOAD: v = load_guarded(slot_addr(globals_, ins.op1), ins.type, ins.snap); break;
      case IROp::SSTORE: store_slot(ins.op1, ins.op2); break;
      case IROp::GSTORE:
        store_value(slot_addr(globals_, ins.op1), ins.op2);
        if (env_.global_watch != nullptr) report_global_store(ins.op1);
        break;

      case IROp::ADD: ints(); v = b_.CreateAdd(A(), B()); break;
      case IROp::SUB: ints(); v = b_.CreateSub(A(), B()); break;
      case IROp::MUL: ints(); v = b_.CreateMul(A(), B()); break;
      case IROp::NEG: expect_type(ins.op1, i64_, "an int"); v = b_.CreateSub(llvm::ConstantInt::get(i64_, 0), A()); break;
      case IROp::IDIV: ints(); v = floored_divmod(A(), B()).first; break;
      case IROp::IMOD: ints(); v = floored_divmod(A(), B()).second; break;
      case IROp::IPOW: {
        ints();
        auto* fty = llvm::FunctionType::get(i64_, {i64_, i64_}, false);
        v = call_addr(reinterpret_cast<const void*>(&tessera_jit_int_pow), fty, {A(), B()}, true);
        break;
      }

      case IROp::FADD: floats(); v = b_.CreateFAdd(A(), B()); break;
      case IROp::FSUB: floats(); v = b_.CreateFSub(A(), B()); break;
      case IROp::FMUL: floats(); v = b_.CreateFMul(A(), B()); break;
      case IROp::FDIV: floats(); v = b_.CreateFDiv(A(), B()); break;
      case IROp::FNEG: expect_type(ins.op1, f64_, "a float"); v = b_.CreateFNeg(A()); break;
      case IROp::FFLOORDIV: floats(); v = call_ff(&tessera_jit_float_floordiv, A(), B()); break;
      case IROp::FMOD: floats(); v = call_ff(&tessera_jit_float_mod, A(), B()); break;
      case IROp::FPOW: floats(); v = call_ff(&tessera_jit_float_pow, A(), B()); break;
      case IROp::FMATH: expect_type(ins.op1, f64_, "a float"); v = float_math(A(), ins.op2); break;
      case IROp::CONV: expect_type(ins.op1, i64_, "an int"); v = b_.CreateSIToFP(A(), f64_); break;
      case IROp::F32RND:
        expect_type(ins.op1, f64_, "a float");
        v = b_.CreateFPExt(b_.CreateFPTrunc(A(), llvm::Type::getFloatTy(c_)), f64_);
        break;

      case IROp::LT:
      case IROp::LE:
      case IROp::GT:
      case IROp::GE:
      case IROp::EQ:
      case IROp::NE:
      case IROp::ULT: v = compare(ins.op, ins.op1, ins.op2); break;
      case IROp::NOT: expect_type(ins.op1, i1_, "a bool"); v = b_.CreateXor(A(), llvm::ConstantInt::get(i1_, 1)); break;

      case IROp::GUARDT: expect_type(ins.op1, i1_, "a bool"); guard(A(), ins.snap); break;
      case IROp::EXIT: {
        b_.CreateBr(exit_block(ins.snap));
        // Anything after an EXIT is unreachable; give it a block of its own.
        b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "after.exit", f_));
        break;
      }
      case IROp::GUARDF:
        expect_type(ins.op1, i1_, "a bool");
        guard(b_.CreateXor(A(), llvm::ConstantInt::get(i1_, 1)), ins.snap);
        break;

      case IROp::LLEN: {
        expect_type(ins.op1, ptr_, "a list");
        llvm::Value* items = byte_gep(A(), env_.list.items_offset);
        llvm::Value* begin = b_.CreatePtrToInt(b_.CreateLoad(ptr_, byte_gep(items, env_.list.begin_offset)), i64_);
        llvm::Value* end = b_.CreatePtrToInt(b_.CreateLoad(ptr_, byte_gep(items, env_.list.end_offset)), i64_);
        v = b_.CreateLShr(b_.CreateSub(end, begin), 4);  // / sizeof(Value)
        break;
      }
      case IROp::LLOAD:
        expect_type(ins.op1, ptr_, "a list");
        expect_type(ins.op2, i64_, "an int");
        v = load_guarded(element_addr(ins.op1, ins.op2), ins.type, ins.snap);
        break;
      case IROp::LREF:
        expect_type(ins.op1, ptr_, "a list");
        expect_type(ins.op2, i64_, "an int");
        v = element_addr(ins.op1, ins.op2);
        break;
      case IROp::LSTORE:
        if (ir_[ins.op1].op != IROp::LREF) fail("LSTORE's op1 must be an LREF");
        store_value(A(), ins.op2);
        break;

      case IROp::FPUSH: push_frame(ins); break;
      case IROp::RETGUARD: return_guard(ins); break;
      case IROp::FPOP: pop_frame(ins); break;

      case IROp::TDTYPE:
        expect_type(ins.op1, ptr_, "a tensor");
        v = b_.CreateZExt(b_.CreateLoad(i8_, byte_gep(A(), env_.tensor.dtype_offset)), i64_);
        break;
      case IROp::TDIM: {
        expect_type(ins.op1, ptr_, "a tensor");
        llvm::Value* dims = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_begin_offset));
        v = b_.CreateLoad(i64_, b_.CreateConstInBoundsGEP1_64(i64_, dims, ins.op2));
        break;
      }
      case IROp::TRANK: {
        expect_type(ins.op1, ptr_, "a tensor");
        llvm::Value* begin = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_begin_offset));
        llvm::Value* end = b_.CreateLoad(ptr_, byte_gep(A(), env_.tensor.shape_end_offset));
        v = b_.CreateExactSDiv(b_.CreateSub(b_.CreatePtrToInt(end, i64_), b_.CreatePtrToInt(begin, i64_)),
                               llvm::ConstantInt::get(i64_, 8));
        break;
      }
      case IROp::TIDX: expect_type(ins.op1, i64_, "an int"); v = A(); break;
      case IROp::TREF:
        expect_type(ins.op1, ptr_, "a tensor");
        v = tensor_element_addr(ins.op1, ins.op2);
        break;
      case IROp::TLOAD: {
        expect_type(ins.op1, ptr_, "a tensor");
        llvm::Value* addr = tensor_element_addr(ins.op1, ins.op2);
        switch (tensor_dtype(ins.op2)) {
          case DType::F32: v = b_.CreateFPExt(b_.CreateLoad(llvm::Type::getFloatTy(c_), addr), f64_); break;
          case DType::I32: v = b_.CreateSExt(b_.CreateLoad(i32_, addr), i64_); break;
          case DType::I64: v = b_.CreateLoad(i64_, addr); break;
          case DType::Bool: v = b_.CreateICmpNE(b_.CreateLoad(i8_, addr), llvm::ConstantInt::get(i8_, 0)); break;
          default: fail("TLOAD of an unsupported dtype");
        }
        break;
      }
      case IROp::TSTORE: {
        if (ir_[ins.op1].op != IROp::TREF) fail("TSTORE's op1 must be a TREF");
        llvm::Value* addr = A();
        llvm::Value* x = B();
        // The conversions of TensorObj::set_f / set_i.
        switch (tensor_dtype(ir_[ins.op1].op2)) {
          case DType::F32:
            if (x->getType() != i64_ && x->getType() != f64_) fail("TSTORE into f32 needs a number");
            if (x->getType() == i64_) x = b_.CreateSIToFP(x, f64_);  // set_i: via double
            b_.CreateStore(b_.CreateFPTrunc(x, llvm::Type::getFloatTy(c_)), addr);
            break;
          case DType::I32: expect_type(ins.op2, i64_, "an int"); b_.CreateStore(b_.CreateTrunc(x, i32_), addr); break;
          case DType::I64: expect_type(ins.op2, i64_, "an int"); b_.CreateStore(x, addr); break;
          case DType::Bool: expect_type(ins.op2, i1_, "a bool"); b_.CreateStore(b_.CreateZExt(x, i8_), addr); break;
          default: fail("TSTORE of an unsupported dtype");
        }
        break;
      }

      case IROp::CARG: break;  // consumed by its CALL
      case IROp::VNEWLIST:
      case IROp::VNEWTENSOR: break;  // no code: exits that name it build the object
      case IROp::CALL:
        v = lower_call(ins);
        if (ins.op2 < env_.calls.size() && env_.calls[ins.op2]->dest_slot >= 0)
          slot_tags_.erase(static_cast<uint32_t>(env_.calls[ins.op2]->dest_slot));
        break;

      default: fail("opcode not supported by the LLVM backend");
    }
    // LREF is a raw address: keep it whatever type the recorder gave it.
    if (v != nullptr && ins.op != IROp::LREF && ins.op != IROp::TREF && v->getType() != type_of(ins.type))
      fail(std::string("result type does not match the instruction's type ") + ir_type_name(ins.type));
    val_[r] = v;
  }

  // A store into a global that a trace assumed constant invalidates that
  // trace: the watch byte is read when the store runs (traces compiled
  // later may watch globals this trace stores).
  void report_global_store(uint32_t index) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* report = llvm::BasicBlock::Create(c_, "global.watched", fn);
    auto* done = llvm::BasicBlock::Create(c_, "global.done", fn);
    llvm::Value* w = b_.CreateLoad(i8_, byte_gep(ptr_const(env_.global_watch), index));
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(b_.CreateICmpNE(w, llvm::ConstantInt::get(i8_, 0)), report, done,
                    md.createBranchWeights(1, 1u << 10));
    b_.SetInsertPoint(report);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr_, i32_}, false);
    call_addr(reinterpret_cast<const void*>(&tessera_jit_global_stored), fty,
              {ctx_, llvm::ConstantInt::get(i32_, index)}, false);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // --- recursion: frames pushed and popped in place (FrameRegion)
  llvm::Value* field(llvm::Value* p, size_t off) { return byte_gep(p, off); }
  // The run's FrameRegion, inside the JitContext (trace_abi.h).
  llvm::Value* frame_region() { return field(ctx_, offsetof(JitContext, frames)); }
  // FrameRegion::top, kept in SSA from one frame operation to the next (LLVM
  // cannot tell that the slot stores in between leave it alone; reloading it
  // puts a store-to-load round trip on every return's critical path).
  // Forgotten at LOOP (iterations may differ) and at helper calls.
  llvm::Value* frame_top(llvm::Value* fr) {
    if (top_ == nullptr) top_ = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, top)));
    return top_;
  }
  void set_frame_top(llvm::Value* fr, llvm::Value* top) {
    b_.CreateStore(top, field(fr, offsetof(FrameRegion, top)));
    top_ = top;
  }
  const FunctionProto* const_proto(IRRef r) {
    if (ir_[r].op != IROp::KOBJ || ir_[r].type != IRType::Func) fail("operand must be a function constant");
    return static_cast<const FunctionProto*>(ir_.const_ptr(r));
  }
  // The new base frame: later slot accesses, exits and helpers use it
  // (ctx->base is written only before the helper calls that read it).
  void set_base(llvm::Value* nb) {
    base_ = nb;
    slot_tags_.clear();  // other registers now
  }

  void push_frame(const IRIns& ins) {
    const FunctionProto* callee = const_proto(ins.op1);
    if (cur_proto_ == nullptr) fail("FPUSH needs the function of the base frame (LoweringEnv::proto)");
    if (ins.snap >= ir_.snapshots().size()) fail("FPUSH without a valid snapshot");
    // The snapshot resumes at the CALL; the caller resumes after it.
    const uint32_t ret_pc = ir_.snapshots()[ins.snap].pc + 1;
    llvm::Value* fr = frame_region();
    llvm::Value* top = frame_top(fr);
    llvm::Value* limit = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, limit)));
    llvm::Value* callee_base = slot_addr(base_, ins.op2 + 1);
    // Room for the callee's registers and for any trace run from its frame
    // (push_limit accounts for both: FrameRegion).
    llvm::Value* push_limit = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, push_limit)));
    llvm::Value* ok =
        b_.CreateAnd(b_.CreateICmpULT(b_.CreatePtrToInt(top, i64_), b_.CreatePtrToInt(limit, i64_)),
                     b_.CreateICmpULE(b_.CreatePtrToInt(callee_base, i64_), b_.CreatePtrToInt(push_limit, i64_)));
    guard(ok, ins.snap);
    llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -static_cast<int64_t>(sizeof(CallFrame)));
    b_.CreateStore(ptr_const(cur_proto_->code.data() + ret_pc), field(caller, offsetof(CallFrame, pc)));
    b_.CreateStore(ptr_const(callee), field(top, offsetof(CallFrame, proto)));
    b_.CreateStore(ptr_const(callee->code.data()), field(top, offsetof(CallFrame, pc)));
    llvm::Value* stack = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, stack)));
    llvm::Value* index = b_.CreateLShr(b_.CreateSub(b_.CreatePtrToInt(callee_base, i64_), b_.CreatePtrToInt(stack, i64_)), 4);
    b_.CreateStore(b_.CreateTrunc(index, i32_), field(top, offsetof(CallFrame, base)));
    set_frame_top(fr, b_.CreateConstGEP1_64(i8_, top, sizeof(CallFrame)));
    set_base(callee_base);
    cur_proto_ = callee;
  }

  void return_guard(const IRIns& ins) {
    const FunctionProto* caller_proto = const_proto(ins.op1);
    llvm::Value* fr = frame_region();
    llvm::Value* top = frame_top(fr);
    llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -2 * static_cast<int64_t>(sizeof(CallFrame)));
    // The caller is the expected one: its resume pc names the function too
    // (no two functions share code). With only one frame this reads the
    // sentinel below the bottom frame, whose pc is null (CallFrameStack).
    llvm::Value* pc = b_.CreateLoad(ptr_, field(caller, offsetof(CallFrame, pc)));
    guard(b_.CreateICmpEQ(pc, ptr_const(caller_proto->code.data() + ins.op2)), ins.snap);
    returning_to_ = caller_proto;
    returning_pc_ = ins.op2;
  }

  void pop_frame(const IRIns& ins) {
    if (cur_proto_ == nullptr || returning_to_ == nullptr)
      fail("FPOP needs the function of the base frame and a RETGUARD before it");
    // As RET: the caller's CALL register gets the result (its reference
    // taken before the callee's registers let go of theirs), the callee's
    // objects are released, the frame is popped.
    store_value(b_.CreateConstGEP1_64(i8_, base_, -static_cast<int64_t>(kValueSize)), ins.op1);
    // One test of all the callee's registers whose tag is not known (their
    // tags OR-ed, as in write_registers); the helper clears them only when
    // some register holds an object.
    const uint32_t n = static_cast<uint32_t>(cur_proto_->nregs);
    llvm::Value* tags = nullptr;
    for (uint32_t i = 0; i < n && n <= 64; ++i) {
      auto known = slot_tags_.find(i);
      if (known != slot_tags_.end() && known->second < static_cast<uint8_t>(Tag::Str)) continue;
      llvm::Value* t = b_.CreateLoad(i8_, slot_addr(base_, i));
      tags = tags ? b_.CreateOr(tags, t) : t;
    }
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), {ptr_, i32_}, false);
    if (n > 64) {
      call_addr(reinterpret_cast<const void*>(&tessera_jit_clear_registers), fty,
                {base_, llvm::ConstantInt::get(i32_, n)}, false);
    } else {
      if_objects(tags, "pop.clear", [&] {
        call_addr(reinterpret_cast<const void*>(&tessera_jit_clear_registers), fty,
                  {base_, llvm::ConstantInt::get(i32_, n)}, false);
      });
    }
    llvm::Value* fr = frame_region();
    llvm::Value* top = frame_top(fr);
    set_frame_top(fr, b_.CreateConstGEP1_64(i8_, top, -static_cast<int64_t>(sizeof(CallFrame))));
    const int64_t below = caller_base_distance(*returning_to_, returning_pc_);
    if (below > 0) {
      set_base(b_.CreateConstGEP1_64(i8_, base_, -below * static_cast<int64_t>(kValueSize)));
    } else {
      llvm::Value* caller = b_.CreateConstGEP1_64(i8_, top, -2 * static_cast<int64_t>(sizeof(CallFrame)));
      llvm::Value* index = b_.CreateZExt(b_.CreateLoad(i32_, field(caller, offsetof(CallFrame, base))), i64_);
      llvm::Value* stack = b_.CreateLoad(ptr_, field(fr, offsetof(FrameRegion, stack)));
      set_base(b_.CreateGEP(i8_, stack, b_.CreateShl(index, 4)));
    }
    cur_proto_ = returning_to_;
    returning_to_ = nullptr;
  }

  // --- loop structure
  void begin_loop(IRRef loop) {
    top_ = nullptr;  // see frame_top()
    // Every PHI(a, b): `a` (before LOOP) is loop-carried; inside the body all
    // uses of `a` see the phi.
    for (IRRef r = loop + 1; r < ir_.size(); ++r) {
      const IRIns& p = ir_[r];
      if (p.op != IROp::PHI) continue;
      cur_ = r;
      if (p.op1 >= loop) fail("PHI's op1 must be defined before LOOP");
      if (ir_is_const(ir_[p.op1].op))
        fail("PHI's op1 is a constant; constants are shared, so it cannot be loop-carried");
      phis_.push_back({p.op1, p.op2, nullptr});
    }
    cur_ = loop;
    // Slot tags known at the loop header: those known on entry that no
    // iteration changes (a helper's result slot, a store of another type,
    // a frame switch make them unknown).
    for (IRRef r = loop + 1; r < ir_.size(); ++r) {
      const IRIns& in = ir_[r];
      if (in.op == IROp::SSTORE) {
        auto it = slot_tags_.find(in.op1);
        if (it != slot_tags_.end() && it->second != static_cast<uint8_t>(tag_for(ir_[in.op2].type)))
          slot_tags_.erase(it);
      } else if (in.op == IROp::CALL && in.op2 < env_.calls.size() && env_.calls[in.op2]->dest_slot >= 0) {
        slot_tags_.erase(static_cast<uint32_t>(env_.calls[in.op2]->dest_slot));
      } else if (in.op == IROp::FPUSH || in.op == IROp::FPOP) {
        slot_tags_.clear();
      }
    }
    preheader_ = b_.GetInsertBlock();
    header_ = llvm::BasicBlock::Create(c_, "loop", f_);
    b_.CreateBr(header_);
    b_.SetInsertPoint(header_);
    for (auto& ph : phis_) {
      llvm::Value* init = value_of(ph.a);
      ph.phi = b_.CreatePHI(init->getType(), 2);
      ph.phi->addIncoming(init, preheader_);
      val_[ph.a] = ph.phi;
    }
    in_loop_ = true;
  }

  void end_loop() {
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    for (auto& ph : phis_) {
      cur_ = ph.a;
      llvm::Value* next = value_of(ph.b);
      if (next->getType() != ph.phi->getType()) fail("PHI operands have different types");
      ph.phi->addIncoming(next, latch);
    }
    b_.CreateBr(header_);
  }

  struct LoopPhi {
    IRRef a, b;
    llvm::PHINode* phi;
  };

  const TraceIR& ir_;
  const LoweringEnv& env_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  llvm::Type *i1_, *i8_, *i32_, *i64_, *f64_;
  llvm::PointerType* ptr_;
  llvm::Function* f_ = nullptr;
  llvm::Value *base_ = nullptr, *globals_ = nullptr, *exit_vals_ = nullptr, *ctx_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::BasicBlock* preheader_ = nullptr;
  llvm::BasicBlock* header_ = nullptr;
  std::vector<llvm::Value*> val_;
  std::vector<LoopPhi> phis_;
  std::map<std::tuple<uint16_t, bool, llvm::Value*>, llvm::BasicBlock*> exits_;
  bool in_loop_ = false;
  IRRef cur_ = kNoRef;
  const FunctionProto* cur_proto_ = nullptr;     // the base frame's function here
  std::unordered_map<uint32_t, uint8_t> slot_tags_;  // base slot -> its tag here, where known
  llvm::Value* top_ = nullptr;     // frame_top()
  const FunctionProto* returning_to_ = nullptr;  // checked by the last RETGUARD
  uint32_t returning_pc_ = 0;                      // and the pc it resumes at
};

}  // namespace

void lower_trace(const TraceIR& ir, const LoweringEnv& env, const std::string& fn_name, llvm::Module& m) {
  Lowering(ir, env, m).run(fn_name);
}

}  // namespace tessera::jit
