// Trace IR: the typed, linear SSA form of one recorded trace.
//
// One array holds constants and instructions alike (a reference is an index
// into it); the opcode set is tracer/ir.def. Guards carry the index of the
// snapshot (tracer/snapshot.h) that rebuilds the interpreter state when they
// fail. The text form (print_ir / parse_ir) round-trips exactly, so tests
// and optimizer passes are written as IR in / IR out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tracer/snapshot.h"
#include "vm/core/operators.h"
#include "vm/core/value.h"

namespace tessera {
class Region;  // vm/graph/region.h
}  // namespace tessera

namespace tessera::jit {

enum class IROp : uint8_t {
#define IROP(name, mode, op1, op2, space, access, flags, t1, t2, tres, helper, desc) name,
#include "tracer/ir.def"
#undef IROP
  NumOps
};
constexpr int kNumIROps = static_cast<int>(IROp::NumOps);

// Mode flags of ir.def.
enum IRMode : uint8_t { G = 1, S = 2, C = 4, K = 8, N = 0 };
enum class OperandKind : uint8_t { none, ref, lit, cst };
// The memory an instruction touches, and how (ir.def's SPACE and ACCESS).
enum class IRMemSpace : uint8_t { None, Slot, Global, ListLength, ListElement, TensorElement };
enum class IRMemAccess : uint8_t { None, Load, Address, Store };

// Result types. Pointer types refer to interpreter objects.
enum class IRType : uint8_t { None, Nil, Bool, Int, Float, Str, List, Tensor, Func, Builtin, DType };
const char* ir_type_name(IRType t);  // "int", "flt", "bool", ... (the text form's spelling)
constexpr int kNumIRTypes = static_cast<int>(IRType::DType) + 1;

// A type column of ir.def (T1, T2, TRES): the set of IRTypes allowed, one
// bit per type; `same`: the type of op1 (and a value). `name` is the
// column's word, for messages.
struct IRTypeRule {
  uint16_t allowed;
  bool same;
  const char* name;
  constexpr bool allows(IRType t) const { return (allowed >> static_cast<int>(t)) & 1u; }
  constexpr bool unchecked() const { return !same && allowed == (1u << kNumIRTypes) - 1; }
};

// ir.def's HELPER column: the C helper an opcode's instruction calls
// (codegen/host/trace_helpers.h has each one's address and signature).
enum class IRHelper : uint8_t { none, int_pow, float_floordiv, float_mod, float_pow, float_math, list_push, call, str_lt, str_le };

// Everything ir.def says about an opcode. Passes and backends ask this
// table instead of keeping lists of opcodes of their own.
struct IROpInfo {
  const char* name;
  uint8_t mode;
  OperandKind op1, op2;
  IRMemSpace mem_space;
  IRMemAccess mem_access;
  bool commutative;      // op1 and op2 may be swapped
  bool may_trap;         // not to be run ahead of the guards before it (not hoisted)
  bool raises;           // may leave through its snapshot although not a guard
  bool clobbers_memory;  // may change any memory a load reads
  bool calls_helper;     // the backends call a C helper for it (FMATH: but sqrt)
  bool peelable;         // loop peeling may copy it
  bool moves_base;       // another frame becomes the base: slot numbers name other registers after it
  IRTypeRule op1_type, op2_type, result_type;
  IRHelper helper;
  const char* description;
};
const IROpInfo& ir_op_info(IROp op);
inline bool ir_is_guard(IROp op) { return ir_op_info(op).mode & G; }
inline bool ir_has_side_effect(IROp op) { return ir_op_info(op).mode & S; }
inline bool ir_is_cse(IROp op) { return ir_op_info(op).mode & C; }
inline bool ir_is_const(IROp op) { return ir_op_info(op).mode & K; }
// Whether an instruction of this opcode may leave the trace through a
// snapshot: guards, and instructions that raise (a helper's error).
inline bool ir_may_exit(IROp op) { return ir_is_guard(op) || ir_op_info(op).raises; }
// ir.def's type column of operand k (0: op1, 1: op2).
inline const IRTypeRule& ir_operand_type(IROp op, int k) {
  return k == 0 ? ir_op_info(op).op1_type : ir_op_info(op).op2_type;
}

// Operand 2 of FMATH: which unary math function of a float, one row of
// tracer/float_math.def each. The names are the built-ins' names (the
// recorder turns sqrt(x) of a number into FMATH).
enum class FloatMath : uint32_t {
#define FLOATMATH(Name, fn, t1, t2, impl) Name,
#include "tracer/float_math.def"
#undef FLOATMATH
  NumFns
};
const char* float_math_name(FloatMath f);
// The FloatMath called `name`, or NumFns when there is none.
FloatMath float_math_by_name(std::string_view name);


using IRRef = uint32_t;
constexpr IRRef kNoRef = 0xFFFFFFFFu;
constexpr uint16_t kNoSnap = 0xFFFFu;

// IRIns::flags. kMixedRow: an LLOAD of a float element of a list the
// recorder saw holding ints beside it (a row of mixed numbers, whose next
// element may be the other type): NumberLoadPass may make it a number load,
// where a float row's load stays one tag check. Text form: `mixed` after the
// operands.
constexpr uint8_t kMixedRow = 1;

struct IRIns {
  IROp op;
  IRType type;
  uint16_t snap = kNoSnap;  // guards: the snapshot to exit through
  uint32_t op1 = 0;
  uint32_t op2 = 0;
  uint8_t flags = 0;  // kMixedRow; kept by every rebuild (emit_renumbered)
  // Where it came from: an index into TraceIR::origins() (the bytecode the
  // recorder was at when it emitted it), kept by every rebuild; kNoOrigin:
  // made by a pass.
  uint16_t origin = 0xFFFF;
};
static_assert(sizeof(IRIns) == 16, "IRIns stays 16 bytes: origin fits the padding");
constexpr uint16_t kNoOrigin = 0xFFFF;

// The bytecode an IR instruction was recorded from (TraceIR::origins).
struct InsOrigin {
  const FunctionProto* proto;
  uint32_t pc;
};

// Values a linked exit may pass to its side trace in registers
// (codegen/host/trace_abi.h): at most this many ints and floats.
constexpr uint32_t kPassedInts = 3;
constexpr uint32_t kPassedFloats = 2;
constexpr uint32_t kPassedValues = kPassedInts + kPassedFloats;

// SLOAD's modes (its op2; ir.def says what each does).
constexpr uint32_t kSloadEntry = 0;        // the entry value, type guarded
constexpr uint32_t kSloadReload = 1;       // after a CALL wrote the slot
constexpr uint32_t kSloadParentTyped = 2;  // the type the parent proved: no guard
constexpr uint32_t kSloadPassed = 3;       // 3 + i: passed value i (codegen/host/trace_abi.h)
// Whether SLOAD `in` takes its value from its parent exit's passed
// registers (when entered by them), and which one.
inline bool sload_passed(const IRIns& in) { return in.op == IROp::SLOAD && in.op2 >= kSloadPassed; }
inline uint32_t sload_passed_reg(const IRIns& in) { return in.op2 - kSloadPassed; }
// Whether SLOAD `in` has no type guard (parent-typed or passed).
inline bool sload_unguarded(const IRIns& in) { return in.op == IROp::SLOAD && in.op2 >= kSloadParentTyped; }

// The dtype and shape of a sunk tensor (VNEWTENSOR op2 indexes the trace's
// table of them). Its elements, row-major, are the VNEWTENSOR's CARG chain.
struct VirtualTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const;
  bool operator==(const VirtualTensor&) const = default;
};

