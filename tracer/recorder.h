// TraceRecorder: turns the bytecode the interpreter executes into trace IR.
//
// Recording starts at a hot loop's first body instruction. Before the
// interpreter executes each instruction, record() is called with the live
// register values: it emits typed IR specialized to the types it sees,
// guarded (each guard carries a snapshot to resume the interpreter at that
// instruction), inlines calls of user functions, and closes the trace when
// the loop's back-edge jumps to the start again. Anything it cannot handle
// aborts the recording with a reason (abort_reasons.def).
//
// Slots are absolute: slot 0 is register 0 of the trace's base frame, and
// inlined frames' registers follow in the same register stack. Scalars live
// in SSA values (written back by snapshots at exits); objects are stored
// through to their slots (SSTORE) so that every object is owned.
//
// The recorder's code: recorder.cpp (the per-instruction dispatch, slots,
// guards, arithmetic, loops), record_close.cpp (how a trace ends: links,
// closing a loop, the final reordering), record_call.cpp
// (calls, inlining, returns, frame pushes and pops, helper calls),
// record_index.cpp (list and tensor elements), trace_shapes.h (tensor
// operations typed as Graph IR operations) and snapshot_builder.h (the
// snapshots guards take, and their final form).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tracer/snapshot_builder.h"
#include "tracer/trace_shapes.h"
#include "tracer/trace_ir.h"
#include "vm/bytecode/bytecode.h"
#include "vm/core/operators.h"

namespace tessera::jit {

enum class AbortReason : uint8_t {
#define ABORT_REASON(name, msg) name,
#include "tracer/abort_reasons.def"
#undef ABORT_REASON
  NumReasons
};
constexpr int kNumAbortReasons = static_cast<int>(AbortReason::NumReasons);
const char* abort_reason_message(AbortReason r);
const char* abort_reason_name(AbortReason r);  // the table's NAME, e.g. "NYIBytecode" (the event log's)

// The JIT parameters maxrecord and maxinline (runtime/jit_params.def has
// their defaults); the runtime sets both. And what earlier recordings
// learnt: the globals a trace stored after it had assumed them constant
// (AssumedGlobalStored), which are loaded with a guard from the start.
struct RecorderLimits {
  uint32_t maxrecord = 0;  // IR instructions
  uint32_t maxinline = 0;  // inlined call depth
  std::vector<uint32_t> stored_globals = {};
};

class TraceRecorder {
 public:
  // `root` is the function whose loop is traced; `loop_pc` the index of the
  // loop's hot instruction (FORLOOP, ITERLOOP or LOOP) whose counter fired.
  // Recording starts with the instruction the interpreter runs next: the
  // loop body's first instruction.
  TraceRecorder(FunctionProto* root, uint32_t loop_pc, RecorderLimits limits);

  // A side trace: recording starts at `start_pc` of `root` (where a hot
  // exit resumes the interpreter) and ends, without a LOOP, when execution
  // reaches the entry of a compiled trace in the same frame (a patched
  // back-edge); its final EXIT links to that trace (link_target()).
  // `inlined`: the exit's frames of calls its parent inlined, outermost
  // first (then `start_pc` is in the innermost): the side trace starts
  // inside them, as the parent left them, and returns through them.
  struct SideTrace {};
  TraceRecorder(FunctionProto* root, uint32_t start_pc, RecorderLimits limits, SideTrace,
                const std::vector<SnapshotFrame>& inlined = {});
  bool is_side() const { return side_; }
  // A side trace: the types its parent proved for registers of the start
  // frame at the exit (exit_slot_types.h). Their first loads are not
  // guarded (SLOAD op2 = 2) when the value seen has that type.
  void set_parent_types(std::unordered_map<uint32_t, IRType> types) { parent_types_ = std::move(types); }
  // And the constants it left in registers (exit_slot_constants of `parent`):
  // the first load of one, if it holds that value, is guarded equal to it
  // (the trace may be entered from another exit, or from itself) and the
  // register is the constant from then on.
  void set_parent_constants(const TraceIR& parent, const std::unordered_map<uint32_t, IRRef>& consts);
  // And the values its parent's exit passes in registers instead of writing
  // them (ExitPlan::passed, codegen/host/trace_abi.h): each becomes an SLOAD
  // of mode 3 + reg, recorded first, and the slot is dirty from the start
  // (in snapshot 0 too): every exit of the side trace writes it, as the
  // parent did not. Call before recording anything.
  struct PassedSlot {
    uint32_t slot = 0;
    IRType type = IRType::None;
    uint8_t reg = 0;
  };
  void set_passed_slots(const std::vector<PassedSlot>& passed);

