// Helpers shared by the compiler tests: compile source text and look at the
// result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/bytecode/compiler.h"

namespace tessera::test {

// Compiles `src` (parsed as "t.tsb") with a small fixed set of built-ins:
// print, len, zeros, f32, sum, assert.
std::unique_ptr<Module> compile_src(const std::string& src);

// The function named `name` (e.g. "<main>"); fails the test if absent.
const FunctionProto& fn(const Module& m, const std::string& name);

// The instruction listing of one function, one "OP operands" string per
// instruction, taken from the disassembler without index/line/comment.
std::vector<std::string> ops(const Module& m, const std::string& name);

// Opcode names only.
std::vector<std::string> opnames(const Module& m, const std::string& name);

}  // namespace tessera::test
