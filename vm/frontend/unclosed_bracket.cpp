#include "vm/frontend/unclosed_bracket.h"

#include <vector>

#include "vm/core/error.h"
#include "vm/frontend/lexer.h"

namespace tessera {

namespace {

bool earlier(ast::Loc a, ast::Loc b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }

char opener(TokenKind k) {
  switch (k) {
    case TokenKind::LParen: return '(';
    case TokenKind::LBracket: return '[';
    case TokenKind::LBrace: return '{';
    default: return 0;
  }
}

char closer_of(TokenKind k) {
  switch (k) {
    case TokenKind::RParen: return '(';
    case TokenKind::RBracket: return '[';
    case TokenKind::RBrace: return '{';
    default: return 0;
  }
}

}  // namespace

std::optional<UnclosedBracket> find_unclosed_bracket(std::string_view source, ast::Loc before) {
  std::vector<UnclosedBracket> open;
  auto found = [&](bool mismatched) -> std::optional<UnclosedBracket> {
    if (open.empty() || !earlier(open.back().loc, before)) return std::nullopt;
    UnclosedBracket b = open.back();
    b.mismatched = mismatched;
    return b;
  };
  try {
    Lexer lex(source);
    for (;;) {
      const Token t = lex.next();
      if (t.kind == TokenKind::Eof) {
        auto b = found(false);
        if (b) b->error_at_end = !earlier(before, t.loc);
        return b;
      }
      if (char c = opener(t.kind)) {
        open.push_back({c, t.loc, false, false});
      } else if (char c = closer_of(t.kind)) {
        if (open.empty()) return std::nullopt;  // an unmatched closer: the parser's error says it
        if (open.back().bracket != c) return found(true);
        open.pop_back();
      }
    }
  } catch (const SyntaxError&) {
    return std::nullopt;  // the lexer's own error stands
  }
}

}  // namespace tessera
