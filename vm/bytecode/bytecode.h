// Bytecode containers: instructions, per-function prototypes, and the module
// (one compiled file). The instruction set itself is opcodes.def.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/core/value.h"

namespace tessera {

enum class Op : uint8_t {
#define OPCODE(name, ...) name,
#include "vm/bytecode/opcodes.def"
#undef OPCODE
  NumOps
};
constexpr int kNumOps = static_cast<int>(Op::NumOps);

enum class OpFormat : uint8_t { ABC, AB, A, ABx, AsBx, sBx, BR };

// What an operand field holds: a register read or written, a range of
// registers read, a count, a literal, a constant or global index, or a jump
// offset (opcodes.def describes each).
enum class OperandRole : uint8_t {
  none, dst, src, src4, srcN, src1N, srcUp, count, imm, konst, global, target
};
// reads_register tests the source roles as one range.
static_assert(OperandRole::src < OperandRole::src4 && OperandRole::src4 < OperandRole::srcN &&
              OperandRole::srcN < OperandRole::src1N && OperandRole::src1N < OperandRole::srcUp &&
              OperandRole::srcUp < OperandRole::count);
// Where execution goes after an instruction (opcodes.def).
enum class OpFlow : uint8_t { next, jump, branch, cmp, ret };

// Operand fields, in the order opcodes.def gives their roles: A, B (the bx
// or sbx field in the formats that have one), C.
constexpr int kNumOperands = 3;

struct OpInfo {
  const char* name;
  OpFormat format;
  OperandRole roles[kNumOperands];
  OpFlow flow;
  const char* description;
};
namespace bytecode_detail {
inline constexpr OpInfo kOpTable[kNumOps] = {
#define OPCODE(name, fmt, a, b, c, flow, desc) \
  {#name, OpFormat::fmt, {OperandRole::a, OperandRole::b, OperandRole::c}, OpFlow::flow, desc},
#include "vm/bytecode/opcodes.def"
#undef OPCODE
};
// An out-of-range opcode is a corrupted instruction: no operands, and no
// known effect (the register analyses treat it as reading everything).
inline constexpr OpInfo kBadOp{"???", OpFormat::A, {}, OpFlow::next, "invalid opcode"};
}  // namespace bytecode_detail

// The static description of opcode `op`, generated from opcodes.def so the
// table can never drift from the instruction set. Clamped rather than read
// past the table, so that a disassembly of bad code cannot crash.
inline const OpInfo& op_info(Op op) {
  return static_cast<int>(op) < kNumOps ? bytecode_detail::kOpTable[static_cast<int>(op)] : bytecode_detail::kBadOp;
}

// A loop's back-edge patched to enter the loop's compiled trace, for each
// loop instruction (FORLOOP, ITERLOOP, LOOP), and the inverse: what the
// back-edge of a loop whose trace is invalidated becomes again, or what a
// second trace of the loop records the patched instruction as.
inline Op entering_op(Op loop_op) {
  switch (loop_op) {
    case Op::FORLOOP: return Op::JFORLOOP;
    case Op::ITERLOOP: return Op::JITERLOOP;
    default: return Op::JLOOP;
  }
}
inline Op back_edge_op(Op entering) {
  switch (entering) {
    case Op::JFORLOOP: return Op::FORLOOP;
    case Op::JITERLOOP: return Op::ITERLOOP;
    case Op::JLOOP: return Op::LOOP;
    default: return entering;
  }
}

// One 64-bit instruction: op:8, flags:8, a:16, then either b:16 c:16 or a
// 32-bit bx/sbx. Jump offsets are relative to the instruction after the jump.
struct Instr {
  Op op;
  uint8_t flags = 0;  // kFlagConstLeft, or 0
  uint16_t a = 0;
  union {
    struct {
      uint16_t b;
      uint16_t c;
    };
    uint32_t bx;
    int32_t sbx;
  };
  Instr() : op(Op::LOADNIL), bx(0) {}
  static Instr abc(Op o, uint16_t a, uint16_t b, uint16_t c) {
    Instr i; i.op = o; i.a = a; i.b = b; i.c = c; return i;
  }
  static Instr abx(Op o, uint16_t a, uint32_t bx) {
    Instr i; i.op = o; i.a = a; i.bx = bx; return i;
  }
  static Instr asbx(Op o, uint16_t a, int32_t sbx) {
    Instr i; i.op = o; i.a = a; i.sbx = sbx; return i;
  }
};
static_assert(sizeof(Instr) == 8, "Instr must stay 8 bytes");

// The value of operand `i` (0: A, 1: B or bx or sbx, 2: C) of `in`, as its
// opcode's format lays the fields out; 0 for a field the format lacks.
inline int64_t operand_value(const Instr& in, int i);
// Whether `in` may read register `reg`, or writes it, by its operand roles
// (an invalid opcode reads every register). Inline: the register liveness of
// snapshots asks them for every instruction it walks.
inline bool reads_register(const Instr& in, uint32_t reg);
inline bool writes_register(const Instr& in, uint32_t reg);

namespace bytecode_detail {

// operand_value with the opcode's format already looked up.
inline int64_t operand_field(const Instr& in, OpFormat f, int i) {
  switch (i) {
    case 0: return f == OpFormat::sBx ? 0 : in.a;
    case 1:
      switch (f) {
        case OpFormat::ABC:
        case OpFormat::AB:
        case OpFormat::BR: return in.b;
        case OpFormat::ABx: return in.bx;
        case OpFormat::AsBx:
        case OpFormat::sBx: return in.sbx;
        case OpFormat::A: return 0;
      }
      return 0;
    case 2: return f == OpFormat::ABC ? in.c : 0;
    default: return 0;
  }
}

// N of the srcN and src1N roles: the value of the count operand.
inline int64_t count_of(const Instr& in, const OpInfo& info) {
  for (int i = 0; i < kNumOperands; ++i)
    if (info.roles[i] == OperandRole::count) return operand_field(in, info.format, i);
  return 0;
}

}  // namespace bytecode_detail

inline int64_t operand_value(const Instr& in, int i) {
  return bytecode_detail::operand_field(in, op_info(in.op).format, i);
}

inline bool reads_register(const Instr& in, uint32_t reg) {
  if (static_cast<int>(in.op) >= kNumOps) return true;
  const OpInfo& info = op_info(in.op);
  const int64_t r = reg;
  for (int i = 0; i < kNumOperands; ++i) {
    const OperandRole role = info.roles[i];
    if (role >= OperandRole::src && role <= OperandRole::srcUp) {  // the source roles, in enum order
      const int64_t x = bytecode_detail::operand_field(in, info.format, i);
      switch (role) {
        case OperandRole::src:
          if (r == x) return true;
          break;
        case OperandRole::src4:
          if (r >= x && r <= x + 3) return true;
          break;
        case OperandRole::srcN:
          if (r >= x && r < x + bytecode_detail::count_of(in, info)) return true;
          break;
        case OperandRole::src1N:
          if (r >= x && r <= x + bytecode_detail::count_of(in, info)) return true;
          break;
        default:  // srcUp
          if (r >= x) return true;
          break;
      }
    }
  }
  return false;
}

namespace bytecode_detail {
// Only operand A is ever a destination register (opcodes.def), which lets
// writes_register look at one field.
constexpr bool dst_only_in_a() {
  for (const OpInfo& info : kOpTable)
    for (int i = 1; i < kNumOperands; ++i)
      if (info.roles[i] == OperandRole::dst) return false;
  return true;
}
static_assert(dst_only_in_a(), "writes_register assumes a dst role only in operand A");
}  // namespace bytecode_detail

inline bool writes_register(const Instr& in, uint32_t reg) {
  const OpInfo& info = op_info(in.op);
  return info.roles[0] == OperandRole::dst && info.format != OpFormat::sBx && in.a == reg;
}

// ADDK/MULK with this flag compute K[C] op R[B] (the constant was written on
// the left). Numbers commute, so only the slow path, which orders operands
// for error messages (e.g. `2 * "a"`), reads the flag.
constexpr uint8_t kFlagConstLeft = 1;

constexpr int kMaxRegisters = 65535;  // a:16; the compiler reports overflow

// A compiled function (or <main>, the top-level code).
struct FunctionProto {
  std::string name;          // "<main>" for the top level
  std::string file;          // the source's name (Module::filename): reports name loops and traces by it
  int nparams = 0;
  int nregs = 0;             // frame size in registers (>= nparams)
  int line = 0;              // line of the `fn` keyword (1 for <main>)
  std::vector<Instr> code;
  std::vector<Value> consts;
  std::vector<int32_t> lines;  // source line of each instruction (same size as code)
  // Source column of each instruction (same size as code): the column of the
  // AST node it was compiled for (an operator, a call's or an index's
  // bracket), where a runtime error's caret points.
  std::vector<int32_t> cols;

