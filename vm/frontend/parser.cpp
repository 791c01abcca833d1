#include "vm/frontend/parser.h"

#include <type_traits>

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "vm/core/error.h"
#include "vm/frontend/lexer.h"
#include "vm/frontend/unclosed_bracket.h"

namespace tessera {

namespace {

using ast::ExprPtr;
using ast::Loc;
using ast::StmtPtr;

// An expression together with its nesting depth (see kMaxNesting): leaves are
// 0, each operator/call/index/list node and each pair of parentheses adds 1.
struct Parsed {
  ExprPtr expr;
  int depth = 0;
};

bool is_assign_op(TokenKind k) {
  switch (k) {
    case TokenKind::Assign: case TokenKind::PlusAssign: case TokenKind::MinusAssign:
    case TokenKind::StarAssign: case TokenKind::SlashAssign:
    case TokenKind::SlashSlashAssign: case TokenKind::PercentAssign:
      return true;
    default:
      return false;
  }
}

ast::BinOp augmented_op(TokenKind k) {
  switch (k) {
    case TokenKind::PlusAssign: return ast::BinOp::Add;
    case TokenKind::MinusAssign: return ast::BinOp::Sub;
    case TokenKind::StarAssign: return ast::BinOp::Mul;
    case TokenKind::SlashAssign: return ast::BinOp::Div;
    case TokenKind::SlashSlashAssign: return ast::BinOp::IDiv;
    default: return ast::BinOp::Mod;  // PercentAssign
  }
}

bool is_compare_op(TokenKind k) {
  switch (k) {
    case TokenKind::EqEq: case TokenKind::NotEq: case TokenKind::Less:
    case TokenKind::LessEq: case TokenKind::Greater: case TokenKind::GreaterEq:
      return true;
    default:
      return false;
  }
}

ast::CmpOp compare_op(TokenKind k) {
  switch (k) {
    case TokenKind::EqEq: return ast::CmpOp::Eq;
    case TokenKind::NotEq: return ast::CmpOp::Ne;
    case TokenKind::Less: return ast::CmpOp::Lt;
    case TokenKind::LessEq: return ast::CmpOp::Le;
    case TokenKind::Greater: return ast::CmpOp::Gt;
    default: return ast::CmpOp::Ge;
  }
}

// Quoted for tokens with a fixed spelling ("')'"), bare for the rest ("identifier").
std::string expected_name(TokenKind k) {
  switch (k) {
    case TokenKind::Eof: case TokenKind::Newline: case TokenKind::Ident:
    case TokenKind::Int: case TokenKind::Float: case TokenKind::String:
      return token_spelling(k);
    default:
      return std::string("'") + token_spelling(k) + "'";
  }
}

std::string too_deep_message() {
  return "nesting too deep (limit " + std::to_string(kMaxNesting) + ")";
}

class Parser {
 public:
  explicit Parser(std::string_view source) : lexer_(source) {}

  std::vector<StmtPtr> parse_file() {
    std::vector<StmtPtr> stmts;
    for (;;) {
      skip_separators();
      if (at(TokenKind::Eof)) break;
      if (at(TokenKind::RBrace)) error("unmatched '}'", peek().loc);
      stmts.push_back(parse_stmt());
      end_stmt(*stmts.back());
    }
    return stmts;
  }

 private:
  // ------------------------------------------------------------ token stream

  // Lookahead of at most two tokens (keyword arguments `name =`, and
  // `elif`/`else` on the line after `}`), lexed lazily.
  const Token& peek(size_t n = 0) {
    while (ahead_.size() <= n) ahead_.push_back(lexer_.next());
    return ahead_[n];
  }
  bool at(TokenKind k) { return peek().kind == k; }
  Token take() {
    peek();
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    return t;
  }
  bool accept(TokenKind k) {
    if (!at(k)) return false;
    take();
    return true;
  }
  Token expect(TokenKind k) {
    if (!at(k)) error_expected(expected_name(k));
    return take();
  }

  [[noreturn]] void error(const std::string& msg, Loc loc) {
    throw SyntaxError(msg, loc.line, loc.col);
  }
  // "expected WHAT but found TOKEN" at the current token; at end of input
  // simply "unexpected end of file".
  [[noreturn]] void error_expected(const std::string& what) {
    const Token& t = peek();
    if (t.kind == TokenKind::Eof) error("unexpected end of file", t.loc);
    error("expected " + what + " but found " + describe_token(t), t.loc);
  }

  // ------------------------------------------------------------ nesting

