// The T1 assembler's state (private to codegen/host/asmjit): one
// TraceAssembler compiles one trace. Its methods are spread over files with
// one job each, as LuaJIT splits lj_asm.c, lj_asm_x86.h and lj_emit_x86.h:
//
//   trace_assembler.cpp  the main loop and instruction selection: one walk
//                        over the trace, the loop header and back-edge,
//                        arithmetic, comparisons and the guards that branch
//                        on their flags
//   asm_emit_x86.cpp     the x86 operand emitter: where a value lives (its
//                        register, its frame slot, or a constant), operands
//                        and results, moves (the back-edge's parallel move),
//                        constant data after the code
//   asm_frame.cpp        the machine frame: the entry wrapper, the prologue
//                        and its layout, returns, helper calls with the
//                        save and restore of call-clobbered registers
//   asm_exits.cpp        exit stubs: guard exits emitting their exit plans,
//                        unlinked (exit_vals) and linked (registers, then
//                        the next trace), and the tier-up exit
//   asm_memory.cpp       interpreter Values in memory: tag-guarded loads,
//                        stores with reference counting, list and tensor
//                        elements
//   asm_recursion.cpp    interpreter frames pushed and popped in place
//                        (FPUSH, RETGUARD, FPOP)
//
// The layout of the frame (from rsp after the prologue):
//
//   0         kOutArg    tessera_jit_call's 7th argument (on the stack)
//   8         kResult    tessera_jit_call's result word
//   16..32    kGlobals, kExitVals, kCtx: the trace's arguments 2-4
//   40        kArgs      max_args_ payloads of a helper call, then its tags
//   spill_base_          one 8-byte slot per value (RegAssignment::slot)
#pragma once

#include <asmjit/x86.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "codegen/host/asmjit/linear_scan.h"
#include "codegen/host/asmjit/live_intervals.h"
#include "codegen/host/asmjit/trace_assembler.h"
#include "codegen/host/lowering_env.h"
#include "codegen/host/trace_helpers.h"
#include "tracer/ir_value_tags.h"
#include "vm/core/value.h"

namespace tessera::jit::t1 {

namespace x86 = asmjit::x86;

constexpr int32_t kValueSize = 16;
static_assert(sizeof(Value) == kValueSize);
constexpr uint8_t kFirstObjectTag = static_cast<uint8_t>(Tag::Str);

// r12 holds the base frame's register 0 throughout.
inline const x86::Gp kBase = x86::r12;

// Frame layout, from rsp after the prologue (above).
constexpr int32_t kOutArg = 0;
constexpr int32_t kResult = 8;
constexpr int32_t kGlobals = 16;
constexpr int32_t kExitVals = 24;
constexpr int32_t kCtx = 32;
constexpr int32_t kArgs = 40;

// The registers the linear-scan allocator hands out (asm_emit_x86.cpp).
RegisterSet t1_registers();

struct BinaryRow;  // trace_assembler.cpp
struct Flags;

class TraceAssembler {
 public:
  TraceAssembler(const TraceIR& ir, const LoweringEnv& env, x86::Assembler& a) : ir_(ir), env_(env), a_(a) {}

  AssemblyStats run(const asmjit::Label& native, const asmjit::Label& entry, const asmjit::Label& passed);

 private:
  using Label = asmjit::Label;
  using Operand = asmjit::Operand;

  // --- the main loop and instruction selection (trace_assembler.cpp)
  [[noreturn]] void fail(const std::string& msg) const { throw_at_instruction(ir_, cur_, msg); }
  void find_loop();
  void begin_loop();
  void lower(IRRef r, const IRIns& ins);
  void lower_binary(IRRef r, const IRIns& ins, const BinaryRow& row);
  static bool is_float_op(IROp op);
  void lower_divmod(IRRef r, const IRIns& ins);
  void guard_bool(IRRef cond, bool want, uint16_t snap);
  bool fusable(IRRef cond) const;
  void mark_fused(IRRef r);
  Flags compare_flags(IRRef cond);
  void lower_compare(IRRef r);

  // --- operands, results and moves (asm_emit_x86.cpp)
  void check_ref(IRRef r) const;
  bool is_const(IRRef r) const { return ir_is_const(ir_[r].op); }
  bool in_reg(IRRef r) const { return !is_const(r) && ra_.reg[r] != kNoReg; }
  bool is_float(IRRef r) const { return !is_const(r) ? value_class(ir_[r]) == RegClass::Xmm : ir_[r].op == IROp::KFLOAT; }
  IRType type_of(IRRef r) const { return ir_[r].type; }
  static bool fits_i32(uint64_t v);
  x86::Mem slot_mem(IRRef r) const;
  uint64_t const_bits(IRRef r) const;
  x86::Gp gpr(IRRef r, const x86::Gp& scratch);
  Operand gpr_src(IRRef r, const x86::Gp& scratch);
  x86::Xmm xmm(IRRef r, const x86::Xmm& scratch);
  Operand xmm_src(IRRef r, const x86::Xmm& scratch);
  x86::Gp def_gpr(IRRef r) { return ra_.reg[r] != kNoReg ? x86::gpq(ra_.reg[r]) : x86::r11; }
  x86::Xmm def_xmm(IRRef r) { return ra_.reg[r] != kNoReg ? x86::xmm(ra_.reg[r]) : x86::xmm1; }
  void commit(IRRef r, const x86::Gp& g);
  void commit(IRRef r, const x86::Xmm& x);
  void move_gpr(const x86::Gp& d, IRRef v);
  void move_xmm(const x86::Xmm& d, IRRef v);
  void store_payload(const x86::Mem& dst, IRRef v, const x86::Gp& scratch = x86::rax);
  x86::Mem reg_tag(uint32_t slot) const;
  x86::Mem reg_payload(uint32_t slot) const;
  void test_object_tags(const std::vector<uint32_t>& slots);
  // The back-edge's parallel move of every PHI's next value into its entry
  // value's location.
  struct Loc {
    bool xmm;
    uint8_t reg;  // kNoReg: the stack slot
    uint32_t slot;
    bool operator==(const Loc& o) const { return xmm == o.xmm && reg == o.reg && (reg != kNoReg || slot == o.slot); }
  };
  struct Move {
    Loc dst;
    IRRef src;  // a value or a constant
    bool from_scratch = false;
  };
  Loc loc_of(IRRef r) const;
  void phi_moves();
  void emit_move(const Move& m);
  template <typename Word>
  Label constant_data(const std::vector<Word>& words);
  Label slot_list(const std::vector<uint32_t>& slots);

