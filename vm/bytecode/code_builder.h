// Instruction emission for one function: the code array, its line table,
// the constant pool, and forward/backward jump labels.
#pragma once

#include <cstdint>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/bytecode/constant_pool.h"

namespace tessera {

// A jump target. Jumps emitted before the label is bound are recorded and
// patched by bind(); jumps emitted after it resolve immediately.
struct Label {
  int64_t target = -1;             // bound pc, or -1
  std::vector<uint32_t> pending;   // pcs of jumps waiting for the target
};

class CodeBuilder {
 public:
  // Every instruction emitted takes the line set here (the source line of
  // the AST node being compiled).
  void set_line(int line) { line_ = line; }
  // Likewise the column (FunctionProto::cols).
  void set_col(int col) { col_ = col; }
  int line() const { return line_; }
  // Line of the most recent instruction (precondition: pc() > 0).
  int last_line() const { return lines_.back(); }

  uint32_t pc() const { return static_cast<uint32_t>(code_.size()); }

  uint32_t emit(Instr i);
  uint32_t emit_abc(Op op, int a, int b, int c) {
    return emit(Instr::abc(op, u16(a), u16(b), u16(c)));
  }
  void set_flags(uint32_t pc, uint8_t flags) { code_[pc].flags = flags; }
  uint32_t emit_abx(Op op, int a, uint32_t bx) { return emit(Instr::abx(op, u16(a), bx)); }
  uint32_t emit_asbx(Op op, int a, int32_t sbx) { return emit(Instr::asbx(op, u16(a), sbx)); }

  // An instruction whose sBx operand is a jump (role `target` in
  // opcodes.def) to `to`.
  uint32_t emit_jump(Op op, int a, Label& to);
  // Binds `l` to the current pc and patches the jumps waiting for it.
  void bind(Label& l);

  ConstantPool& constants() { return consts_; }

  // Moves code, lines, columns, constants and sized hot counters into `proto`.
  void finish(FunctionProto& proto);

 private:
  static uint16_t u16(int x) { return static_cast<uint16_t>(x); }
  void patch(uint32_t at, int64_t target);

  std::vector<Instr> code_;
  std::vector<int32_t> lines_;
  std::vector<int32_t> cols_;
  ConstantPool consts_;
  int line_ = 0;
  int col_ = 0;
};

}  // namespace tessera
