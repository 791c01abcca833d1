// `tessera-vm dis`: a stable, human-readable listing of a compiled module.
//
// Layout (tests compare it, so changes are deliberate):
//
//   globals:
//     g0  fib  fn
//     g1  print  builtin
//
//   fn fib(n)  params=1 regs=4 consts=1  ; t.tsb:2
//        0     3  JLTK       r0 k0                ; 2
//        1     3  JMP        -> 3
//        ...
//     constants:
//       k0  2
//     locals:
//       r0  n  pc 0..12
//
// Each instruction line is: index, source line, opcode, operands, each
// operand printed by its role in opcodes.def (unused fields not at all). Registers
// print as r3, constants as k3 (value in the trailing comment), globals as g3
// (name in the comment), jump targets as absolute `-> 12`, counts and
// immediates as plain numbers. A call's comment names its callee when that
// is a plain name.
#pragma once

#include <string>

#include "vm/bytecode/bytecode.h"

namespace tessera {

std::string disassemble(const Module& module);
// One function (as in the module listing, without the globals).
std::string disassemble_function(const Module& module, const FunctionProto& fn);
// One instruction's line of the listing without its leading spaces and
// newline ("12     9  MOD  r3 r1 k2 ; 2"), without a module: globals print as
// g3 without their names.
std::string disassemble_instruction(const FunctionProto& fn, uint32_t pc);
// How a constant prints in listings: ints and floats as the language prints
// them (floats always with a '.' or exponent), strings quoted with escapes,
// lists in brackets.
std::string constant_repr(const Value& v);

}  // namespace tessera