// A call target of CALL: what the backend calls and how its result is typed.
// A call's target, one struct per kind with only what that kind needs.
namespace call {
// A built-in function, called with (VM& as BuiltinContext&, CallArgs).
struct Builtin {
  const BuiltinDef* def = nullptr;  // null in IR parsed from text without the VM's table
};
// Generic value arithmetic (strings, lists, tensors, errors).
struct Arith {
  BinOp op = BinOp::Add;
};
// A generic comparison; returns Bool.
struct Compare {
  CmpOp op = CmpOp::Eq;
};
// Generic obj[i, ...]; the arguments are the object and the indices.
struct IndexGet {
  uint8_t nidx = 0;  // the indices the recorder saw (kept for the text form)
};
// Generic obj[i, ...] = v; the arguments are the object, the indices and v.
struct IndexSet {
  uint8_t nidx = 0;  // as IndexGet
};
// A built-in with keyword arguments: the last `nkw` arguments are their values.
struct BuiltinKw {
  const BuiltinDef* def = nullptr;
  uint8_t nkw = 0;
  const void* names = nullptr;  // the ListObj of keyword names (a bytecode constant), for the runtime
  // The keyword names as text (`kw=` in the text form), which the optimizer reads.
  std::vector<std::string> kw = {};
};
struct NewList {};     // a new list of the arguments
struct Negate {};      // generic -x (a tensor: elementwise)
struct ListExtend {};  // append the arguments after the first to the first (a list)
// The Graph IR operations of `region` as one kernel (optimizer/fusion.h): the
// arguments are the region's inputs, the result its output. The call site's
// runtime state lives in the VM's kernel runtime (runtime/kernels/kernel_runtime.h).
struct Kernel {
  std::shared_ptr<const Region> region = {};
};
}  // namespace call

