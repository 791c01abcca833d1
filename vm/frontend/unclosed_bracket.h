// Finds the bracket a syntax error most likely comes from: one that is never
// closed. The parser meets an unclosed `(`, `[` or `{` only later, often
// lines later (the lexer joins lines inside brackets), and reports the
// token it stopped at; as Python does, parse() then reports the bracket
// where it was opened ("'[' was never closed").
#pragma once

#include <optional>
#include <string_view>

#include "vm/frontend/ast.h"

namespace tessera {

struct UnclosedBracket {
  char bracket;  // '(', '[' or '{'
  ast::Loc loc;
  // A closing bracket of another kind came while it was the innermost open
  // one (else it is still open at the end of the file).
  bool mismatched = false;
  // `before` (the error) is at the end of the file: the parser ran into it.
  bool error_at_end = false;
};

// Matches the brackets of `source` token by token: the innermost bracket
// still open at the end of the file, or open when a closing bracket of
// another kind arrives, if it was opened before `before`. nullopt when every
// bracket before `before` is closed, or when `source` does not lex.
std::optional<UnclosedBracket> find_unclosed_bracket(std::string_view source, ast::Loc before);

}  // namespace tessera
