// Parser for Tessera Script (spec §2, §4, §5): source text to ast::Program.
//
// Besides the grammar, the parser enforces the context rules that need no
// name resolution: `fn` only at top level, `break`/`continue` only in loops,
// `return` only in functions, unique parameter and keyword-argument names,
// `range(...)` arity in `for`, and a nesting limit (kMaxNesting) so that every
// later recursive walk over the AST has bounded depth.
// Every error is a tessera::SyntaxError pointing at the offending token, or
// at the bracket that was never closed when the error lies inside it.
#pragma once

#include <string>
#include <string_view>

#include "vm/frontend/ast.h"

namespace tessera {

// Deepest allowed nesting: of expressions (each operator, call, index,
// parenthesis or list bracket is one level, so a left-associative chain
// `1+1+...` of N terms is N-1 levels) and, separately, of `{ }` blocks.
inline constexpr int kMaxNesting = 256;

// Parses a whole file. `filename` is stored in Program::filename only.
ast::Program parse(const std::string& filename, std::string_view source);

}  // namespace tessera