struct CallTarget {
  // The kind is the index of the alternative in What: keep both in one order.
  enum class Kind : uint8_t { Builtin, Arith, Compare, IndexGet, IndexSet, BuiltinKw, NewList, Negate, ListExtend, Kernel };
  using What = std::variant<call::Builtin, call::Arith, call::Compare, call::IndexGet, call::IndexSet, call::BuiltinKw,
                            call::NewList, call::Negate, call::ListExtend, call::Kernel>;
  static constexpr int kNumKinds = static_cast<int>(std::variant_size_v<What>);

  What what;
  std::string name;  // for the text form and dumps ("sqrt", "arith.+")
  // Object results: the interpreter slot that owns the result (the helper
  // stores it there, refcounted, before the trace uses the pointer); -1 when
  // the result is a scalar or there is none.
  int32_t dest_slot = -1;
  // Profile for the optimizer: per argument, the dtype and shape it had
  // while recording if it was a tensor, else none; empty when no argument
  // was. Tensor sinking may guard small layouts to compute the call's result
  // element by element (optimizer/tensor_sink.h); fusion types its regions
  // with them (optimizer/fusion.h).
  std::vector<std::optional<VirtualTensor>> seen = {};
  // A recorded call of a Graph IR operation (tracer/trace_shapes.h), of any
  // kind the tracer types (built-ins, operators): the operation as a one-op
  // region, its dims the trace's symbols as they were when it was recorded;
  // printed after the CALL line like a kernel's region.
  std::shared_ptr<const Region> graph = {};

  Kind kind() const { return static_cast<Kind>(what.index()); }
  // A kernel call's region; null for the other kinds.
  const Region* kernel_region() const {
    const call::Kernel* k = std::get_if<call::Kernel>(&what);
    return k ? k->region.get() : nullptr;
  }
  template <class T>
  bool is() const {
    return std::holds_alternative<T>(what);
  }
  // The kind's fields; throws std::logic_error when the call is of another kind.
  template <class T>
  const T& as() const {
    if (const T* k = std::get_if<T>(&what)) return *k;
    throw std::logic_error("call target '" + name + "' is not of the kind asked for");
  }
  template <class T>
  T& as() {
    return const_cast<T&>(std::as_const(*this).as<T>());
  }
};

template <CallTarget::Kind K, class T>
constexpr bool kCallKindIs = std::is_same_v<std::variant_alternative_t<static_cast<size_t>(K), CallTarget::What>, T>;
static_assert(kCallKindIs<CallTarget::Kind::Builtin, call::Builtin> && kCallKindIs<CallTarget::Kind::Arith, call::Arith> &&
                  kCallKindIs<CallTarget::Kind::Compare, call::Compare> &&
                  kCallKindIs<CallTarget::Kind::IndexGet, call::IndexGet> &&
                  kCallKindIs<CallTarget::Kind::IndexSet, call::IndexSet> &&
                  kCallKindIs<CallTarget::Kind::BuiltinKw, call::BuiltinKw> &&
                  kCallKindIs<CallTarget::Kind::NewList, call::NewList> &&
                  kCallKindIs<CallTarget::Kind::Negate, call::Negate> &&
                  kCallKindIs<CallTarget::Kind::ListExtend, call::ListExtend> &&
                  kCallKindIs<CallTarget::Kind::Kernel, call::Kernel> &&
                  static_cast<int>(CallTarget::Kind::Kernel) + 1 == CallTarget::kNumKinds,
              "CallTarget::Kind names the alternatives of CallTarget::What in order");


// Whether `op` is an allocation the optimizer sank (VNEWLIST, VNEWTENSOR):
// no code runs for it; exits whose snapshots name it build the object.
inline bool ir_is_sunk_allocation(IROp op) { return op == IROp::VNEWLIST || op == IROp::VNEWTENSOR; }

class TraceIR;

// The arguments of a CALL (or the elements of a VNEWLIST) in order: the
// leaves of the CARG chain `chain` (kNoRef: none). Throws
// std::invalid_argument on a reference out of range.
std::vector<IRRef> carg_list(const TraceIR& ir, IRRef chain);

