// Tests of the Tessera Script lexer: token kinds, literal forms and their
// errors, newline significance, locations, and big inputs. (How fast the
// lexer is, and that it stays linear, is measured by the micro-benchmark
// experiments/micro/lexer_bench.cpp, not asserted here.)
#include "vm/frontend/lexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "vm/core/error.h"

namespace tessera {
namespace {

using K = TokenKind;

std::vector<Token> lex_all(std::string_view src) {
  Lexer lx(src);
  std::vector<Token> out;
  for (;;) {
    out.push_back(lx.next());
    if (out.back().kind == K::Eof) return out;
  }
}

std::vector<K> kinds(std::string_view src) {
  std::vector<K> out;
  for (const Token& t : lex_all(src)) out.push_back(t.kind);
  return out;
}

// Lexes `src` to the end and checks it fails with exactly this error.
::testing::AssertionResult LexError(std::string_view src, const std::string& msg, int line,
                                    int col) {
  try {
    lex_all(src);
  } catch (const SyntaxError& e) {
    if (e.what() == msg && e.line == line && e.col == col) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << e.line << ":" << e.col << ": " << e.what();
  }
  return ::testing::AssertionFailure() << "no error";
}

Token single(std::string_view src) {
  auto toks = lex_all(src);
  EXPECT_EQ(toks.size(), 2u) << src;
  EXPECT_EQ(toks.back().kind, K::Eof);
  return toks.front();
}

TEST(Lexer, EveryPunctuatorAlone) {
  struct P {
    K kind;
    const char* spelling;
  };
  const P all[] = {
#define PUNCT(name, spelling) {K::name, spelling},
#include "vm/frontend/token.def"
  };
  EXPECT_EQ(std::size(all), 29u);
  for (const P& p : all) {
    Token t = single(p.spelling);
    EXPECT_EQ(t.kind, p.kind) << p.spelling;
    EXPECT_EQ(t.text, p.spelling);
    EXPECT_STREQ(token_spelling(p.kind), p.spelling);
  }
}

TEST(Lexer, EveryKeyword) {
  struct P {
    K kind;
    const char* spelling;
  };
  const P all[] = {
#define KEYWORD(name, spelling) {K::name, spelling},
#include "vm/frontend/token.def"
  };
  EXPECT_EQ(std::size(all), 17u);
  for (const P& p : all) {
    EXPECT_EQ(single(p.spelling).kind, p.kind) << p.spelling;
    // A keyword followed by more identifier characters is an identifier.
    EXPECT_EQ(single(std::string(p.spelling) + "_").kind, K::Ident);
    EXPECT_EQ(single(std::string(p.spelling) + "1").kind, K::Ident);
    EXPECT_EQ(single(std::string("x") + p.spelling).kind, K::Ident);
  }
  EXPECT_EQ(single("If").kind, K::Ident);  // keywords are case-sensitive
  EXPECT_EQ(single("NIL").kind, K::Ident);
}

TEST(Lexer, Identifiers) {
  for (const char* s : {"x", "_", "_x1", "abc_DEF_123", "range", "print", "f32", "L"}) {
    Token t = single(s);
    EXPECT_EQ(t.kind, K::Ident) << s;
    EXPECT_EQ(t.text, s);
  }
  std::string longname(5000, 'a');
  EXPECT_EQ(single(longname).text.size(), 5000u);
}

TEST(Lexer, LongestMatch) {
  EXPECT_EQ(kinds("a//=b"), (std::vector<K>{K::Ident, K::SlashSlashAssign, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a///b"), (std::vector<K>{K::Ident, K::SlashSlash, K::Slash, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a***b"), (std::vector<K>{K::Ident, K::StarStar, K::Star, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a**=b"), (std::vector<K>{K::Ident, K::StarStar, K::Assign, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a===b"), (std::vector<K>{K::Ident, K::EqEq, K::Assign, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a<==b"), (std::vector<K>{K::Ident, K::LessEq, K::Assign, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a--b"), (std::vector<K>{K::Ident, K::Minus, K::Minus, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("1-1"), (std::vector<K>{K::Int, K::Minus, K::Int, K::Eof}));
  EXPECT_EQ(kinds("!=="), (std::vector<K>{K::NotEq, K::Assign, K::Eof}));
}

TEST(Lexer, IntegerLiterals) {
  struct C {
    const char* src;
    int64_t value;
  };
  for (const C& c : {C{"0", 0}, C{"42", 42}, C{"007", 7}, C{"1_000_000", 1000000},
                     C{"0x1F", 31}, C{"0X1f", 31}, C{"0xdead_BEEF", 0xdeadbeef},
                     C{"9223372036854775807", INT64_MAX}, C{"0x7fffffffffffffff", INT64_MAX},
                     C{"9_223_372_036_854_775_807", INT64_MAX}, C{"0x0", 0}}) {
    Token t = single(c.src);
    EXPECT_EQ(t.kind, K::Int) << c.src;
    EXPECT_EQ(t.int_value, c.value) << c.src;
    EXPECT_EQ(t.text, c.src);
  }
}

TEST(Lexer, IntegerLiteralErrors) {
  EXPECT_TRUE(LexError("x = 9223372036854775808", "integer literal too large", 1, 5));
  EXPECT_TRUE(LexError("99999999999999999999999", "integer literal too large", 1, 1));
  EXPECT_TRUE(LexError("0x8000000000000000", "integer literal too large", 1, 1));
  EXPECT_TRUE(LexError("0xffffffffffffffffffff", "integer literal too large", 1, 1));
  EXPECT_TRUE(LexError(" 0x", "expected hex digits after '0x'", 1, 2));
  EXPECT_TRUE(LexError("0x;", "expected hex digits after '0x'", 1, 1));
  EXPECT_TRUE(LexError("0x_1", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("0x1_", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("1__0", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("1_", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("a 1_ b", "invalid underscore in numeric literal", 1, 3));
  EXPECT_TRUE(LexError("0xfg", "invalid character 'g' in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("12abc", "invalid character 'a' in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("0b101", "invalid character 'b' in numeric literal", 1, 1));
}

TEST(Lexer, FloatLiterals) {
  struct C {
    const char* src;
    double value;
  };
  for (const C& c : {C{"1.5", 1.5}, C{"2.", 2.0}, C{".5", 0.5}, C{"1e-3", 1e-3},
                     C{"3.0e8", 3.0e8}, C{"1E3", 1000.0}, C{"1e+2", 100.0}, C{"1.e2", 100.0},
                     C{"1_0.5", 10.5}, C{"1.2_5", 1.25}, C{"1e1_0", 1e10}, C{"0.1", 0.1},
                     C{"0.30000000000000004", 0.30000000000000004}, C{"00.5", 0.5},
                     C{"1e-999", 0.0}, C{"2.2250738585072014e-308", 2.2250738585072014e-308}}) {
    Token t = single(c.src);
    EXPECT_EQ(t.kind, K::Float) << c.src;
    EXPECT_EQ(t.float_value, c.value) << c.src;  // exact: strtod rounds correctly
  }
  Token inf = single("1e999");
  EXPECT_EQ(inf.kind, K::Float);
  EXPECT_TRUE(std::isinf(inf.float_value));
  // A float has no 64-bit limit.
  EXPECT_EQ(single("99999999999999999999.0").kind, K::Float);
}

TEST(Lexer, FloatLiteralErrors) {
  EXPECT_TRUE(LexError("1e", "exponent has no digits", 1, 1));
  EXPECT_TRUE(LexError("x = 1.5e+", "exponent has no digits", 1, 5));
  EXPECT_TRUE(LexError("2.E-x", "exponent has no digits", 1, 1));
  EXPECT_TRUE(LexError("1e_5", "exponent has no digits", 1, 1));
  EXPECT_TRUE(LexError("1_.5", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("1.5_", "invalid underscore in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("1._5", "invalid character '_' in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("1.5x", "invalid character 'x' in numeric literal", 1, 1));
  EXPECT_TRUE(LexError("._5", "unexpected character '.'", 1, 1));
}

TEST(Lexer, DotSequences) {
  // Without attribute access, "1..2" is two floats (a parse error later).
  EXPECT_EQ(kinds("1..2"), (std::vector<K>{K::Float, K::Float, K::Eof}));
  EXPECT_EQ(kinds("0x1F.5"), (std::vector<K>{K::Int, K::Float, K::Eof}));
  EXPECT_TRUE(LexError("a.b", "unexpected character '.'", 1, 2));
}

TEST(Lexer, StringLiterals) {
  EXPECT_EQ(single(R"("")").str_value, "");
  EXPECT_EQ(single(R"("hello world")").str_value, "hello world");
  EXPECT_EQ(single(R"("a\nb\tc\rd\"e\\f")").str_value, "a\nb\tc\rd\"e\\f");
  EXPECT_EQ(single(R"("x\0y")").str_value, std::string("x\0y", 3));
  EXPECT_EQ(single("\"caf\xc3\xa9 \xff\x01\"").str_value, "caf\xc3\xa9 \xff\x01");
  EXPECT_EQ(single("\"# not a comment\"").str_value, "# not a comment");
  EXPECT_EQ(single("\"a\rb\"").str_value, "a\rb");  // a lone CR is an ordinary byte
  Token t = single(R"("a\"b")");
  EXPECT_EQ(t.kind, K::String);
  EXPECT_EQ(t.text, R"("a\"b")");
}

TEST(Lexer, StringLiteralErrors) {
  EXPECT_TRUE(LexError(R"(x = "ab\q")", "invalid escape sequence '\\q'", 1, 8));
  EXPECT_TRUE(LexError(R"("\x41")", "invalid escape sequence '\\x'", 1, 2));
  EXPECT_TRUE(LexError(R"("\')", "invalid escape sequence '\\''", 1, 2));
  EXPECT_TRUE(LexError("\"\\\xc3\"", "invalid escape sequence '\\\\xc3'", 1, 2));
  EXPECT_TRUE(LexError("x = \"abc", "unterminated string literal", 1, 5));
  EXPECT_TRUE(LexError("x = \"abc\ny\"", "unterminated string literal", 1, 5));
  EXPECT_TRUE(LexError("\n  \"abc\r\n\"", "unterminated string literal", 2, 3));
  EXPECT_TRUE(LexError("\"abc\\", "unterminated string literal", 1, 1));
  EXPECT_TRUE(LexError("\"abc\\\n\"", "unterminated string literal", 1, 1));
  EXPECT_TRUE(LexError(std::string_view("\"ab\0c\"", 6), "unexpected character '\\x00'", 1, 4));
}

TEST(Lexer, Comments) {
  EXPECT_EQ(kinds("# only a comment"), (std::vector<K>{K::Eof}));
  EXPECT_EQ(kinds("a # comment \xc3\xa9 \xff \"\n b"),
            (std::vector<K>{K::Ident, K::Newline, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a #c1\n# c2\n\n   # c3\nb"),
            (std::vector<K>{K::Ident, K::Newline, K::Ident, K::Eof}));
  EXPECT_TRUE(LexError(std::string_view("a # x\0y\n", 8), "unexpected character '\\x00'", 1, 6));
}

TEST(Lexer, UnexpectedCharacters) {
  EXPECT_TRUE(LexError("a $ b", "unexpected character '$'", 1, 3));
  EXPECT_TRUE(LexError("!a", "unexpected character '!'", 1, 1));
  EXPECT_TRUE(LexError("x.y", "unexpected character '.'", 1, 2));
  EXPECT_TRUE(LexError("'s'", "unexpected character '''", 1, 1));
  EXPECT_TRUE(LexError("a\n  `", "unexpected character '`'", 2, 3));
  EXPECT_TRUE(LexError("a ? b : c", "unexpected character '?'", 1, 3));
  EXPECT_TRUE(LexError("a & b", "unexpected character '&'", 1, 3));
  EXPECT_TRUE(LexError(std::string_view("x\0", 2), "unexpected character '\\x00'", 1, 2));
  EXPECT_TRUE(LexError("caf\xc3\xa9", "unexpected character '\\xc3'", 1, 4));
  EXPECT_TRUE(LexError("\x01", "unexpected character '\\x01'", 1, 1));
  EXPECT_TRUE(LexError("\x7f", "unexpected character '\\x7f'", 1, 1));
  EXPECT_TRUE(LexError("a\fb", "unexpected character '\\x0c'", 1, 2));
  EXPECT_TRUE(LexError("\xef\xbb\xbfx", "unexpected character '\\xef'", 1, 1));
}

TEST(Lexer, NewlinesEndStatements) {
  EXPECT_EQ(kinds("a\nb"), (std::vector<K>{K::Ident, K::Newline, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a\n\n\n   \n\tb\n"),
            (std::vector<K>{K::Ident, K::Newline, K::Ident, K::Newline, K::Eof}));
  EXPECT_EQ(kinds("\n\n a"), (std::vector<K>{K::Ident, K::Eof}));  // no leading Newline
  EXPECT_EQ(kinds("a\r\nb"), (std::vector<K>{K::Ident, K::Newline, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a\rb"), (std::vector<K>{K::Ident, K::Ident, K::Eof}));
  EXPECT_EQ(kinds("a;b"), (std::vector<K>{K::Ident, K::Semicolon, K::Ident, K::Eof}));
  // Inside braces newlines stay significant, also within parentheses.
  EXPECT_EQ(kinds("{\na\n}"),
            (std::vector<K>{K::LBrace, K::Newline, K::Ident, K::Newline, K::RBrace, K::Eof}));
  EXPECT_EQ(kinds("({\na"), (std::vector<K>{K::LParen, K::LBrace, K::Newline, K::Ident, K::Eof}));
  // After ')' closes, newlines count again.
  EXPECT_EQ(kinds("(\n)\na"),
            (std::vector<K>{K::LParen, K::RParen, K::Newline, K::Ident, K::Eof}));
  // Unbalanced closers must not underflow.
  EXPECT_EQ(kinds(")\n]\n}\na"), (std::vector<K>{K::RParen, K::Newline, K::RBracket, K::Newline,
                                                 K::RBrace, K::Newline, K::Ident, K::Eof}));
}

TEST(Lexer, NewlinesInsideBracketsAreIgnored) {
  EXPECT_EQ(kinds("(a\n,\nb\n)"),
            (std::vector<K>{K::LParen, K::Ident, K::Comma, K::Ident, K::RParen, K::Eof}));
  EXPECT_EQ(kinds("[\n1\n]"), (std::vector<K>{K::LBracket, K::Int, K::RBracket, K::Eof}));
  EXPECT_EQ(kinds("f(a[\n1\n]\n)"),
            (std::vector<K>{K::Ident, K::LParen, K::Ident, K::LBracket, K::Int, K::RBracket,
                            K::RParen, K::Eof}));
}

TEST(Lexer, NewlineAfterContinuationTokens) {
  const char* ops[] = {",", "+", "-", "*", "/", "//", "%", "**", "@", "==", "!=", "<", "<=", ">",
                       ">=", "=", "+=", "-=", "*=", "/=", "//=", "%=", "and", "or", "not"};
  for (const char* op : ops) {
    std::string src = std::string("a ") + op + " # comment\n\n b";
    auto ks = kinds(src);
    ASSERT_EQ(ks.size(), 4u) << src;
    EXPECT_EQ(ks[2], K::Ident) << src;
  }
  // ...but not after operands or closing brackets.
  for (const char* end : {"a", "1", "1.5", "\"s\"", ")", "]", "}", "true", "nil", "break"}) {
    std::string src = std::string(end) + "\nb";
    auto ks = kinds(src);
    EXPECT_EQ(ks[ks.size() - 3], K::Newline) << src;
  }
}

TEST(Lexer, Locations) {
  auto toks = lex_all("let x = 1\n\tfoo(\"s\")  # c\r\n  [2]");
  struct Want {
    K kind;
    int line, col;
  };
  const Want want[] = {{K::KwLet, 1, 1}, {K::Ident, 1, 5},   {K::Assign, 1, 7},
                       {K::Int, 1, 9},   {K::Newline, 1, 10}, {K::Ident, 2, 2},
                       {K::LParen, 2, 5}, {K::String, 2, 6},  {K::RParen, 2, 9},
                       {K::Newline, 2, 15}, {K::LBracket, 3, 3}, {K::Int, 3, 4},
                       {K::RBracket, 3, 5}, {K::Eof, 3, 6}};
  ASSERT_EQ(toks.size(), std::size(want));
  for (size_t i = 0; i < toks.size(); ++i) {
    EXPECT_EQ(toks[i].kind, want[i].kind) << i;
    EXPECT_EQ(toks[i].loc.line, want[i].line) << i;
    EXPECT_EQ(toks[i].loc.col, want[i].col) << i;
  }
}

TEST(Lexer, EofLocationIsOnTheLastLine) {
  auto eof = [](std::string_view src) { return lex_all(src).back().loc; };
  EXPECT_EQ(eof("").line, 1);
  EXPECT_EQ(eof("").col, 1);
  EXPECT_EQ(eof("abc").col, 4);
  EXPECT_EQ(eof("abc\n").line, 1);
  EXPECT_EQ(eof("abc\n").col, 4);
  EXPECT_EQ(eof("ab\r\n").col, 3);
  EXPECT_EQ(eof("a\nbc\n").line, 2);
  EXPECT_EQ(eof("a\nbc\n").col, 3);
  EXPECT_EQ(eof("a\n\n").line, 2);
  EXPECT_EQ(eof("a\n\n").col, 1);
  EXPECT_EQ(eof("a # c").col, 6);
}

TEST(Lexer, EofRepeats) {
  Lexer lx("x");
  EXPECT_EQ(lx.next().kind, K::Ident);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(lx.next().kind, K::Eof);
}

TEST(Lexer, DescribeToken) {
  auto first = [](std::string_view src) { return describe_token(lex_all(src).front()); };
  EXPECT_EQ(first("+="), "'+='");
  EXPECT_EQ(first("while"), "'while'");
  EXPECT_EQ(first("foo"), "'foo'");
  EXPECT_EQ(first("42"), "'42'");
  EXPECT_EQ(first("1.5"), "'1.5'");
  EXPECT_EQ(first("\"abc\""), "string literal");
  EXPECT_EQ(first(""), "end of file");
  EXPECT_EQ(first(std::string(100, 'z')), "'" + std::string(32, 'z') + "...'");
  Token nl;
  nl.kind = K::Newline;
  EXPECT_EQ(describe_token(nl), "newline");
}

TEST(Lexer, HugeInputsLexCompletely) {
  std::string src;
  const std::string line = "x = foo(1_000, 2.5, \"str\") + y[3] # comment\n";
  while (src.size() < 20'000'000) src += line;
  Lexer lx(src);
  size_t n = 0;
  Token last;
  for (Token t = lx.next(); t.kind != K::Eof; t = lx.next()) {
    last = t;
    ++n;
  }
  EXPECT_EQ(n, (src.size() / line.size()) * 16);
  // Locations still count lines right at the end of 20 MB.
  EXPECT_EQ(last.kind, K::Newline);
  EXPECT_EQ(last.loc.line, static_cast<int>(src.size() / line.size()));

  std::string big_string = "\"" + std::string(10'000'000, 'a') + "\"";
  EXPECT_EQ(single(big_string).str_value.size(), 10'000'000u);
  std::string big_comment = "#" + std::string(10'000'000, '\xff') + "\nx";
  EXPECT_EQ(kinds(big_comment), (std::vector<K>{K::Ident, K::Eof}));
  std::string blank_lines(10'000'000, '\n');
  EXPECT_EQ(kinds(blank_lines + "x" + blank_lines),
            (std::vector<K>{K::Ident, K::Newline, K::Eof}));
}

}  // namespace
}  // namespace tessera
