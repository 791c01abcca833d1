// The bytecode compiler: turns a parsed program (vm/frontend/ast.h) into a
// Module of register-bytecode functions (vm/bytecode/bytecode.h).
//
// Name resolution happens here too: an assignment to a name that is neither a
// visible local nor a global is reported as a SyntaxError before anything
// runs (spec §5).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "vm/bytecode/bytecode.h"
#include "vm/frontend/ast.h"

namespace tessera {

struct CompileOptions {
  // Names of the built-in globals (print, len, f32, zeros, ...). May be empty
  // (no built-ins).
  std::function<bool(std::string_view)> is_builtin;
  // A session's module so far (an embedding VM runs many sources in one
  // namespace): its global slots keep their numbers, names and declared
  // flags, start as GlobalInit::Kept, and the new module's globals are
  // numbered after them. Null: a fresh namespace.
  const Module* session = nullptr;
};

// Compiles a whole file. functions[0] is <main>; then one function per `fn`
// in source order. Throws SyntaxError (vm/core/error.h) on name errors or a
// function too large for the instruction encoding.
std::unique_ptr<Module> compile(const ast::Program& prog, const CompileOptions& opts);

}  // namespace tessera