class TraceIR {
 public:
  // Emits an instruction (constants go through the k* helpers, which
  // deduplicate). Returns its reference.
  IRRef emit(IROp op, IRType type, uint32_t op1 = 0, uint32_t op2 = 0, uint16_t snap = kNoSnap);
  // The bytecode the instructions emitted from now on come from (the
  // recorder sets it before each bytecode instruction it records); a table
  // of them, indexed by IRIns::origin. Past 65534 origins, none.
  void set_origin(const FunctionProto* proto, uint32_t pc);
  const std::vector<InsOrigin>& origins() const { return origins_; }
  void copy_origins_from(const TraceIR& from) { origins_ = from.origins_; }
  const InsOrigin* origin_of(IRRef r) const {
    return ins_[r].origin < origins_.size() ? &origins_[ins_[r].origin] : nullptr;
  }
  IRRef knil();
  IRRef kbool(bool b);
  IRRef kint(int64_t v);
  // A dtype: a KINT of type DType, whose payload (the dtype's number) is
  // what a dtype value carries in a register.
  IRRef kdtype(DType d);
  // `an_int`: v is the float of an int constant (a folded CONV), which the
  // interpreter still holds as an int: a constant apart from kfloat(v), its
  // op2 = 1, which a number load may not meet (optimizer/number_load.h). It
  // prints as `KFLOAT 3 int`.
  IRRef kfloat(double v, bool an_int = false);
  // Whether r is the float of an int constant.
  bool is_converted_int(IRRef r) const { return ins_[r].op == IROp::KFLOAT && ins_[r].op2 == kConvertedInt; }
  static constexpr uint32_t kConvertedInt = 1;
  IRRef kobj(const void* p, IRType type);
  // What a KOBJ constant's object is, for people (a function's or a
  // built-in's name, a string's text): the text form prints it after the
  // pointer as a `-- ` comment, and reads it back from there. Set by whoever
  // holds the live object (the recorder); nothing dereferences the pointer
  // later, when the object may be gone.
  void describe_const(const void* p, std::string what) { const_what_[reinterpret_cast<uintptr_t>(p)] = std::move(what); }
  // Adds `from`'s descriptions (those of constants it dropped too: an
  // assumed global's value may no longer be a constant of the trace).
  void copy_descriptions_from(const TraceIR& from);
  const std::string* const_description(const void* p) const {
    auto it = const_what_.find(reinterpret_cast<uintptr_t>(p));
    return it == const_what_.end() ? nullptr : &it->second;
  }

  const IRIns& operator[](IRRef r) const { return ins_[r]; }
  IRIns& operator[](IRRef r) { return ins_[r]; }
  size_t size() const { return ins_.size(); }
  const std::vector<IRIns>& instructions() const { return ins_; }

  // The constant pool (KINT/KFLOAT/KOBJ op1 index into it); const_int
  // reads a KINT of either type.
  int64_t const_int(IRRef r) const;
  double const_float(IRRef r) const;
  const void* const_ptr(IRRef r) const;
  const std::vector<uint64_t>& const_pool() const { return consts_; }

  std::vector<Snapshot>& snapshots() { return snaps_; }
  const std::vector<Snapshot>& snapshots() const { return snaps_; }
  std::vector<CallTarget>& calls() { return calls_; }
  const std::vector<CallTarget>& calls() const { return calls_; }
  // Globals the trace assumed constant (functions it calls through them,
  // dtypes it passes), with the value assumed: a store into one of them
  // invalidates the trace.
  struct GlobalAssumption {
    uint32_t index;
    const void* value;  // assumption_of the value the global held
  };
  // What an assumption records of global value g: the FunctionProto* or
  // BuiltinDef*, a dtype's number + 1; nullptr for a value no trace
  // assumes constant.
  static const void* assumption_of(const Value& g);
  std::vector<GlobalAssumption>& assumed_globals() { return assumed_; }
  const std::vector<GlobalAssumption>& assumed_globals() const { return assumed_; }
  // The layouts of the trace's sunk tensors (VNEWTENSOR op2).
  std::vector<VirtualTensor>& virtual_tensors() { return vtensors_; }
  const std::vector<VirtualTensor>& virtual_tensors() const { return vtensors_; }

  // Index of the LOOP instruction, or kNoRef for a trace that does not loop.
  IRRef loop_ref() const;
  // Whether an instruction after LOOP may change any memory a load reads
  // (ir.def's clob: helper calls, pushes, frame pushes and pops). Where none
  // does, a list's length and storage pointer read before LOOP hold for the
  // whole loop: only those helpers resize a list. False without a LOOP.
  bool loop_body_clobbers_memory() const;

