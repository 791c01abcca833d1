#include "vm/frontend/lexer.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "vm/core/error.h"

namespace tessera {

namespace {

constexpr std::array kSpellings = {
#define TOKEN(name, spelling) spelling,
#include "vm/frontend/token.def"
};

struct Keyword {
  std::string_view spelling;
  TokenKind kind;
};
constexpr std::array kKeywords = {
#define KEYWORD(name, spelling) Keyword{spelling, TokenKind::name},
#include "vm/frontend/token.def"
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

// A byte as it appears in a message: itself if printable ASCII, else \xNN.
std::string byte_repr(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", u);
  return buf;
}

// Tokens after which a newline does not end the statement (spec §2: after a
// binary operator or a comma; `=`-style operators and `not` also need an
// operand, so a line break there is plainly a continuation).
bool continues_line(TokenKind k) {
  switch (k) {
    case TokenKind::Comma:
    case TokenKind::Plus: case TokenKind::Minus: case TokenKind::Star:
    case TokenKind::Slash: case TokenKind::SlashSlash: case TokenKind::Percent:
    case TokenKind::StarStar: case TokenKind::At:
    case TokenKind::EqEq: case TokenKind::NotEq: case TokenKind::Less:
    case TokenKind::LessEq: case TokenKind::Greater: case TokenKind::GreaterEq:
    case TokenKind::Assign: case TokenKind::PlusAssign: case TokenKind::MinusAssign:
    case TokenKind::StarAssign: case TokenKind::SlashAssign:
    case TokenKind::SlashSlashAssign: case TokenKind::PercentAssign:
    case TokenKind::KwAnd: case TokenKind::KwOr: case TokenKind::KwNot:
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* token_spelling(TokenKind kind) {
  return kSpellings[static_cast<size_t>(kind)];
}

std::string describe_token(const Token& tok) {
  switch (tok.kind) {
    case TokenKind::Eof:
    case TokenKind::Newline:
    case TokenKind::String:
      return token_spelling(tok.kind);
    case TokenKind::Ident:
    case TokenKind::Int:
    case TokenKind::Float: {
      // Long names are cut so that one message stays one readable line.
      constexpr size_t kMax = 32;
      if (tok.text.size() > kMax) return "'" + std::string(tok.text.substr(0, kMax)) + "...'";
      return "'" + std::string(tok.text) + "'";
    }
    default:
      return std::string("'") + token_spelling(tok.kind) + "'";
  }
}

Lexer::Lexer(std::string_view source) : src_(source) {}

void Lexer::fail(const std::string& msg, ast::Loc loc) const {
  throw SyntaxError(msg, loc.line, loc.col);
}

ast::Loc Lexer::eof_loc() const {
  // Point just past the last line's text rather than at an empty line after
  // the final newline, so "unexpected end of file" names a line that exists.
  size_t end = src_.size();
  if (end == 0) return {1, 1};
  int line = line_;  // at EOF, line_ is the number of '\n' plus one
  if (src_[end - 1] == '\n') {
    --end;
    --line;
    if (end > 0 && src_[end - 1] == '\r') --end;
  }
  size_t nl = src_.substr(0, end).rfind('\n');
  size_t start = nl == std::string_view::npos ? 0 : nl + 1;
  return {line, static_cast<int>(end - start) + 1};
}

bool Lexer::skip_trivia(ast::Loc& newline_loc) {
  bool saw_newline = false;
  while (!at_end()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t') {
      ++pos_;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && peek_char(1) != '\n') {  // a lone CR is just blank space
        ++pos_;
        continue;
      }
      if (!saw_newline) newline_loc = here();
      saw_newline = true;
      pos_ += c == '\r' ? 2 : 1;
      ++line_;
      line_start_ = pos_;
    } else if (c == '#') {
      // Stop before "\r\n" too, so the newline is located at its '\r'.
      while (!at_end() && src_[pos_] != '\n' && !(src_[pos_] == '\r' && peek_char(1) == '\n')) {
        if (src_[pos_] == '\0') fail("unexpected character '\\x00'", here());
        ++pos_;
      }
    } else {
      break;
    }
  }
  return saw_newline;
}

bool Lexer::suppress_newline() const {
  if (prev_ == TokenKind::Newline || continues_line(prev_)) return true;
  return !brackets_.empty() && brackets_.back() != '{';
}

Token Lexer::next() {
  Token tok;
  ast::Loc newline_loc;
  if (skip_trivia(newline_loc) && !suppress_newline()) {
    tok.kind = TokenKind::Newline;
    tok.loc = newline_loc;
    tok.text = "\n";
    prev_ = tok.kind;
    return tok;
  }
  if (at_end()) {
    tok.kind = TokenKind::Eof;
    tok.loc = eof_loc();
    prev_ = tok.kind;
    return tok;
  }
  size_t start = pos_;
  tok.loc = here();
  char c = src_[pos_];
  if (is_digit(c) || (c == '.' && is_digit(peek_char(1)))) {
    lex_number(tok);
  } else if (c == '"') {
    lex_string(tok);
  } else if (is_ident_start(c)) {
    lex_word(tok);
  } else {
    lex_punct(tok);
  }
  tok.text = src_.substr(start, pos_ - start);
  prev_ = tok.kind;
  return tok;
}

void Lexer::lex_number(Token& tok) {
  const ast::Loc loc = tok.loc;
  if (src_[pos_] == '0' && (peek_char(1) == 'x' || peek_char(1) == 'X')) {
    pos_ += 2;
    uint64_t value = 0;
    bool any = false, too_large = false;
    while (!at_end()) {
      char c = src_[pos_];
      if (is_hex_digit(c)) {
        int d = hex_value(c);
        if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 16)
          too_large = true;
        else
          value = value * 16 + d;
        any = true;
      } else if (c == '_') {
        // Underscores only separate digits: never first, last or doubled.
        if (!any || !is_hex_digit(src_[pos_ - 1]) || !is_hex_digit(peek_char(1)))
          fail("invalid underscore in numeric literal", loc);
      } else {
        break;
      }
      ++pos_;
    }
    if (!any) fail("expected hex digits after '0x'", loc);
    if (!at_end() && is_ident_char(src_[pos_]))
      fail("invalid character '" + byte_repr(src_[pos_]) + "' in numeric literal", loc);
    if (too_large) fail("integer literal too large", loc);
    tok.kind = TokenKind::Int;
    tok.int_value = static_cast<int64_t>(value);
    return;
  }

  // Decimal: collect the digits without underscores, then convert.
  std::string clean;
  auto scan_digits = [&] {
    while (!at_end()) {
      char c = src_[pos_];
      if (is_digit(c)) {
        clean += c;
      } else if (c == '_') {
        if (!is_digit(src_[pos_ - 1]) || !is_digit(peek_char(1)))
          fail("invalid underscore in numeric literal", loc);
      } else {
        break;
      }
      ++pos_;
    }
  };
  bool is_float = false;
  if (src_[pos_] != '.') scan_digits();
  if (peek_char() == '.' && !at_end()) {
    is_float = true;
    clean += '.';
    ++pos_;
    if (is_digit(peek_char()) && !at_end()) scan_digits();
  }
  if (!at_end() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    is_float = true;
    clean += 'e';
    ++pos_;
    if (!at_end() && (src_[pos_] == '+' || src_[pos_] == '-')) clean += src_[pos_++];
    if (at_end() || !is_digit(src_[pos_])) fail("exponent has no digits", loc);
    scan_digits();
  }
  if (!at_end() && is_ident_char(src_[pos_]))
    fail("invalid character '" + byte_repr(src_[pos_]) + "' in numeric literal", loc);

  if (is_float) {
    // strtod rounds correctly and turns overflow into inf (as Python does for
    // 1e999). The VM never calls setlocale, so '.' is the decimal point.
    tok.kind = TokenKind::Float;
    tok.float_value = std::strtod(clean.c_str(), nullptr);
    return;
  }
  uint64_t value = 0;
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (char c : clean) {
    int d = c - '0';
    if (value > (kMax - d) / 10) fail("integer literal too large", loc);
    value = value * 10 + d;
  }
  tok.kind = TokenKind::Int;
  tok.int_value = static_cast<int64_t>(value);
}

void Lexer::lex_string(Token& tok) {
  const ast::Loc open = tok.loc;
  ++pos_;  // opening quote
  std::string out;
  for (;;) {
    if (at_end()) fail("unterminated string literal", open);
    char c = src_[pos_];
    if (c == '"') {
      ++pos_;
      break;
    }
    if (c == '\n' || (c == '\r' && peek_char(1) == '\n'))
      fail("unterminated string literal", open);
    if (c == '\0') fail("unexpected character '\\x00'", here());
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    ast::Loc esc = here();
    if (at_end(1) || peek_char(1) == '\n' || (peek_char(1) == '\r' && peek_char(2) == '\n'))
      fail("unterminated string literal", open);
    char e = peek_char(1);
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '0': out += '\0'; break;
      default: fail("invalid escape sequence '\\" + byte_repr(e) + "'", esc);
    }
    pos_ += 2;
  }
  tok.kind = TokenKind::String;
  tok.str_value = std::move(out);
}

namespace {

// The keyword `word` is, or Ident.
TokenKind keyword_kind(std::string_view word) {
  if (word.size() <= 8)  // no keyword is longer than "continue"
    for (const Keyword& kw : kKeywords)
      if (kw.spelling == word) return kw.kind;
  return TokenKind::Ident;
}

}  // namespace

bool is_keyword(std::string_view word) { return keyword_kind(word) != TokenKind::Ident; }

void Lexer::lex_word(Token& tok) {
  size_t start = pos_;
  while (!at_end() && is_ident_char(src_[pos_])) ++pos_;
  tok.kind = keyword_kind(src_.substr(start, pos_ - start));
}

void Lexer::lex_punct(Token& tok) {
  char c = src_[pos_];
  char c1 = peek_char(1);
  char c2 = peek_char(2);
  // Longest match first: "//=" before "//" before "/=" before "/".
  auto set = [&](TokenKind kind, size_t len) {
    tok.kind = kind;
    pos_ += len;
  };
  switch (c) {
    case '(': set(TokenKind::LParen, 1); brackets_.push_back('('); break;
    case '[': set(TokenKind::LBracket, 1); brackets_.push_back('['); break;
    case '{': set(TokenKind::LBrace, 1); brackets_.push_back('{'); break;
    case ')': set(TokenKind::RParen, 1); if (!brackets_.empty()) brackets_.pop_back(); break;
    case ']': set(TokenKind::RBracket, 1); if (!brackets_.empty()) brackets_.pop_back(); break;
    case '}': set(TokenKind::RBrace, 1); if (!brackets_.empty()) brackets_.pop_back(); break;
    case ',': set(TokenKind::Comma, 1); break;
    case ';': set(TokenKind::Semicolon, 1); break;
    case '@': set(TokenKind::At, 1); break;
    case '+': c1 == '=' ? set(TokenKind::PlusAssign, 2) : set(TokenKind::Plus, 1); break;
    case '-': c1 == '=' ? set(TokenKind::MinusAssign, 2) : set(TokenKind::Minus, 1); break;
    case '%': c1 == '=' ? set(TokenKind::PercentAssign, 2) : set(TokenKind::Percent, 1); break;
    case '*':
      if (c1 == '*') set(TokenKind::StarStar, 2);
      else if (c1 == '=') set(TokenKind::StarAssign, 2);
      else set(TokenKind::Star, 1);
      break;
    case '/':
      if (c1 == '/' && c2 == '=') set(TokenKind::SlashSlashAssign, 3);
      else if (c1 == '/') set(TokenKind::SlashSlash, 2);
      else if (c1 == '=') set(TokenKind::SlashAssign, 2);
      else set(TokenKind::Slash, 1);
      break;
    case '=': c1 == '=' ? set(TokenKind::EqEq, 2) : set(TokenKind::Assign, 1); break;
    case '<': c1 == '=' ? set(TokenKind::LessEq, 2) : set(TokenKind::Less, 1); break;
    case '>': c1 == '=' ? set(TokenKind::GreaterEq, 2) : set(TokenKind::Greater, 1); break;
    case '!':
      if (c1 == '=') {
        set(TokenKind::NotEq, 2);
        break;
      }
      [[fallthrough]];
    default:
      fail("unexpected character '" + byte_repr(c) + "'", tok.loc);
  }
}

}  // namespace tessera