  // Guards the way down: entering a child of the node being parsed. This is
  // what bounds the parser's own recursion, before any node exists.
  class Nest {
   public:
    Nest(Parser& p, Loc loc) : p_(p) {
      if (p_.level_ >= kMaxNesting) p_.error(too_deep_message(), loc);
      ++p_.level_;
    }
    ~Nest() { --p_.level_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  // Checks the way up: left-associative chains and postfix chains grow
  // deeper than the recursion that built them.
  int checked_depth(int depth, Loc loc) {
    if (depth > kMaxNesting) error(too_deep_message(), loc);
    return depth;
  }

  template <class Node, class Op>
  Parsed combine(Loc loc, Op op, Parsed lhs, Parsed rhs) {
    // An arithmetic operator's left operand that is itself one is no
    // deeper: the compiler and the AST's destructor walk such left spines
    // (`a + b + c + ...`, 10,000 terms) in a loop, not by recursion.
    const bool spine = std::is_same_v<Node, ast::Binary> && lhs.expr->kind == ast::ExprKind::Binary;
    int depth = checked_depth(std::max(spine ? lhs.depth : lhs.depth + 1, rhs.depth + 1), loc);
    return {std::make_unique<Node>(loc, op, std::move(lhs.expr), std::move(rhs.expr)), depth};
  }

  // ------------------------------------------------------------ expressions

  Parsed parse_expr() { return parse_or(); }

  Parsed parse_or() {
    Parsed lhs = parse_and();
    while (at(TokenKind::KwOr)) {
      Loc loc = take().loc;
      Nest nest(*this, loc);
      lhs = combine<ast::Logical>(loc, ast::LogicOp::Or, std::move(lhs), parse_and());
    }
    return lhs;
  }

  Parsed parse_and() {
    Parsed lhs = parse_not();
    while (at(TokenKind::KwAnd)) {
      Loc loc = take().loc;
      Nest nest(*this, loc);
      lhs = combine<ast::Logical>(loc, ast::LogicOp::And, std::move(lhs), parse_not());
    }
    return lhs;
  }

  Parsed parse_not() {
    if (!at(TokenKind::KwNot)) return parse_compare();
    Loc loc = take().loc;
    Nest nest(*this, loc);
    Parsed operand = parse_not();
    int depth = checked_depth(operand.depth + 1, loc);
    return {std::make_unique<ast::Unary>(loc, ast::UnOp::Not, std::move(operand.expr)), depth};
  }

  Parsed parse_compare() {
    Parsed lhs = parse_additive();
    if (!is_compare_op(peek().kind)) return lhs;
    Token op = take();
    Parsed result;
    {
      Nest nest(*this, op.loc);
      result = combine<ast::Compare>(op.loc, compare_op(op.kind), std::move(lhs), parse_additive());
    }
    if (is_compare_op(peek().kind)) error("comparison operators cannot be chained", peek().loc);
    return result;
  }

  Parsed parse_additive() {
    Parsed lhs = parse_multiplicative();
    for (;;) {
      ast::BinOp op;
      if (at(TokenKind::Plus)) op = ast::BinOp::Add;
      else if (at(TokenKind::Minus)) op = ast::BinOp::Sub;
      else return lhs;
      Loc loc = take().loc;
      Nest nest(*this, loc);
      lhs = combine<ast::Binary>(loc, op, std::move(lhs), parse_multiplicative());
    }
  }

  Parsed parse_multiplicative() {
    Parsed lhs = parse_unary();
    for (;;) {
      ast::BinOp op;
      switch (peek().kind) {
        case TokenKind::Star: op = ast::BinOp::Mul; break;
        case TokenKind::Slash: op = ast::BinOp::Div; break;
        case TokenKind::SlashSlash: op = ast::BinOp::IDiv; break;
        case TokenKind::Percent: op = ast::BinOp::Mod; break;
        case TokenKind::At: op = ast::BinOp::MatMul; break;
        default: return lhs;
      }
      Loc loc = take().loc;
      Nest nest(*this, loc);
      lhs = combine<ast::Binary>(loc, op, std::move(lhs), parse_unary());
    }
  }

  // Unary minus sits below `**`, so `-2 ** 2` is -(2 ** 2).
  Parsed parse_unary() {
    if (!at(TokenKind::Minus)) return parse_power();
    Loc loc = take().loc;
    Nest nest(*this, loc);
    Parsed operand = parse_unary();
    int depth = checked_depth(operand.depth + 1, loc);
    return {std::make_unique<ast::Unary>(loc, ast::UnOp::Neg, std::move(operand.expr)), depth};
  }

  // Right-associative; the exponent may carry its own unary minus (`2 ** -1`).
  Parsed parse_power() {
    Parsed base = parse_postfix();
    if (!at(TokenKind::StarStar)) return base;
    Loc loc = take().loc;
    Nest nest(*this, loc);
    return combine<ast::Binary>(loc, ast::BinOp::Pow, std::move(base), parse_unary());
  }

  Parsed parse_postfix() {
    Parsed e = parse_primary();
    for (;;) {
      if (at(TokenKind::LParen)) {
        e = parse_call(std::move(e));
      } else if (at(TokenKind::LBracket)) {
        e = parse_index(std::move(e));
      } else {
        return e;
      }
    }
  }

  Parsed parse_call(Parsed callee) {
    Loc loc = take().loc;  // '('
    Nest nest(*this, loc);
    auto call = std::make_unique<ast::Call>(loc);
    int depth = callee.depth;
    call->callee = std::move(callee.expr);
    std::unordered_set<std::string> kw_names;
    while (!at(TokenKind::RParen)) {
      if (at(TokenKind::Ident) && peek(1).kind == TokenKind::Assign) {
        Token name = take();
        take();  // '='
        std::string key(name.text);
        if (!kw_names.insert(key).second)
          error("duplicate keyword argument '" + key + "'", name.loc);
        Parsed value = parse_expr();
        depth = std::max(depth, value.depth);
        call->kwargs.push_back({name.loc, std::move(key), std::move(value.expr)});
      } else {
        Loc start = peek().loc;
        Parsed value = parse_expr();
        if (!call->kwargs.empty()) error("positional argument after keyword argument", start);
        depth = std::max(depth, value.depth);
        call->args.push_back(std::move(value.expr));
      }
      if (!accept(TokenKind::Comma)) break;
    }
    if (!at(TokenKind::RParen)) error_expected("',' or ')'");
    take();
    depth = checked_depth(depth + 1, loc);
    return {std::move(call), depth};
  }

  Parsed parse_index(Parsed object) {
    Loc loc = take().loc;  // '['
    Nest nest(*this, loc);
    auto index = std::make_unique<ast::Index>(loc);
    int depth = object.depth;
    index->object = std::move(object.expr);
    do {
      if (!index->indices.empty() && at(TokenKind::RBracket)) break;  // trailing comma
      Parsed i = parse_expr();
      depth = std::max(depth, i.depth);
      index->indices.push_back(std::move(i.expr));
    } while (accept(TokenKind::Comma));
    if (!at(TokenKind::RBracket)) error_expected("',' or ']'");
    take();
    depth = checked_depth(depth + 1, loc);
    return {std::move(index), depth};
  }

  Parsed parse_primary() {
    const Token& t = peek();
    Loc loc = t.loc;
    switch (t.kind) {
      case TokenKind::Int: {
        int64_t v = t.int_value;
        take();
        return {std::make_unique<ast::IntLit>(loc, v), 0};
      }
      case TokenKind::Float: {
        double v = t.float_value;
        take();
        return {std::make_unique<ast::FloatLit>(loc, v), 0};
      }
      case TokenKind::String:
        return {std::make_unique<ast::StrLit>(loc, std::move(take().str_value)), 0};
      case TokenKind::KwTrue:
        take();
        return {std::make_unique<ast::BoolLit>(loc, true), 0};
      case TokenKind::KwFalse:
        take();
        return {std::make_unique<ast::BoolLit>(loc, false), 0};
      case TokenKind::KwNil:
        take();
        return {std::make_unique<ast::NilLit>(loc), 0};
      case TokenKind::Ident:
        return {std::make_unique<ast::Name>(loc, std::string(take().text)), 0};
      case TokenKind::LParen: {
        take();
        Nest nest(*this, loc);
        Parsed inner = parse_expr();
        expect(TokenKind::RParen);
        inner.depth = checked_depth(inner.depth + 1, loc);
        return inner;
      }
      case TokenKind::LBracket:
        return parse_list();
      default:
        error_expected("expression");
    }
  }

  Parsed parse_list() {
    Loc loc = take().loc;  // '['
    Nest nest(*this, loc);
    auto list = std::make_unique<ast::ListExpr>(loc);
    int depth = 0;
    while (!at(TokenKind::RBracket)) {
      Parsed item = parse_expr();
      depth = std::max(depth, item.depth);
      list->items.push_back(std::move(item.expr));
      if (!accept(TokenKind::Comma)) break;
    }
    if (!at(TokenKind::RBracket)) error_expected("',' or ']'");
    take();
    depth = checked_depth(depth + 1, loc);
    return {std::move(list), depth};
  }

  // ------------------------------------------------------------ statements

  void skip_separators() {
    while (at(TokenKind::Newline) || at(TokenKind::Semicolon)) take();
  }

  // A statement ends at a newline or ';', just before '}' or end of file,
  // or, for one that ends in a block (if, while, for, fn), at the block's
  // '}': `if c { return a } return b` (as in Rust, JavaScript and Lua).
  void end_stmt(const ast::Stmt& s) {
    if (accept(TokenKind::Newline) || accept(TokenKind::Semicolon)) return;
    if (at(TokenKind::RBrace) || at(TokenKind::Eof)) return;
    if (ends_in_block(s)) return;
    error_expected("newline or ';'");
  }
  static bool ends_in_block(const ast::Stmt& s) {
    switch (s.kind) {
      case ast::StmtKind::If: case ast::StmtKind::While: case ast::StmtKind::ForRange: case ast::StmtKind::ForIn:
      case ast::StmtKind::FnDecl:
        return true;
      default:
        return false;
    }
  }

  bool at_stmt_end() {
    switch (peek().kind) {
      case TokenKind::Newline: case TokenKind::Semicolon:
      case TokenKind::RBrace: case TokenKind::Eof:
        return true;
      default:
        return false;
    }
  }

  StmtPtr parse_stmt() {
    const Token& t = peek();
    Loc loc = t.loc;
    switch (t.kind) {
      case TokenKind::KwLet: {
        take();
        auto let = std::make_unique<ast::Let>(loc);
        Token name = expect(TokenKind::Ident);
        let->name_loc = name.loc;
        let->name = std::string(name.text);
        expect(TokenKind::Assign);
        let->init = parse_expr().expr;
        return let;
      }
      case TokenKind::KwIf:
        return parse_if();
      case TokenKind::KwWhile: {
        take();
        auto w = std::make_unique<ast::While>(loc);
        w->cond = parse_expr().expr;
        w->body = parse_loop_body();
        return w;
      }
      case TokenKind::KwFor:
        return parse_for();
      case TokenKind::KwBreak:
        if (loop_depth_ == 0) error("'break' outside loop", loc);
        take();
        return std::make_unique<ast::Break>(loc);
      case TokenKind::KwContinue:
        if (loop_depth_ == 0) error("'continue' outside loop", loc);
        take();
        return std::make_unique<ast::Continue>(loc);
      case TokenKind::KwReturn: {
        if (!in_fn_) error("'return' outside function", loc);
        take();
        auto r = std::make_unique<ast::Return>(loc);
        if (!at_stmt_end()) r->value = parse_expr().expr;
        return r;
      }
      case TokenKind::KwFn:
        return parse_fn();
      default:
        return parse_simple_stmt();
    }
  }

  StmtPtr parse_simple_stmt() {
    Loc start = peek().loc;
    Parsed target = parse_expr();
    TokenKind k = peek().kind;
    if (!is_assign_op(k)) return std::make_unique<ast::ExprStmt>(start, std::move(target.expr));
    const bool has_op = k != TokenKind::Assign;
    const ast::BinOp op = has_op ? augmented_op(k) : ast::BinOp::Add;
    if (target.expr->kind == ast::ExprKind::Name) {
      take();
      auto a = std::make_unique<ast::Assign>(start);
      auto& name = static_cast<ast::Name&>(*target.expr);
      a->name_loc = name.loc;
      a->name = std::move(name.name);
      a->has_op = has_op;
      a->op = op;
      a->value = parse_expr().expr;
      return a;
    }
    if (target.expr->kind == ast::ExprKind::Index) {
      take();
      auto a = std::make_unique<ast::IndexAssign>(start);
      auto& index = static_cast<ast::Index&>(*target.expr);
      a->object = std::move(index.object);
      a->indices = std::move(index.indices);
      a->has_op = has_op;
      a->op = op;
      a->value = parse_expr().expr;
      return a;
    }
    error("cannot assign to this expression", start);
  }

  StmtPtr parse_if() {
    auto s = std::make_unique<ast::If>(take().loc);
    ast::ExprPtr cond = parse_expr().expr;
    s->branches.push_back({std::move(cond), parse_block()});
    for (;;) {
      // `elif`/`else` may start the line after the closing '}'.
      if (at(TokenKind::Newline) &&
          (peek(1).kind == TokenKind::KwElif || peek(1).kind == TokenKind::KwElse))
        take();
      if (accept(TokenKind::KwElif)) {
        ast::ExprPtr c = parse_expr().expr;
        s->branches.push_back({std::move(c), parse_block()});
        continue;
      }
      if (accept(TokenKind::KwElse)) s->else_body = parse_block();
      return s;
    }
  }

  StmtPtr parse_for() {
    Loc loc = take().loc;
    Token var = expect(TokenKind::Ident);
    expect(TokenKind::KwIn);
    ExprPtr iter = parse_expr().expr;
    if (iter->kind == ast::ExprKind::Call) {
      auto& call = static_cast<ast::Call&>(*iter);
      if (call.callee->kind == ast::ExprKind::Name &&
          static_cast<ast::Name&>(*call.callee).name == "range") {
        if (call.args.empty() || call.args.size() > 3 || !call.kwargs.empty())
          error("range expects 1 to 3 arguments", call.callee->loc);
        auto f = std::make_unique<ast::ForRange>(loc);
        f->var_loc = var.loc;
        f->range_loc = call.callee->loc;
        f->var = std::string(var.text);
        f->range_args = std::move(call.args);
        f->body = parse_loop_body();
        return f;
      }
    }
    auto f = std::make_unique<ast::ForIn>(loc);
    f->var_loc = var.loc;
    f->var = std::string(var.text);
    f->iterable = std::move(iter);
    f->body = parse_loop_body();
    return f;
  }

  std::unique_ptr<ast::Block> parse_loop_body() {
    ++loop_depth_;
    auto body = parse_block();
    --loop_depth_;
    return body;
  }

  StmtPtr parse_fn() {
    Loc loc = peek().loc;
    if (block_depth_ > 0) error("functions may only be defined at the top level", loc);
    take();
    auto fn = std::make_unique<ast::FnDecl>(loc);
    Token name = expect(TokenKind::Ident);
    fn->name_loc = name.loc;
    fn->name = std::string(name.text);
    expect(TokenKind::LParen);
    std::unordered_set<std::string_view> seen;
    while (!at(TokenKind::RParen)) {
      Token p = expect(TokenKind::Ident);
      if (!seen.insert(p.text).second)
        error("duplicate parameter '" + std::string(p.text) + "'", p.loc);
      fn->params.emplace_back(p.text);
      fn->param_locs.push_back(p.loc);
      if (!accept(TokenKind::Comma)) break;
    }
    if (!at(TokenKind::RParen)) error_expected("',' or ')'");
    take();
    in_fn_ = true;
    fn->body = parse_block();
    in_fn_ = false;
    return fn;
  }

  std::unique_ptr<ast::Block> parse_block() {
    // Tolerate the opening brace on the next line; nothing else can follow.
    if (at(TokenKind::Newline) && peek(1).kind == TokenKind::LBrace) take();
    if (!at(TokenKind::LBrace)) error_expected("'{'");
    Loc loc = take().loc;
    if (block_depth_ >= kMaxNesting) error(too_deep_message(), loc);
    ++block_depth_;
    auto block = std::make_unique<ast::Block>(loc);
    for (;;) {
      skip_separators();
      if (at(TokenKind::RBrace)) break;
      if (at(TokenKind::Eof)) error_expected("'}'");
      block->stmts.push_back(parse_stmt());
      end_stmt(*block->stmts.back());
    }
    take();
    --block_depth_;
    return block;
  }

  Lexer lexer_;
  std::deque<Token> ahead_;
  int level_ = 0;        // expression nesting on the way down (Nest)
  int block_depth_ = 0;  // enclosing `{ }` blocks
  int loop_depth_ = 0;   // enclosing loops in the current function
  bool in_fn_ = false;
};

}  // namespace

ast::Program parse(const std::string& filename, std::string_view source) {
  ast::Program program;
  program.filename = filename;
  try {
    program.stmts = Parser(source).parse_file();
  } catch (const SyntaxError& e) {
    // An error met inside a bracket that is never closed is the bracket's
    // (unclosed_bracket.h). A block's `{` spans lines by design, so it is
    // blamed only when the parser ran into the end of the file; a bracket
    // closed by one of another kind on its own line is plain from the
    // parser's "expected ')' but found ']'".
    auto b = find_unclosed_bracket(source, {e.line, e.col});
    if (b && (b->bracket != '{' || b->error_at_end) && !(b->mismatched && b->loc.line == e.line))
      throw SyntaxError(std::string("'") + b->bracket + "' was never closed", b->loc.line, b->loc.col);
    throw;
  }
  return program;
}

}  // namespace tessera
