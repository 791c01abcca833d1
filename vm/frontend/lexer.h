// Lexer for Tessera Script (spec §2): turns source bytes into tokens on demand.
//
// Tokens are produced one at a time by next(), so memory stays proportional
// to the parser's lookahead rather than to the file, and work is linear in
// the input size. The lexer also applies the statement-continuation rules:
// it emits a Newline token only where a newline can end a statement (not
// inside (...) or [...], not after a binary operator, `not`, `=` or a comma),
// and collapses runs of blank lines and comments into one Newline.
// Malformed input raises tessera::SyntaxError at the offending byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vm/frontend/ast.h"

namespace tessera {

enum class TokenKind : uint8_t {
#define TOKEN(name, spelling) name,
#include "vm/frontend/token.def"
};

// The fixed spelling of punctuation and keywords ("+", "while"), or a
// description for variable tokens ("identifier", "newline", "end of file").
const char* token_spelling(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  ast::Loc loc;              // first byte of the token, 1-based
  std::string_view text;     // the token's source bytes (views the source)
  int64_t int_value = 0;     // Int
  double float_value = 0.0;  // Float
  std::string str_value;     // String: contents after escape processing
};

// Whether `word` is one of the language's keywords ("if", "nil", ...),
// which no name may be.
bool is_keyword(std::string_view word);

// How a token is named in "expected X but found Y" messages:
// "'+'", "'while'", "'foo'", "'42'", "string literal", "newline", "end of file".
std::string describe_token(const Token& tok);

class Lexer {
 public:
  // `source` must outlive the lexer and every Token it returns.
  explicit Lexer(std::string_view source);

  // The next token. At the end of input returns Eof, again on every call;
  // Eof's location is just past the last character of the last line.
  Token next();

 private:
  char peek_char(size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }
  bool at_end(size_t ahead = 0) const { return pos_ + ahead >= src_.size(); }
  ast::Loc here() const { return {line_, static_cast<int>(pos_ - line_start_) + 1}; }
  ast::Loc eof_loc() const;

  // Skips spaces, comments and newlines; returns true if a newline was seen.
  bool skip_trivia(ast::Loc& newline_loc);
  bool suppress_newline() const;

  void lex_number(Token& tok);
  void lex_string(Token& tok);
  void lex_word(Token& tok);
  void lex_punct(Token& tok);

  [[noreturn]] void fail(const std::string& msg, ast::Loc loc) const;

  std::string_view src_;
  size_t pos_ = 0;
  size_t line_start_ = 0;  // offset of the first byte of the current line
  int line_ = 1;
  // The last token returned: a newline directly after a continuation token
  // (operator, comma, ...) or after another Newline is not significant.
  TokenKind prev_ = TokenKind::Newline;
  // Open brackets, innermost last: '(' '[' or '{'. Newlines are ignored
  // while the innermost is '(' or '['.
  std::vector<char> brackets_;
};

}  // namespace tessera