  // A peer of a loop's trace (TraceMonkey's peer trees): a second root loop
  // trace of the same loop, recorded from the first one's entry exit when
  // its entry type guards failed there (the loop runs a phase with other
  // types: an accumulator turned float, a factor that is a float in this
  // pass of an outer loop). It is recorded as the first was, but the loop's
  // back-edge is already patched to enter the first trace; the peer closes
  // its loop there all the same (TraceJit hangs it off that entry exit).
  void set_peer() { peer_ = true; }
  bool is_peer() const { return peer_; }
  // Which of a loop's traces (the first, or a peer) a recording that runs
  // into the loop's patched back-edge at `pc` of `fn` links to, given the
  // registers `R` of that frame: the one whose entry types they have. Unset:
  // the first (FunctionProto::trace_at).
  using LoopTraceChoice = std::function<uint32_t(const FunctionProto& fn, uint32_t pc, const Value* R)>;
  void set_loop_trace_choice(LoopTraceChoice choose) { choose_loop_trace_ = std::move(choose); }

  // A function trace: recording starts at pc 0 of `fn` when its entry got
  // hot. It does not loop: a recursive call ends it by pushing the callee's
  // frame (FPUSH) and linking to the callee's function trace, itself for
  // self-recursion (up-recursion); a return from its base frame pops the
  // frame (FPOP) and recording goes on in the caller (down-recursion).
  // Side traces push, pop and link the same way.
  struct FunctionEntry {};
  TraceRecorder(FunctionProto* fn, RecorderLimits limits, FunctionEntry);
  bool is_function() const { return func_; }

  // Whether the finished trace ends in an EXIT linked to another trace (side
  // traces always; root traces that reached an inner loop's trace or a
  // recursive call), that trace, and the exit's snapshot. kLinkSelf: the
  // trace links to itself (a function trace's self-recursion).
  static constexpr uint32_t kLinkSelf = 0xFFFFFFFFu;
  bool has_link() const { return linked_; }
  uint32_t link_target() const { return link_target_; }
  uint16_t link_snapshot() const { return link_snap_; }

  enum class Status { Continue, Done, Aborted };
  // Called before the interpreter executes `code[pc]` of `fn` in a frame
  // whose register 0 is `stack[frame_base]`. `globals` are the module's
  // global slots.
  Status record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
                const Value* globals);

  // After Done: the finished trace (constants, SLOADs, LOOP, body, PHIs).
  TraceIR take_trace();
  AbortReason abort_reason() const { return abort_; }
  // Where the abort happened and its detail (e.g. which bytecode):
  // "in FUNCTION at line N: detail".
  const std::string& abort_detail() const { return abort_detail_; }
  // After an AssumedGlobalStored abort: the global's index.
  uint32_t stored_assumed_global() const { return stored_assumed_global_; }
  FunctionProto* root() const { return root_; }
  // The back-edge a loop trace closes at; none for function and side traces.
  std::optional<uint32_t> loop_pc() const { return loop_pc_; }
  // Where the compiled trace is entered: the loop body's first instruction.
  uint32_t start_pc() const { return start_pc_; }
  // The function start_pc() is in: root(), or for a side trace that starts
  // in frames its parent inlined, the innermost of them.
  const FunctionProto* start_proto() const { return start_proto_; }
  // Highest absolute slot the trace touches (inlined frames included), so
  // the runtime can make room in the register stack before entering it.
  uint32_t max_slot() const { return max_slot_; }

 private:
  struct Frame {
    FunctionProto* proto;
    uint32_t base;     // absolute slot of register 0
    uint32_t call_pc;  // CALL index in the caller (inlined frames only)
    uint16_t ret_reg;  // caller register that receives the result
  };

  Status abort(AbortReason r, std::string detail = {});
  Status step(FunctionProto* fn, uint32_t pc, const Instr& ins, const Value* R, const Value* G);
  Status close_trace();
  // At the root loop's back-edge: closes the loop (LOOP and PHIs) when each
  // loop-carried slot ends the iteration with the type it started with;
  // else links to the trace's own entry, resuming at `resume_pc` (the body's
  // start). An accumulator that turns from int to float then fails the
  // entry's type guard, and that exit grows a peer loop trace for the new
  // types (set_peer): a loop trace per entry type instead of an abort. A
  // peer that cannot close links to the loop trace that takes the types
  // registers `R` end the iteration with.
  Status close_loop(uint32_t resume_pc, const Value* R);
  bool loop_types_stable() const;