  // The function the trace starts in (its snapshots' base frame where
  // Snapshot::base_proto is null); set by the recorder, null in IR built or
  // parsed by hand. Passes that ask which registers are live use it.
  const FunctionProto* function() const { return function_; }
  void set_function(const FunctionProto* f) { function_ = f; }

  // Takes `from`'s tables and annotations (calls, assumed globals, virtual
  // tensors, function, trip hint, header snapshot, constants' descriptions,
  // origins): what a pass that rebuilds the
  // instructions and snapshots keeps unchanged.
  void copy_tables_from(const TraceIR& from);

  // A FORLOOP trace: the iterations its loop still had to run when it was
  // recorded (a profile hint: loop predication skips loops that looked
  // short); -1 when unknown (other traces, IR built or parsed by hand).
  int64_t loop_trip_hint() const { return loop_trip_hint_; }
  void set_loop_trip_hint(int64_t n) { loop_trip_hint_ = n; }

  // A peeled loop (LoopPeelPass): the snapshot of its state at the loop
  // header, each carried slot naming its PHI's first operand, which holds
  // the carried value at the back-edge; what T1's tier-up exit writes there.
  // Used by no guard; kNoSnap when there is none. `HEADER #n` in the text.
  uint16_t header_snapshot() const { return header_snap_; }
  void set_header_snapshot(uint16_t s) { header_snap_ = s; }

 private:
  std::vector<IRIns> ins_;
  std::vector<uint64_t> consts_;
  std::unordered_map<uintptr_t, std::string> const_what_;  // describe_const
  std::vector<InsOrigin> origins_;
  uint16_t cur_origin_ = kNoOrigin;
  std::vector<Snapshot> snaps_;
  std::vector<CallTarget> calls_;
  std::vector<GlobalAssumption> assumed_;
  std::vector<VirtualTensor> vtensors_;
  const FunctionProto* function_ = nullptr;
  int64_t loop_trip_hint_ = -1;
  uint16_t header_snap_ = kNoSnap;
  // Constant deduplication: (op, type, payload bits, op2) -> ref. A hit is
  // re-checked against ins_, since operator[] lets callers rewrite entries.
  struct ConstKey {
    uint64_t bits;
    IROp op;
    IRType type;
    uint32_t op2;
    bool operator==(const ConstKey&) const = default;
  };
  struct ConstKeyHash {
    size_t operator()(const ConstKey& k) const {
      return std::hash<uint64_t>()(k.bits) ^ (size_t(k.op) << 48) ^ (size_t(k.type) << 56) ^ (size_t(k.op2) << 40);
    }
  };
  std::unordered_map<ConstKey, IRRef, ConstKeyHash> kmap_;
  IRRef intern_const(IROp op, IRType type, uint64_t bits, bool pooled, uint32_t op2 = 0);
};

// Throws std::runtime_error with `msg`, prefixed by the instruction it is
// about ("instruction 0012 (SLOAD): ..."), when `at` names one. Backends and
// exit planning report malformed IR this way.
[[noreturn]] void throw_at_instruction(const TraceIR& ir, IRRef at, const std::string& msg);

// Whether `ir` takes passed values (an SLOAD of mode 3 + i): its code then
// has a second entry point, which takes them in registers (trace_abi.h).
bool takes_passed_values(const TraceIR& ir);

// Text form, one instruction per line (`>` marks guards, `#N` the snapshot):
//   0007    int  ADD    0005  0006
//   0003    flt  KFLOAT 2.5
//   0009 >  none GUARDT 0008  #2
// followed by the snapshots and the call table:
//   SNAP #2 ir=0009 pc=17 frames=[f@4/12] [0=0005 4=0003]
//   CALL #0 builtin 0 sqrt 0x55d0c0ffee00
//   ASSUME global=3 value=0x55d0c0ffee40
//   VTENSOR #0 f32 [2, 3]
// print_ir(parse_ir(text)) == text for every printed trace.
std::string print_ir(const TraceIR& ir);
// Maps a snapshot frame's function name back to its proto (the text form
// names functions; without a resolver parsed frames keep a null proto).
using ProtoResolver = std::function<FunctionProto*(std::string_view)>;
// Throws std::invalid_argument with "line N: message" on malformed text.
TraceIR parse_ir(std::string_view text, const ProtoResolver& resolve = {});

}  // namespace tessera::jit
