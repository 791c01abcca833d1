// Tests of the Tessera Script parser: precedence, statement forms, newline
// rules, context checks, error messages with locations, the nesting limit,
// large inputs, and robustness against garbage and truncated programs.
#include "vm/frontend/parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "vm/core/error.h"
#include "vm/frontend/ast_dump.h"

namespace tessera {
namespace {

std::string P(std::string_view src) { return ast::dump(parse("t.tsb", src)); }

// Parses `src` and checks it fails with exactly this message and location.
::testing::AssertionResult ParseError(std::string_view src, const std::string& msg, int line,
                                      int col) {
  try {
    parse("t.tsb", src);
  } catch (const SyntaxError& e) {
    if (e.what() == msg && e.line == line && e.col == col) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "got " << e.line << ":" << e.col << ": " << e.what() << "\n  for: " << src;
  }
  return ::testing::AssertionFailure() << "no error for: " << src;
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// ------------------------------------------------------------------ expressions

TEST(Parser, Literals) {
  EXPECT_EQ(P("nil; true; false"), "nil\ntrue\nfalse");
  EXPECT_EQ(P("42; 0x10; 1_000"), "42\n16\n1000");
  EXPECT_EQ(P("1.5; 2.; .5; 1e-3; 3.0e8; 1e999"), "1.5\n2.0\n0.5\n0.001\n3e+08\ninf");
  EXPECT_EQ(P(R"("a\n\"b\"\\")"), R"("a\n\"b\"\\")");
  EXPECT_EQ(P("x; _y"), "x\n_y");
  EXPECT_EQ(P("[]; [1]; [1, 2,]; [[1], [2, [3]]]"),
            "(list)\n(list 1)\n(list 1 2)\n(list (list 1) (list 2 (list 3)))");
  // Negative literals are unary minus applied to a literal.
  EXPECT_EQ(P("-5"), "(neg 5)");
  EXPECT_EQ(P("-9223372036854775807"), "(neg 9223372036854775807)");
}

TEST(Parser, Precedence) {
  struct C {
    const char* src;
    const char* dump;
  };
  const C cases[] = {
      {"1 + 2 * 3", "(+ 1 (* 2 3))"},
      {"1 * 2 + 3", "(+ (* 1 2) 3)"},
      {"1 - 2 - 3", "(- (- 1 2) 3)"},
      {"a / b / c", "(/ (/ a b) c)"},
      {"a // b % c / d * e @ f", "(@ (* (/ (% (// a b) c) d) e) f)"},
      {"a @ b + c", "(+ (@ a b) c)"},
      {"(1 + 2) * 3", "(* (+ 1 2) 3)"},
      {"-2 ** 2", "(neg (** 2 2))"},
      {"2 ** 3 ** 2", "(** 2 (** 3 2))"},
      {"2 ** -1", "(** 2 (neg 1))"},
      {"2 ** - - 1", "(** 2 (neg (neg 1)))"},
      {"a ** -b ** c", "(** a (neg (** b c)))"},
      {"(-2) ** 2", "(** (neg 2) 2)"},
      {"-a * b", "(* (neg a) b)"},
      {"- - x", "(neg (neg x))"},
      {"-f(x) ** 2", "(neg (** (call f x) 2))"},
      {"a[0] ** b[1]", "(** (index a 0) (index b 1))"},
      {"not a == b", "(not (== a b))"},
      {"not not a", "(not (not a))"},
      {"not a and b", "(and (not a) b)"},
      {"a and not b", "(and a (not b))"},
      {"a and b or c", "(or (and a b) c)"},
      {"a or b and c", "(or a (and b c))"},
      {"a or b or c", "(or (or a b) c)"},
      {"a and b and c", "(and (and a b) c)"},
      {"a < b + c", "(< a (+ b c))"},
      {"a + b == c * d", "(== (+ a b) (* c d))"},
      {"a != b", "(!= a b)"},
      {"a <= b", "(<= a b)"},
      {"a > b", "(> a b)"},
      {"a >= b", "(>= a b)"},
      {"a == b and c != d", "(and (== a b) (!= c d))"},
      {"(a < b) < c", "(< (< a b) c)"},
      {"a < (b < c)", "(< a (< b c))"},
      {"-x == -y", "(== (neg x) (neg y))"},
  };
  for (const C& c : cases) EXPECT_EQ(P(c.src), c.dump) << c.src;
}

TEST(Parser, Postfix) {
  EXPECT_EQ(P("f()"), "(call f)");
  EXPECT_EQ(P("f(a, b,)"), "(call f a b)");
  EXPECT_EQ(P("f(x)[0](y)"), "(call (index (call f x) 0) y)");
  EXPECT_EQ(P("a[i, j]"), "(index a i j)");
  EXPECT_EQ(P("a[i][j]"), "(index (index a i) j)");
  EXPECT_EQ(P("a[i, j,]"), "(index a i j)");
  EXPECT_EQ(P("f(a, b, k=1, m=x + 1)"), "(call f a b (kw k 1) (kw m (+ x 1)))");
  EXPECT_EQ(P("f(k=1)"), "(call f (kw k 1))");
  EXPECT_EQ(P("f(x == 1)"), "(call f (== x 1))");
  EXPECT_EQ(P("f(g(h(1)))"), "(call f (call g (call h 1)))");
  EXPECT_EQ(P("[1, 2][0]"), "(index (list 1 2) 0)");
  EXPECT_EQ(P("\"abc\"[1]"), "(index \"abc\" 1)");
  EXPECT_EQ(P("(f)(x)"), "(call f x)");
  EXPECT_EQ(P("f(\n  a,\n  k = 2,\n)"), "(call f a (kw k 2))");
}

TEST(Parser, ExpressionErrors) {
  EXPECT_TRUE(ParseError("a < b < c", "comparison operators cannot be chained", 1, 7));
  EXPECT_TRUE(ParseError("a == b == c", "comparison operators cannot be chained", 1, 8));
  EXPECT_TRUE(ParseError("x = a < b >= c", "comparison operators cannot be chained", 1, 11));
  EXPECT_TRUE(ParseError("+1", "expected expression but found '+'", 1, 1));
  EXPECT_TRUE(ParseError("x = * 2", "expected expression but found '*'", 1, 5));
  EXPECT_TRUE(ParseError("a == not b", "expected expression but found 'not'", 1, 6));
  EXPECT_TRUE(ParseError("1 +", "unexpected end of file", 1, 4));
  // A bracket still open at the end of the file is reported where it opened.
  EXPECT_TRUE(ParseError("(1 + 2", "'(' was never closed", 1, 1));
  EXPECT_TRUE(ParseError("(1 + 2]", "expected ')' but found ']'", 1, 7));
  EXPECT_TRUE(ParseError("(1 2)", "expected ')' but found '2'", 1, 4));
  EXPECT_TRUE(ParseError("()", "expected expression but found ')'", 1, 2));
  EXPECT_TRUE(ParseError("f(a b)", "expected ',' or ')' but found 'b'", 1, 5));
  EXPECT_TRUE(ParseError("f(,)", "expected expression but found ','", 1, 3));
  EXPECT_TRUE(ParseError("f(a,,b)", "expected expression but found ','", 1, 5));
  EXPECT_TRUE(ParseError("[1 2]", "expected ',' or ']' but found '2'", 1, 4));
  EXPECT_TRUE(ParseError("[,]", "expected expression but found ','", 1, 2));
  EXPECT_TRUE(ParseError("[1,\n2", "'[' was never closed", 1, 1));
  EXPECT_TRUE(ParseError("a[]", "expected expression but found ']'", 1, 3));
  EXPECT_TRUE(ParseError("a[1 2]", "expected ',' or ']' but found '2'", 1, 5));
  EXPECT_TRUE(ParseError("a[1, 2)", "expected ',' or ']' but found ')'", 1, 7));
  EXPECT_TRUE(ParseError("f(a=1, 2)", "positional argument after keyword argument", 1, 8));
  EXPECT_TRUE(ParseError("f(a=1, -x)", "positional argument after keyword argument", 1, 8));
  EXPECT_TRUE(ParseError("f(a=1, b=2, a=3)", "duplicate keyword argument 'a'", 1, 13));
  EXPECT_TRUE(ParseError("f(1=2)", "expected ',' or ')' but found '='", 1, 4));
  EXPECT_TRUE(ParseError("a, b = 1, 2", "expected newline or ';' but found ','", 1, 2));
  EXPECT_TRUE(ParseError("x++", "expected expression but found '+'", 1, 3));
  EXPECT_TRUE(ParseError("x = not", "unexpected end of file", 1, 8));
  EXPECT_TRUE(ParseError("f(a.b=1)", "unexpected character '.'", 1, 4));
  EXPECT_TRUE(ParseError("x = 1..2", "expected newline or ';' but found '.2'", 1, 7));
  EXPECT_TRUE(ParseError("x = f(", "'(' was never closed", 1, 6));
  // Closed by a bracket of another kind: on its own line the parser's error
  // says it; lines later, the bracket is the culprit.
  EXPECT_TRUE(ParseError("x = (1 +\n 2]", "'(' was never closed", 1, 5));
  EXPECT_TRUE(ParseError("let a = [1, 2,\nlet b = 3\n", "'[' was never closed", 1, 9));
  // An error before the unclosed bracket is the error's own.
  EXPECT_TRUE(ParseError("x = = 1\ny = (2\n", "expected expression but found '='", 1, 5));
}

// ------------------------------------------------------------------ statements

TEST(Parser, LetAndAssign) {
  EXPECT_EQ(P("let x = 1 + 2 * 3"), "(let x (+ 1 (* 2 3)))");
  EXPECT_EQ(P("x = 1"), "(= x 1)");
  EXPECT_EQ(P("x += 1; x -= 1; x *= 1; x /= 1; x //= 1; x %= 1"),
            "(+= x 1)\n(-= x 1)\n(*= x 1)\n(/= x 1)\n(//= x 1)\n(%= x 1)");
  EXPECT_EQ(P("a[i] = e"), "(= (index a i) e)");
  EXPECT_EQ(P("a[i, j] //= 2"), "(//= (index a i j) 2)");
  EXPECT_EQ(P("a[0][1] = 2"), "(= (index (index a 0) 1) 2)");
  EXPECT_EQ(P("f(x)[0] += 1"), "(+= (index (call f x) 0) 1)");
  EXPECT_EQ(P("(x) = 1"), "(= x 1)");
  EXPECT_EQ(P("x =\n  1 +\n  2"), "(= x (+ 1 2))");

  auto prog = parse("t.tsb", "x %= 3");
  auto& a = static_cast<ast::Assign&>(*prog.stmts[0]);
  EXPECT_TRUE(a.has_op);
  EXPECT_EQ(a.op, ast::BinOp::Mod);
  auto prog2 = parse("t.tsb", "a[1] = 3");
  auto& ia = static_cast<ast::IndexAssign&>(*prog2.stmts[0]);
  EXPECT_FALSE(ia.has_op);
  EXPECT_EQ(ia.indices.size(), 1u);
}

TEST(Parser, AssignErrors) {
  EXPECT_TRUE(ParseError("f() = 1", "cannot assign to this expression", 1, 1));
  EXPECT_TRUE(ParseError("1 = 2", "cannot assign to this expression", 1, 1));
  EXPECT_TRUE(ParseError("  a + b = 1", "cannot assign to this expression", 1, 3));
  EXPECT_TRUE(ParseError("-x += 1", "cannot assign to this expression", 1, 1));
  EXPECT_TRUE(ParseError("[a] = 1", "cannot assign to this expression", 1, 1));
  EXPECT_TRUE(ParseError("x = y = 1", "expected newline or ';' but found '='", 1, 7));
  EXPECT_TRUE(ParseError("x = 1 y = 2", "expected newline or ';' but found 'y'", 1, 7));
  EXPECT_TRUE(ParseError("let x", "unexpected end of file", 1, 6));
  EXPECT_TRUE(ParseError("let x\n", "expected '=' but found newline", 1, 6));
  EXPECT_TRUE(ParseError("let x\ny = 1", "expected '=' but found newline", 1, 6));
  EXPECT_TRUE(ParseError("let x += 1", "expected '=' but found '+='", 1, 7));
  EXPECT_TRUE(ParseError("let 1 = 2", "expected identifier but found '1'", 1, 5));
  EXPECT_TRUE(ParseError("let if = 2", "expected identifier but found 'if'", 1, 5));
  EXPECT_TRUE(ParseError("x =", "unexpected end of file", 1, 4));
  EXPECT_TRUE(ParseError("x = \n\n", "unexpected end of file", 2, 1));
}

TEST(Parser, IfElifElse) {
  EXPECT_EQ(P("if c { a = 1 }"), "(if c (block (= a 1)))");
  EXPECT_EQ(P("if c { a = 1 } else { a = 2 }"), "(if c (block (= a 1)) (else (block (= a 2))))");
  EXPECT_EQ(P("if a { x } elif b { y } elif c { z } else { w }"),
            "(if a (block x) (elif b (block y)) (elif c (block z)) (else (block w)))");
  EXPECT_EQ(P("if a {\n  x\n}\nelif b {\n  y\n}\n\n# c\nelse\n{\n  z\n}"),
            "(if a (block x) (elif b (block y)) (else (block z)))");
  EXPECT_EQ(P("if a {}\nx"), "(if a (block))\nx");
  EXPECT_EQ(P("if a { x; y; }"), "(if a (block x y))");
  EXPECT_EQ(P("if a {\n\n x \n\n ;; y\n}"), "(if a (block x y))");
  EXPECT_EQ(P("if a { if b { c } }"), "(if a (block (if b (block c))))");
  EXPECT_EQ(P("if not a and b { }"), "(if (and (not a) b) (block))");

  auto prog = parse("t.tsb", "if a { } elif b { }");
  auto& s = static_cast<ast::If&>(*prog.stmts[0]);
  EXPECT_EQ(s.branches.size(), 2u);
  EXPECT_EQ(s.else_body, nullptr);
}

TEST(Parser, IfErrors) {
  EXPECT_TRUE(ParseError("if a b", "expected '{' but found 'b'", 1, 6));
  EXPECT_TRUE(ParseError("if a\nb", "expected '{' but found newline", 1, 5));
  EXPECT_TRUE(ParseError("if a {", "'{' was never closed", 1, 6));
  EXPECT_TRUE(ParseError("if a {\n  x = 1\n", "'{' was never closed", 1, 6));
  // An error inside a block that is never closed is still the error's own:
  // a block spans lines by design.
  EXPECT_TRUE(ParseError("if a {\n  x = = 1\n", "expected expression but found '='", 2, 7));
  EXPECT_TRUE(ParseError("if { }", "expected expression but found '{'", 1, 4));
  EXPECT_TRUE(ParseError("if a { } else if b { }", "expected '{' but found 'if'", 1, 15));
  EXPECT_TRUE(ParseError("else { }", "expected expression but found 'else'", 1, 1));
  EXPECT_TRUE(ParseError("if a { x y }", "expected newline or ';' but found 'y'", 1, 10));
  EXPECT_TRUE(ParseError("x }", "unmatched '}'", 1, 3));
  EXPECT_TRUE(ParseError("}", "unmatched '}'", 1, 1));
}

TEST(Parser, Loops) {
  EXPECT_EQ(P("while x < 3 { x += 1 }"), "(while (< x 3) (block (+= x 1)))");
  EXPECT_EQ(P("for i in range(10) { }"), "(for i (range 10) (block))");
  EXPECT_EQ(P("for i in range(1, n) { }"), "(for i (range 1 n) (block))");
  EXPECT_EQ(P("for i in range(10, 0, -1) { }"), "(for i (range 10 0 (neg 1)) (block))");
  EXPECT_EQ(P("for x in xs { print(x) }"), "(for x xs (block (call print x)))");
  EXPECT_EQ(P("for x in [1, 2] + ys { }"), "(for x (+ (list 1 2) ys) (block))");
  EXPECT_EQ(P("for x in rang(3) { }"), "(for x (call rang 3) (block))");
  EXPECT_EQ(P("for x in f(range) { }"), "(for x (call f range) (block))");
  EXPECT_EQ(P("while true { break; continue }"), "(while true (block (break) (continue)))");
  EXPECT_EQ(P("for i in range(3) { if i == 1 { continue } elif i { break } }"),
            "(for i (range 3) (block (if (== i 1) (block (continue)) (elif i (block (break))))))");
  EXPECT_EQ(P("while a { while b { break }; break }"),
            "(while a (block (while b (block (break))) (break)))");

  auto prog = parse("t.tsb", "for i in range(1, 2, 3) { }");
  ASSERT_EQ(prog.stmts[0]->kind, ast::StmtKind::ForRange);
  auto& f = static_cast<ast::ForRange&>(*prog.stmts[0]);
  EXPECT_EQ(f.var, "i");
  EXPECT_EQ(f.range_args.size(), 3u);
  EXPECT_EQ(f.var_loc.col, 5);
}

TEST(Parser, LoopErrors) {
  EXPECT_TRUE(ParseError("for i in range() { }", "range expects 1 to 3 arguments", 1, 10));
  EXPECT_TRUE(ParseError("for i in range(1, 2, 3, 4) { }", "range expects 1 to 3 arguments",
                         1, 10));
  EXPECT_TRUE(ParseError("for i in range(stop=3) { }", "range expects 1 to 3 arguments", 1, 10));
  EXPECT_TRUE(ParseError("for i in range(1, step=3) { }", "range expects 1 to 3 arguments",
                         1, 10));
  EXPECT_TRUE(ParseError("for 1 in x { }", "expected identifier but found '1'", 1, 5));
  EXPECT_TRUE(ParseError("for i x { }", "expected 'in' but found 'x'", 1, 7));
  EXPECT_TRUE(ParseError("for i in { }", "expected expression but found '{'", 1, 10));
  EXPECT_TRUE(ParseError("while { }", "expected expression but found '{'", 1, 7));
  EXPECT_TRUE(ParseError("while x", "unexpected end of file", 1, 8));
  EXPECT_TRUE(ParseError("break", "'break' outside loop", 1, 1));
  EXPECT_TRUE(ParseError("x = 1\n  continue", "'continue' outside loop", 2, 3));
  EXPECT_TRUE(ParseError("if x { break }", "'break' outside loop", 1, 8));
  EXPECT_TRUE(ParseError("while x { }\nbreak", "'break' outside loop", 2, 1));
  EXPECT_TRUE(ParseError("fn f() { continue }", "'continue' outside loop", 1, 10));
}

TEST(Parser, Functions) {
  EXPECT_EQ(P("fn f() { }"), "(fn f () (block))");
  EXPECT_EQ(P("fn add(a, b) { return a + b }"), "(fn add (a b) (block (return (+ a b))))");
  EXPECT_EQ(P("fn f(a,) { return }"), "(fn f (a) (block (return)))");
  EXPECT_EQ(P("fn f() { return; }"), "(fn f () (block (return)))");
  EXPECT_EQ(P("fn f() {\n  return\n}"), "(fn f () (block (return)))");
  EXPECT_EQ(P("fn f(\n  a,\n  b\n)\n{\n  let c = a\n  while c { return c }\n}"),
            "(fn f (a b) (block (let c a) (while c (block (return c)))))");
  EXPECT_EQ(P("fn f() { }\nfn g() { f() }\ng()"),
            "(fn f () (block))\n(fn g () (block (call f)))\n(call g)");
  EXPECT_EQ(P("fn f() { if x { let y = 1; return y } }"),
            "(fn f () (block (if x (block (let y 1) (return y)))))");

  auto prog = parse("t.tsb", "fn f(a, bc) { }");
  auto& fn = static_cast<ast::FnDecl&>(*prog.stmts[0]);
  EXPECT_EQ(fn.name, "f");
  EXPECT_EQ(fn.name_loc.col, 4);
  ASSERT_EQ(fn.param_locs.size(), 2u);
  EXPECT_EQ(fn.param_locs[0].col, 6);
  EXPECT_EQ(fn.param_locs[1].col, 9);
}

TEST(Parser, FunctionErrors) {
  EXPECT_TRUE(ParseError("if x { fn f() { } }", "functions may only be defined at the top level",
                         1, 8));
  EXPECT_TRUE(ParseError("fn f() {\n  fn g() { }\n}",
                         "functions may only be defined at the top level", 2, 3));
  EXPECT_TRUE(ParseError("while x { fn g() { } }",
                         "functions may only be defined at the top level", 1, 11));
  EXPECT_TRUE(ParseError("return 1", "'return' outside function", 1, 1));
  EXPECT_TRUE(ParseError("if x { return }", "'return' outside function", 1, 8));
  EXPECT_TRUE(ParseError("fn f() { }\nreturn", "'return' outside function", 2, 1));
  EXPECT_TRUE(ParseError("fn f(a, b, a) { }", "duplicate parameter 'a'", 1, 12));
  EXPECT_TRUE(ParseError("fn f(a b) { }", "expected ',' or ')' but found 'b'", 1, 8));
  EXPECT_TRUE(ParseError("fn f(1) { }", "expected identifier but found '1'", 1, 6));
  EXPECT_TRUE(ParseError("fn f(,) { }", "expected identifier but found ','", 1, 6));
  EXPECT_TRUE(ParseError("fn (a) { }", "expected identifier but found '('", 1, 4));
  EXPECT_TRUE(ParseError("fn f { }", "expected '(' but found '{'", 1, 6));
  EXPECT_TRUE(ParseError("fn f()", "unexpected end of file", 1, 7));
  EXPECT_TRUE(ParseError("fn f() return 1", "expected '{' but found 'return'", 1, 8));
  EXPECT_TRUE(ParseError("fn f(a,\n", "'(' was never closed", 1, 5));
  EXPECT_TRUE(ParseError("fn f() { return 1 2 }", "expected newline or ';' but found '2'", 1, 19));
}

TEST(Parser, StatementSeparators) {
  EXPECT_EQ(P(""), "");
  EXPECT_EQ(P("\n\n;;\n  # only comments\n"), "");
  EXPECT_EQ(P("a; b;; c;\n\nd"), "a\nb\nc\nd");
  EXPECT_EQ(P("a\r\nb\r\n"), "a\nb");
  EXPECT_EQ(P("x = 1 +\n2"), "(= x (+ 1 2))");
  EXPECT_EQ(P("x = f(1,\n2)"), "(= x (call f 1 2))");
  EXPECT_EQ(P("x = [\n  1,\n  2,\n]"), "(= x (list 1 2))");
  EXPECT_EQ(P("x = (1\n+ 2)"), "(= x (+ 1 2))");
  EXPECT_EQ(P("x = a and\n  b or\n  not\n  c"), "(= x (or (and a b) (not c)))");
  EXPECT_EQ(P("x = a <\n b"), "(= x (< a b))");
  EXPECT_EQ(P("x\n(y)"), "x\ny");
  EXPECT_EQ(P("x\n[1]"), "x\n(list 1)");
  EXPECT_EQ(P("x\n-1"), "x\n(neg 1)");
  EXPECT_TRUE(ParseError("x = 1\n+ 2", "expected expression but found '+'", 2, 1));
  EXPECT_TRUE(ParseError("x = 1\n  * 2", "expected expression but found '*'", 2, 3));
}

// A statement may follow the '}' that ends an if, while, for or fn on the
// same line; other statements still need a newline or ';' after them.
TEST(Parser, StatementAfterABlocksBrace) {
  EXPECT_EQ(P("if a { x } y"), P("if a { x }\ny"));
  EXPECT_EQ(P("if a { x } else { y } z"), P("if a { x } else { y }\nz"));
  EXPECT_EQ(P("while c { x += 1 } print(x)"), P("while c { x += 1 }\nprint(x)"));
  EXPECT_EQ(P("for i in range(3) { a } for x in l { b } c"), P("for i in range(3) { a }\nfor x in l { b }\nc"));
  EXPECT_EQ(P("fn f() { return 1 } fn g() { return 2 } f()"), P("fn f() { return 1 }\nfn g() { return 2 }\nf()"));
  EXPECT_EQ(P("fn fib(n) { if n < 2 { return n } return fib(n - 1) + fib(n - 2) }"),
            P("fn fib(n) {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}"));
  EXPECT_EQ(P("if a { if b { x } y } z"), P("if a {\n  if b { x }\n  y\n}\nz"));
  EXPECT_TRUE(ParseError("if a { } x y", "expected newline or ';' but found 'y'", 1, 12));
  EXPECT_TRUE(ParseError("x = [1] y", "expected newline or ';' but found 'y'", 1, 9));
  EXPECT_TRUE(ParseError("return_value = f(a) g", "expected newline or ';' but found 'g'", 1, 21));
}

TEST(Parser, Locations) {
  auto prog = parse("prog.tsb",
                    "let x = a + b\n"
                    "  y = f(1)[2]\n"
                    "z[0] += not c\n"
                    "if a < b { g(k=1) }\n");
  EXPECT_EQ(prog.filename, "prog.tsb");
  ASSERT_EQ(prog.stmts.size(), 4u);

  auto& let = static_cast<ast::Let&>(*prog.stmts[0]);
  EXPECT_EQ(let.loc.line, 1);
  EXPECT_EQ(let.loc.col, 1);
  EXPECT_EQ(let.name_loc.col, 5);
  EXPECT_EQ(let.init->kind, ast::ExprKind::Binary);
  EXPECT_EQ(let.init->loc.col, 11);  // the operator
  auto& bin = static_cast<ast::Binary&>(*let.init);
  EXPECT_EQ(bin.lhs->loc.col, 9);
  EXPECT_EQ(bin.rhs->loc.col, 13);

  auto& asg = static_cast<ast::Assign&>(*prog.stmts[1]);
  EXPECT_EQ(asg.loc.line, 2);
  EXPECT_EQ(asg.loc.col, 3);
  EXPECT_EQ(asg.name_loc.col, 3);
  ASSERT_EQ(asg.value->kind, ast::ExprKind::Index);
  EXPECT_EQ(asg.value->loc.col, 11);  // '['
  auto& idx = static_cast<ast::Index&>(*asg.value);
  EXPECT_EQ(idx.object->loc.col, 8);  // '(' of the call

  auto& ia = static_cast<ast::IndexAssign&>(*prog.stmts[2]);
  EXPECT_EQ(ia.loc.line, 3);
  EXPECT_EQ(ia.loc.col, 1);
  EXPECT_EQ(ia.op, ast::BinOp::Add);
  EXPECT_EQ(ia.value->loc.col, 9);  // 'not'

  auto& iff = static_cast<ast::If&>(*prog.stmts[3]);
  EXPECT_EQ(iff.loc.line, 4);
  EXPECT_EQ(iff.branches[0].cond->loc.col, 6);  // '<'
  EXPECT_EQ(iff.branches[0].body->loc.col, 10);  // '{'
  auto& es = static_cast<ast::ExprStmt&>(*iff.branches[0].body->stmts[0]);
  EXPECT_EQ(es.loc.col, 12);
  auto& call = static_cast<ast::Call&>(*es.expr);
  EXPECT_EQ(call.loc.col, 13);
  ASSERT_EQ(call.kwargs.size(), 1u);
  EXPECT_EQ(call.kwargs[0].loc.col, 14);
  EXPECT_EQ(call.kwargs[0].name, "k");

  auto cmp = parse("t", "x = a and b");
  auto& logical = static_cast<ast::Assign&>(*cmp.stmts[0]);
  EXPECT_EQ(logical.value->loc.col, 7);
}

TEST(Parser, LexErrorsPropagate) {
  EXPECT_TRUE(ParseError("x = 1\ny = \"abc", "unterminated string literal", 2, 5));
  EXPECT_TRUE(ParseError("x = 99999999999999999999", "integer literal too large", 1, 5));
  EXPECT_TRUE(ParseError("x = $", "unexpected character '$'", 1, 5));
  EXPECT_TRUE(ParseError("x = \"\\q\"", "invalid escape sequence '\\q'", 1, 6));
}

// ------------------------------------------------------------------ nesting limit

TEST(Parser, NestingLimitParentheses) {
  EXPECT_NO_THROW(P(repeat("(", 256) + "1" + repeat(")", 256)));
  EXPECT_TRUE(ParseError(repeat("(", 257) + "1" + repeat(")", 257),
                         "nesting too deep (limit 256)", 1, 257));
  // Far beyond the limit: an error, not a stack overflow.
  EXPECT_TRUE(ParseError(repeat("(", 1'000'000), "nesting too deep (limit 256)", 1, 257));
  EXPECT_TRUE(ParseError("x = " + repeat("[", 100'000), "nesting too deep (limit 256)", 1, 261));
  EXPECT_NO_THROW(P(repeat("[", 256) + repeat("]", 256)));
  EXPECT_TRUE(ParseError(repeat("[", 257) + repeat("]", 257), "nesting too deep (limit 256)", 1,
                         257));
  EXPECT_TRUE(ParseError(repeat("f(", 300), "nesting too deep (limit 256)", 1, 514));
}

TEST(Parser, NestingLimitOperators) {
  EXPECT_NO_THROW(P(repeat("-", 256) + "x"));
  EXPECT_TRUE(ParseError(repeat("-", 257) + "x", "nesting too deep (limit 256)", 1, 257));
  EXPECT_NO_THROW(P(repeat("not ", 256) + "x"));
  EXPECT_TRUE(ParseError(repeat("not ", 300) + "x", "nesting too deep (limit 256)", 1, 1025));
  // A chain of arithmetic terms is not nesting: its left spine is walked in
  // a loop (the compiler, the AST's destructor), so it may be long.
  EXPECT_EQ(P("1 + 2 * 3 - 4"), "(- (+ 1 (* 2 3)) 4)");
  EXPECT_NO_THROW(parse("t.tsb", "x = 1" + repeat(" + 1", 10'000)));
  EXPECT_NO_THROW(parse("t.tsb", "x = 1" + repeat(" * 1", 10'000)));
  EXPECT_NO_THROW(parse("t.tsb", "x = 1" + repeat(" + 2 * 3", 10'000)));
  // Its right operands still count.
  EXPECT_TRUE(ParseError("1 + " + repeat("-", 257) + "x", "nesting too deep (limit 256)", 1, 260));
  EXPECT_TRUE(ParseError("a" + repeat(" and a", 300), "nesting too deep (limit 256)", 1,
                         1 + 256 * 6 + 2));
  EXPECT_NO_THROW(P("2" + repeat(" ** 2", 256)));
  EXPECT_THROW(P("2" + repeat(" ** 2", 257)), SyntaxError);
  EXPECT_THROW(P("2" + repeat(" ** 2", 100'000)), SyntaxError);
  EXPECT_THROW(P("f" + repeat("()", 300)), SyntaxError);
  EXPECT_THROW(P("a" + repeat("[0]", 300)), SyntaxError);
  EXPECT_NO_THROW(P("f" + repeat("()", 256)));
  // Mixed: each operator, parenthesis and call counts.
  EXPECT_NO_THROW(P(repeat("-(", 128) + "1" + repeat(")", 128)));
  EXPECT_THROW(P(repeat("-(", 129) + "1" + repeat(")", 129)), SyntaxError);
}

TEST(Parser, NestingLimitBlocks) {
  auto nested = [](int n) {
    return repeat("if x {\n", n) + "y = 1\n" + repeat("}\n", n);
  };
  EXPECT_NO_THROW(P(nested(256)));
  EXPECT_TRUE(ParseError(nested(257), "nesting too deep (limit 256)", 257, 6));
  EXPECT_THROW(P(repeat("while x {", 100'000)), SyntaxError);
  EXPECT_NO_THROW(P("fn f() {" + repeat("if x {", 255) + repeat("}", 256)));
  EXPECT_THROW(P("fn f() {" + repeat("if x {", 256) + repeat("}", 257)), SyntaxError);
}

// ------------------------------------------------------------------ big inputs

TEST(Parser, MillionElementList) {
  std::string src = "let xs = [";
  for (int i = 0; i < 1'000'000; ++i) src += std::to_string(i) + ",\n";
  src += "]\n";
  auto prog = parse("big.tsb", src);
  ASSERT_EQ(prog.stmts.size(), 1u);
  auto& let = static_cast<ast::Let&>(*prog.stmts[0]);
  auto& list = static_cast<ast::ListExpr&>(*let.init);
  ASSERT_EQ(list.items.size(), 1'000'000u);
  EXPECT_EQ(static_cast<ast::IntLit&>(*list.items[999'999]).value, 999'999);
}

TEST(Parser, ManyStatementsAndArguments) {
  std::string src;
  for (int i = 0; i < 200'000; ++i) src += "x = x + " + std::to_string(i) + "\n";
  EXPECT_EQ(parse("t", src).stmts.size(), 200'000u);
  std::string call = "f(";
  for (int i = 0; i < 100'000; ++i) call += "k" + std::to_string(i) + "=1, ";
  call += ")";
  auto prog = parse("t", call);
  auto& c = static_cast<ast::Call&>(*static_cast<ast::ExprStmt&>(*prog.stmts[0]).expr);
  EXPECT_EQ(c.kwargs.size(), 100'000u);
}

// ------------------------------------------------------------------ robustness

// Parses anything: must either succeed or throw SyntaxError with a sane location.
void parse_anything(std::string_view src) {
  try {
    parse("fuzz.tsb", src);
  } catch (const SyntaxError& e) {
    ASSERT_GE(e.line, 1);
    ASSERT_GE(e.col, 1);
    ASSERT_GT(std::string(e.what()).size(), 0u);
  }
}

TEST(Parser, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string src(rng() % 300, '\0');
    for (char& c : src) c = static_cast<char>(rng() & 0xff);
    parse_anything(src);
  }
}

TEST(Parser, RandomTokenSoupNeverCrashes) {
  const char* pieces[] = {"fn", "let", "if", "elif", "else", "while", "for", "in", "break",
                          "continue", "return", "true", "false", "nil", "and", "or", "not",
                          "x", "f", "range", "1", "0x1", "2.5", "\"s\"", "(", ")", "[", "]",
                          "{", "}", ",", ";", "+", "-", "*", "/", "//", "%", "**", "@", "==",
                          "!=", "<", "<=", ">", ">=", "=", "+=", "-=", "*=", "/=", "//=", "%=",
                          "\n", " ", "#c\n", "\"", "1e", "\\", "."};
  std::mt19937 rng(777);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string src;
    int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) src += pieces[rng() % std::size(pieces)];
    parse_anything(src);
  }
}

const char* kSample = R"(# A sample program.
fn fib(n) {
  if n < 2 { return n }
  return fib(n - 1) + fib(n - 2)
}

fn sum(xs, start) {
  let total = start
  for x in xs {
    if x == nil { continue } elif x < 0 { break }
    else { total += x }
  }
  return total
}

let xs = [1, 2.5, -3, 0x10, 1_000,]
let t = zeros([2, 3], dtype=f32)
t[0, 1] = 4.0 ** -2 ** 2
for i in range(0, 10, 2) {
  while not (i >= 5 and i != 7) or false {
    i //= 2; xs[i] %= 3
  }
}
print(fib(10), sum(xs, 0), "done\n")
)";

TEST(Parser, SampleProgram) {
  auto prog = parse("sample.tsb", kSample);
  EXPECT_EQ(prog.stmts.size(), 7u);
  EXPECT_EQ(ast::dump(*prog.stmts[0]),
            "(fn fib (n) (block (if (< n 2) (block (return n))) "
            "(return (+ (call fib (- n 1)) (call fib (- n 2))))))");
  EXPECT_EQ(ast::dump(*prog.stmts[4]), "(= (index t 0 1) (** 4.0 (neg (** 2 2))))");
  EXPECT_EQ(ast::dump(*prog.stmts[6]), "(call print (call fib 10) (call sum xs 0) \"done\\n\")");
}

TEST(Parser, TruncatedProgramsNeverCrash) {
  std::string src = kSample;
  int errors = 0;
  for (size_t n = 0; n <= src.size(); ++n) {
    try {
      parse("t.tsb", std::string_view(src).substr(0, n));
    } catch (const SyntaxError& e) {
      ++errors;
      EXPECT_GE(e.line, 1);
      EXPECT_GE(e.col, 1);
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Parser, MutatedProgramsNeverCrash) {
  std::mt19937 rng(4242);
  const std::string src = kSample;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string m = src;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[pos] = static_cast<char>(rng() & 0xff); break;
        case 1: m.erase(pos, 1 + rng() % 5); break;
        default: m.insert(pos, 1, "(){}[],;=+-*/\n\"#"[rng() % 16]); break;
      }
      if (m.empty()) m = "x";
    }
    parse_anything(m);
  }
}

}  // namespace
}  // namespace tessera