  // Calls and returns (record_call.cpp): CALL at `pc` (inlined, through a
  // function trace, or a built-in), CALLKW (built-ins only) and RET/RETNIL.
  Status record_call(uint32_t pc, const Instr& ins, const Value* R);
  Status record_call_kw(const Instr& ins, const Value* R, const Value* K);
  Status record_return(uint32_t pc, const Instr& ins, const Value* R);
  // Strings (record_string.cpp). `s[i]` of an index in range: SLEN, a
  // bounds guard, SBYTE and SCHAR into `dst` (false: not such an access).
  bool str_index(uint32_t dst, IRRef s, IRRef i, const Value& str, const Value& idx);
  // A character (an SCHAR) compared with a character or a string constant:
  // a comparison of bytes, or a constant (false: not such a comparison).
  bool compare_chars(CmpOp op, IRRef a, IRRef b, IRRef& out);
  // `a OP b` of two strings (values va, vb) where one is a character or a
  // one-byte constant (compare_chars, after a guard on the other's length
  // where it comes from elsewhere), or == and != of a string and a constant
  // of up to 16 bytes (guards on its length and bytes decide it). False:
  // not such a comparison.
  bool compare_strings(CmpOp op, IRRef a, const Value& va, IRRef b, const Value& vb, IRRef& out);
  // A register load holding a string constant of the current function: the
  // constant, behind an identity guard (r is replaced). False: left alone.
  bool constant_in_register(IRRef& r, const Value& v);
  // int(c) of a character that is a digit: its byte less '0', guarded to
  // be a digit (false: not such a call).
  bool char_to_int(uint32_t dst, IRRef c, const Value& v);
  // GETINDEX, SETINDEX, GETINDEXN, SETINDEXN (record_index.cpp).
  Status record_index(uint32_t pc, const Instr& ins, const Value* R);
  // Leave through a final EXIT into trace `target`; without the link the
  // interpreter would resume at `resume_pc` (where the target starts).
  // Makes the trace linear (no LOOP).
  Status link_to(uint32_t target, uint32_t resume_pc);
  // Up-recursion: store every register, push the frame of `callee` called
  // from register `a`, and link to the callee's function trace.
  Status push_frame(FunctionProto* callee, uint32_t a);
  // Before a push from inside inlined frames: store every register and
  // make each inlined frame a real interpreter frame (an FPUSH each,
  // outermost first); the innermost becomes the base frame.
  void make_inlined_frames_real();
  // Store every register the trace holds only as an SSA value, except
  // `keep` (kAllSlots: none kept).
  static constexpr uint32_t kAllSlots = UINT32_MAX;
  void store_dirty_slots(uint32_t keep);
  // Down-recursion, second half (at the first instruction of the caller):
  // guard the return address, pop the frame, continue in the caller.
  void pop_frame(FunctionProto* caller, uint32_t pc, size_t caller_base);
  // The base frame changes to `proto`: the slot state starts afresh.
  void switch_base_frame(FunctionProto* proto);
  // Side traces: first time through this loop instruction? (A second time
  // means the side trace would loop on its own: abort.)
  bool visit_loop(uint32_t pc);
  bool in_loop_body(uint32_t pc) const { return pc >= body_begin_ && pc <= body_end_; }

  // Slot access: reading loads (SLOAD with a type guard) on first use.
  IRRef read(uint32_t reg, const Value* R);
  void write(uint32_t reg, IRRef ref);
  uint32_t abs_slot(uint32_t reg) const { return frames_.back().base + reg; }
  void ensure_slot(uint32_t abs);
  IRRef constant(const Value& v);
  bool holds_constant(const Value& v, IRRef k) const;  // v is the value of constant k
  IRType type_of(IRRef ref) const { return ir_[ref].type; }
  uint16_t snapshot(uint32_t pc);
  void guard(bool expect_true, IRRef cond);  // GUARDT/GUARDF with a snapshot at cur_pc_

