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
const OpInfo& op_info(Op op);

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
int64_t operand_value(const Instr& in, int i);
// Whether `in` may read register `reg`, or writes it, by its operand roles.
bool reads_register(const Instr& in, uint32_t reg);
bool writes_register(const Instr& in, uint32_t reg);

// ADDK/MULK with this flag compute K[C] op R[B] (the constant was written on
// the left). Numbers commute, so only the slow path, which orders operands
// for error messages (e.g. `2 * "a"`), reads the flag.
constexpr uint8_t kFlagConstLeft = 1;

constexpr int kMaxRegisters = 65535;  // a:16; the compiler reports overflow

// A compiled function (or <main>, the top-level code).
struct FunctionProto {
  std::string name;          // "<main>" for the top level
  int nparams = 0;
  int nregs = 0;             // frame size in registers (>= nparams)
  int line = 0;              // line of the `fn` keyword (1 for <main>)
  std::vector<Instr> code;
  std::vector<Value> consts;
  std::vector<int32_t> lines;  // source line of each instruction (same size as code)

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
  std::vector<std::unique_ptr<FunctionProto>> functions;  // functions[0] is <main>
  std::vector<std::string> global_names;
  // Initial value of each global slot before <main> runs: a user function
  // (FunctionProto*), a built-in (looked up by name at load time), or
  // undefined (a top-level let that has not run yet).
  enum class GlobalInit : uint8_t { Undefined, Function, Builtin };
  struct GlobalSlot {
    GlobalInit init = GlobalInit::Undefined;
    FunctionProto* function = nullptr;  // for Function
  };
  std::vector<GlobalSlot> global_slots;  // same size as global_names

  FunctionProto* main() const { return functions.front().get(); }
};

}  // namespace tessera