  // Hot counters for the JIT: one slot per instruction index, used by
  // loop back-edges (FORLOOP, ITERLOOP, LOOP) and decremented each time the
  // back-edge runs; entry_hotcount counts calls. Sized = code.size() by
  // the compiler's finish step.
  std::vector<uint16_t> hotcounts;
  uint32_t entry_hotcount = 0;
  // Compiled traces entered at patched back-edges (JFORLOOP, JITERLOOP,
  // JLOOP): (instruction index, trace id). Few per function.
  std::vector<std::pair<uint32_t, uint32_t>> loop_traces;
  // The trace entered when the function is called (-1: none yet): a
  // function trace, recorded from pc 0 once entry_hotcount fired.
  int32_t entry_trace = -1;
  // The function has a loop (FORPREP, ITERPREP or LOOP): traces do not
  // inline it (its loops get their own traces); set by the compiler.
  bool has_loops = false;
  // A trace has called the function recursively: traces call it through
  // its function trace (FPUSH) too, rather than inlining it. Set by the JIT.
  bool jit_recursive = false;
  uint32_t trace_at(uint32_t pc) const {
    for (auto& [p, id] : loop_traces)
      if (p == pc) return id;
    return 0;
  }

  // For error messages: pc of a CALL/CALLKW -> the callee's source text when it
  // is a plain name (so `x(1)` on an int says which name), else absent.
  std::vector<std::pair<uint32_t, std::string>> call_names;
  // Names of the registers that hold named locals (for `dis` and the tracer):
  // (register, name, first pc, last pc).
  struct LocalInfo {
    uint16_t reg;
    std::string name;
    uint32_t start_pc, end_pc;
  };
  std::vector<LocalInfo> locals;

