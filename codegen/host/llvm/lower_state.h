// The T2 lowering's state (private to codegen/host/llvm; includes LLVM
// headers): one Lowering turns one trace into LLVM IR. Its methods are
// spread over files with one job each:
//
//   ir_lowering.cpp      the main loop: the trace function and its entry
//                        wrapper, values and types, each instruction, the
//                        loop header and latch
//   lower_exits.cpp      guards and the exit blocks they branch to, each
//                        emitting its snapshot's exit plan (unlinked:
//                        exit_vals; linked: the registers, then a tail call
//                        of the next trace)
//   lower_calls.cpp      calls of the C helpers of trace_abi.h
//                        (tessera_jit_call, the scalar helpers, the report
//                        of a store into a watched global)
//   lower_memory.cpp     interpreter Values in memory: tag-guarded loads,
//                        stores with reference counting, list and tensor
//                        elements
//   lower_recursion.cpp  interpreter frames pushed and popped in place
//                        (FPUSH, RETGUARD, FPOP)
//
// Shape of the generated function (LuaJIT's loop model):
//
//   entry:      allocas for call arguments; the instructions before LOOP
//   loop:       one LLVM phi per trace PHI; the instructions after LOOP;
//               br loop (the latch is wherever the body ends)
//   exit.N.R:   one block per (snapshot, region) (lower_exits.cpp)
//
// Scalars live only in SSA values. `base_` is the current base frame's
// register 0: FPUSH and FPOP (recursion) replace it, and every later slot
// access and exit uses the new one.
#pragma once

#include <array>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/host/lowering_env.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/trace_ir.h"
#include "vm/core/value.h"

namespace tessera::jit::t2 {

constexpr uint64_t kValueSize = sizeof(tessera::Value);
static_assert(kValueSize == 16);
// NativeTrace's convention (trace_abi.h): no callee-saved registers but RSP
// and RBP, so hops between linked traces cost a jump.
constexpr llvm::CallingConv::ID kTraceCallingConv = llvm::CallingConv::PreserveNone;

class Lowering {
 public:
  Lowering(const TraceIR& ir, const LoweringEnv& env, llvm::Module& m);

  void run(const std::string& fn_name, bool lines = false);

 private:
  // --- the main loop (ir_lowering.cpp)
  [[noreturn]] void fail(const std::string& msg) const { throw_at_instruction(ir_, cur_, msg); }
  void emit_entry_wrapper(const std::string& fn_name, llvm::Function* native);
  llvm::Function* emit_memory_entry(const std::string& fn_name, llvm::FunctionType* fty);
  // The arguments of a jump into a NativeTrace (trace_abi.h): ours, and
  // `passed` (by passed register; null: undefined) in their places.
  std::vector<llvm::Value*> native_args(const std::array<llvm::Value*, kPassedValues>& passed);
  IRRef find_loop();
  llvm::Type* type_of(IRType t);
  llvm::Value* const_of(IRRef r);
  llvm::Constant* ptr_const(const void* p);
  llvm::Value* value_of(IRRef r);
  IRType type_of_ref(IRRef r) const { return ir_[r].type; }
  llvm::Value* to_payload(llvm::Value* v);
  llvm::Value* from_payload(llvm::Value* p, IRType t);
  llvm::Value* byte_gep(llvm::Value* p, uint64_t off);
  llvm::Value* slot_addr(llvm::Value* array, uint32_t index);
  void expect_type(IRRef r, llvm::Type* t, const char* what);
  void lower(IRRef r, const IRIns& ins);
  const TraceHelper* called_helper(const IRIns& ins);
  llvm::Value* lower_inline(const IRIns& ins);
  std::pair<llvm::Value*, llvm::Value*> floored_divmod(llvm::Value* a, llvm::Value* b);
  llvm::Value* compare(IROp op, IRRef x, IRRef y);
  void begin_loop(IRRef loop);
  void hoist_list_storage(IRRef loop);
  void end_loop();

  // --- guards and exits (lower_exits.cpp)
  void guard(llvm::Value* ok, uint16_t snap);
  llvm::BasicBlock* exit_block(uint16_t snap);
  void write_registers(const ExitPlan& plan, bool defer_passed);
  void write_register(const ExitPlan& plan, const ExitWrite& w);
  void tail_call_link(const NativeTrace* table, uint16_t snap, const char* kind,
                      const std::array<llvm::Value*, kPassedValues>& passed);
  void restore_with_helper(const ExitPlan& plan);
  void if_objects(llvm::Value* tags, const char* name, const std::function<void()>& cold);
  template <typename Word>
  llvm::Value* constant_array(const std::vector<Word>& words, const char* name);
  llvm::Value* slot_list(const std::vector<uint32_t>& slots);

  // --- helper calls (lower_calls.cpp)
  llvm::Type* helper_type(HelperType t);
  llvm::CallInst* call_helper(const TraceHelper& h, llvm::ArrayRef<llvm::Value*> args);
  llvm::Value* lower_helper_call(const IRIns& ins, const TraceHelper& h);
  void report_global_store(uint32_t index);

  // --- Values in memory (lower_memory.cpp)
  llvm::Value* load_guarded(llvm::Value* addr, IRType t, uint16_t snap);
  llvm::Value* load_typed(llvm::Value* addr, IRType t);
  // LLOADN: an int or a float as a double, else the exit.
  llvm::Value* load_number(llvm::Value* addr, uint16_t snap);
  void store_slot(uint32_t slot, IRRef v);
  void store_value(llvm::Value* dst, IRRef v);
  llvm::Value* add_refcount(llvm::Value* payload, int delta);
  llvm::Value* list_begin(llvm::Value* list);
  // The storage pointer of `list` here: in the loop, the one read in the
  // preheader where hoist_list_storage proved it cannot move.
  llvm::Value* list_storage(IRRef list);
  llvm::Value* element_addr(IRRef list, IRRef index);
  DType tensor_dtype(IRRef tidx);
  llvm::Value* tensor_element_addr(IRRef tensor, IRRef tidx);
  void fetch_if_on_device(llvm::Value* tensor);

  // --- recursion (lower_recursion.cpp)
  llvm::Value* field(llvm::Value* p, size_t off) { return byte_gep(p, off); }
  llvm::Value* frame_region();
  llvm::Value* frame_top(llvm::Value* fr);
  void set_frame_top(llvm::Value* fr, llvm::Value* top);
  const FunctionProto* const_proto(IRRef r);
  void set_base(llvm::Value* nb);
  void push_frame(const IRIns& ins);
  void return_guard(const IRIns& ins);
  void pop_frame(const IRIns& ins);

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
  IRRef loop_ = kNoRef;  // the LOOP instruction (begin_loop)
  IRRef cur_ = kNoRef;
  const FunctionProto* cur_proto_ = nullptr;     // the base frame's function here
  std::unordered_map<uint32_t, uint8_t> slot_tags_;  // base slot -> its tag here, where known
  std::unordered_map<IRRef, llvm::Value*> loop_storage_;  // list -> storage pointer read before the loop
  llvm::Value* top_ = nullptr;     // frame_top()
  const FunctionProto* returning_to_ = nullptr;  // checked by the last RETGUARD
  uint32_t returning_pc_ = 0;                      // and the pc it resumes at
};

}  // namespace tessera::jit::t2