  // Emission helpers for the instruction families.
  // `va`, `vb` are the operands' current values (the sign of a ** exponent,
  // the layouts of tensors).
  Status arith(BinOp op, uint32_t dst, IRRef a, IRRef b, const Value& va, const Value& vb);
  // Emits the comparison; `out` is its Bool value (or kNoRef when a helper
  // computes it, in which case the result lands in `dst`).
  Status compare(CmpOp op, IRRef a, IRRef b, IRRef& out);
  // Generic slow path: CALL a runtime helper whose result goes to register
  // `dst`; the reload that types the result is emitted at the next step.
  // `values` (if given) are the arguments' current values: the layouts of
  // tensors among them go into CallTarget::seen. A call of a Graph IR
  // operation is typed (TraceShapes), after guards on its inputs' layouts
  // that exit through the call's snapshot.
  void call_helper(CallTarget target, const std::vector<IRRef>& args, uint32_t dst,
                   const std::vector<const Value*>& values = {});
  IRRef arg_chain(const std::vector<IRRef>& args);
  // A helper called for its effect alone (a generic element store, a list
  // extension): nothing reads its result. Its snapshot is taken before it,
  // so that a helper that raises makes the interpreter redo the instruction.
  void call_effect(CallTarget target, const std::vector<IRRef>& args);
  // One step of a `range` loop's back-edge (FORLOOP/JFORLOOP semantics): the
  // guard that the loop goes on (`more`) or ends, and if it goes on, the
  // counter and the loop variable's next value.
  void for_step(const Instr& ins, const Value* R, bool more);
  // One step of a `for x in list` loop (ITERLOOP/JITERLOOP semantics):
  // `more` says whether the loop goes on (then its variables are written).
  Status iter_step(uint32_t pc, const Instr& ins, const Value* R, bool& more);
  // Raw tensor element access: `n` int indices (registers `idx`...) of the
  // tensor in register `obj`. Returns the TIDX of the element (after the
  // dtype and bounds guards), or kNoRef when the access is not a plain
  // in-range element of a supported dtype (the caller uses the helper).
  IRRef tensor_element(uint32_t obj, const uint32_t* idx, size_t n, const Value* R);

  FunctionProto* root_;
  std::optional<uint32_t> loop_pc_;  // none for function and side traces
  uint32_t start_pc_;
  bool started_inlined_ = false;  // a side trace that starts in frames its parent inlined
  const FunctionProto* start_proto_ = nullptr;
  uint32_t body_begin_, body_end_;  // bytecode range of the loop in the root function
  RecorderLimits limits_;

  TraceIR ir_;
  std::vector<Frame> frames_;   // recorder's view of the frames, root first
  std::vector<IRRef> slots_;    // absolute slot -> current value (kNoRef = not known yet)
  std::vector<IRRef> sloads_;   // absolute slot -> its entry SLOAD (kNoRef if none)
  std::vector<bool> modified_;  // the trace changed the slot (a PHI may carry it)
  std::vector<bool> dirty_;     // the register is stale: exits must write the SSA value back
  size_t base_index_ = 0;       // register-stack index of slot 0
  uint32_t max_slot_ = 0;
  uint32_t cur_pc_ = 0;         // pc of the instruction being recorded
  bool first_ = true;
  int64_t pending_reload_ = -1;  // absolute slot a helper call just wrote
  // The tensor types of the recording (trace_shapes.h), and the Graph IR
  // operation of the helper call just recorded, whose reload its result
  // types.
  TraceShapes shapes_;
  std::shared_ptr<const Region> pending_graph_;
  bool side_ = false;
  bool peer_ = false;  // set_peer
  LoopTraceChoice choose_loop_trace_;
  uint32_t loop_trace_at(const FunctionProto& fn, uint32_t pc, const Value* R) const {
    return choose_loop_trace_ ? choose_loop_trace_(fn, pc, R) : fn.trace_at(pc);
  }
  int64_t trip_hint_ = -1;  // TraceIR::loop_trip_hint
  std::unordered_map<uint32_t, IRType> parent_types_;  // set_parent_types
  std::unordered_map<uint32_t, IRRef> parent_consts_;  // set_parent_constants (refs of ir_)
  bool func_ = false;
  // The trace does not loop (side and function traces, and root traces that
  // link to an inner loop's trace).
  bool linear_ = false;
  // Base frame switches so far (FPUSH/FPOP): slots read after one are loaded
  // where they are used, not hoisted to the trace's entry.
  uint32_t epoch_ = 0;
  SnapshotBuilder snaps_;
  // A return from the base frame waits for the caller's first instruction.
  bool pending_pop_ = false;
  IRRef pop_value_ = kNoRef;
  uint16_t pop_snap_ = 0;
  std::vector<uint32_t> visited_loops_;
  // Globals never assumed constant: those the trace stores, and those
  // earlier recordings stored after assuming them (RecorderLimits).
  std::vector<uint32_t> stored_globals_ = limits_.stored_globals;
  bool linked_ = false;
  uint32_t link_target_ = 0;
  uint16_t link_snap_ = 0;
  AbortReason abort_ = AbortReason::NYIBytecode;
  std::string abort_detail_;
  uint32_t stored_assumed_global_ = 0;
};

}  // namespace tessera::jit