  // --- the machine frame and helper calls (asm_frame.cpp)
  void emit_entry_wrapper(const Label& native, const Label& entry);
  void layout_frame();
  void emit_prologue(const Label& native, const Label& passed);
  // Where passed value i arrives (trace_abi.h): an int's GPR, a float's XMM.
  static x86::Gp passed_gpr(uint32_t i);
  static x86::Xmm passed_xmm(uint32_t i);
  void emit_return(uint32_t code);
  void leave_frame_to_next_trace();
  template <typename F>
  void for_clobbered_live(uint32_t at, F f);
  void save_live(uint32_t at);
  void restore_live(uint32_t at);
  void load_arg(const x86::Gp& dst, IRRef v);
  void load_float_arg(const x86::Xmm& dst, IRRef v);
  void call_addr(const void* fn);
  void lower_helper_call(IRRef r, const IRIns& ins, const TraceHelper& h);

  // --- exits (asm_exits.cpp)
  void poll_tier_up(bool at_entry);
  bool header_state(std::vector<SnapshotEntry>& out) const;
  Label exit_label(uint16_t snap);
  void jump_to_exit(x86::CondCode cc, uint16_t snap) { a_.j(cc, exit_label(snap)); }
  void emit_exit(uint16_t snap, const Label& l, uint32_t at);
  void write_registers(const ExitPlan& plan, bool defer_passed);
  void write_register(const ExitWrite& w, const ExitPlan& plan);
  void jump_passed(const ExitPlan& plan, uint16_t snap);
  void restore_with_helper(const ExitPlan& plan);
  void save_values(const ExitPlan& plan, bool save);

  // --- Values in memory (asm_memory.cpp)
  void load_guarded(IRRef r, const x86::Gp& base, int32_t disp, IRType t, uint16_t snap);
  void load_typed(IRRef r, const x86::Gp& base, int32_t disp, IRType t);
  // LLOADN: an int or a float as a float, else the exit.
  void load_number(IRRef r, const x86::Gp& base, int32_t disp, uint16_t snap);
  void store_value(const x86::Mem& dst_tag, const x86::Mem& dst_payload, IRRef v);
  void store_slot(uint32_t slot, IRRef v);
  void report_global_store(uint32_t index);
  void element_addr(IRRef list, IRRef index);
  DType tensor_dtype(IRRef tidx);
  x86::Mem tensor_element(IRRef tensor, IRRef tidx);
  void fetch_if_on_device(IRRef tensor);
  void lower_tload(IRRef r, const IRIns& ins);
  void lower_tstore(const IRIns& ins);

  // --- recursion (asm_recursion.cpp)
  const FunctionProto* const_proto(IRRef r);
  void load_frames();
  void set_base_from(const x86::Gp& nb);
  void push_frame(const IRIns& ins);
  void return_guard(const IRIns& ins);
  void pop_frame(IRRef r, const IRIns& ins);

  const TraceIR& ir_;
  const LoweringEnv& env_;
  x86::Assembler& a_;
  TraceLiveness lv_;
  RegAssignment ra_;
  uint32_t preserved_mask_ = 0;
  IRRef loop_ = kNoRef;
  IRRef cur_ = kNoRef;
  Label loop_label_;
  uint32_t max_args_ = 1;
  int32_t tags_off_ = 0, spill_base_ = 0, frame_ = 0;
  std::map<uint16_t, Label> exits_;
  std::deque<ExitPlan> tier_up_plans_;  // emitted inline: no helper keeps their address
  std::deque<std::function<void()>> cold_;  // deque: a cold path may add more while it is emitted
  std::vector<std::pair<Label, std::vector<uint8_t>>> data_;  // constant_data
  std::unordered_set<IRRef> fused_;
  std::unordered_map<uint32_t, uint8_t> slot_tags_;  // base slot -> its tag here, where known
  const FunctionProto* cur_proto_ = nullptr;
  const FunctionProto* returning_to_ = nullptr;
  uint32_t returning_pc_ = 0;  // and the pc it resumes at
};

}  // namespace tessera::jit::t1