  const std::string* call_name_at(uint32_t pc) const {
    for (auto& [p, n] : call_names)
      if (p == pc) return &n;
    return nullptr;
  }
};

// A compiled file. Global slots are numbered in `global_names`; built-ins
// and functions occupy slots too (initialized by the VM at load time).
struct Module {
  std::string filename;
  std::string source;  // the text it was compiled from (VM::compile_source), for error messages
  std::vector<std::unique_ptr<FunctionProto>> functions;  // functions[0] is <main>
  std::vector<std::string> global_names;
  // Initial value of each global slot before <main> runs: a user function
  // (FunctionProto*), a built-in (looked up by name at load time),
  // undefined (a top-level let that has not run yet), or, for a module
  // compiled into a session's namespace (CompileOptions::session), the
  // value the session already holds.
  enum class GlobalInit : uint8_t { Undefined, Function, Builtin, Kept };
  struct GlobalSlot {
    GlobalInit init = GlobalInit::Undefined;
    FunctionProto* function = nullptr;  // for Function
    // A real global (declared by let or fn, a built-in, or defined by the
    // host), not just an unknown name read somewhere: only these may be
    // assigned.
    bool declared = false;
  };
  std::vector<GlobalSlot> global_slots;  // same size as global_names

  FunctionProto* main() const { return functions.front().get(); }
};

}  // namespace tessera
