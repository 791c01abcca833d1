// AST of Tessera Script, produced by the Parser and consumed by the Compiler.
//
// Nodes are plain structs with a kind tag (LLVM-style isa via `kind`), owned
// through unique_ptr. Every node records the source position of its first
// token (1-based line and column) for error messages and the line table.
// The parser bounds nesting depth, so recursive walks over the tree are safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/core/operators.h"

namespace tessera::ast {

struct Loc {
  int line = 0;
  int col = 0;
};

// ---------------------------------------------------------------- expressions

enum class ExprKind : uint8_t {
  Nil, Bool, Int, Float, Str,  // literals
  Name,                        // identifier
  List,                        // [a, b, c]
  Unary,                       // -x, not x
  Binary,                      // arithmetic: + - * / // % ** @
  Compare,                     // == != < <= > >=
  Logical,                     // and, or (short-circuit)
  Call,                        // f(a, b, k=v)
  Index,                       // a[i] or a[i, j, ...]
};

// The operator kinds live in vm/core (the tracer, tensors and value
// semantics use them without the AST); the AST names them as ast::BinOp, ...
using tessera::BinOp;
using tessera::CmpOp;
using tessera::UnOp;
using tessera::LogicOp;
using tessera::binop_symbol;
using tessera::cmpop_symbol;

struct Expr {
  ExprKind kind;
  Loc loc;
  explicit Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NilLit : Expr { explicit NilLit(Loc l) : Expr(ExprKind::Nil, l) {} };
struct BoolLit : Expr { bool value; BoolLit(Loc l, bool v) : Expr(ExprKind::Bool, l), value(v) {} };
struct IntLit : Expr { int64_t value; IntLit(Loc l, int64_t v) : Expr(ExprKind::Int, l), value(v) {} };
struct FloatLit : Expr { double value; FloatLit(Loc l, double v) : Expr(ExprKind::Float, l), value(v) {} };
// `value` holds the bytes after escape processing.
struct StrLit : Expr { std::string value; StrLit(Loc l, std::string v) : Expr(ExprKind::Str, l), value(std::move(v)) {} };
struct Name : Expr { std::string name; Name(Loc l, std::string n) : Expr(ExprKind::Name, l), name(std::move(n)) {} };

struct ListExpr : Expr {
  std::vector<ExprPtr> items;
  explicit ListExpr(Loc l) : Expr(ExprKind::List, l) {}
};

struct Unary : Expr {
  UnOp op;
  ExprPtr operand;
  Unary(Loc l, UnOp o, ExprPtr e) : Expr(ExprKind::Unary, l), op(o), operand(std::move(e)) {}
};

// loc of a Binary/Compare/Logical node is the operator token's position.
struct Binary : Expr {
  BinOp op;
  ExprPtr lhs, rhs;
  Binary(Loc l, BinOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  // Frees a left spine of Binary nodes (`a + b + c + ...`) in a loop: the
  // parser lets such chains grow without a depth limit.
  ~Binary() override;
};

struct Compare : Expr {
  CmpOp op;
  ExprPtr lhs, rhs;
  Compare(Loc l, CmpOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Compare, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

struct Logical : Expr {
  LogicOp op;
  ExprPtr lhs, rhs;
  Logical(Loc l, LogicOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Logical, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

struct KeywordArg {
  Loc loc;
  std::string name;
  ExprPtr value;
};

struct Call : Expr {
  ExprPtr callee;
  std::vector<ExprPtr> args;        // positional, in order
  std::vector<KeywordArg> kwargs;   // after all positional args, in order
  explicit Call(Loc l) : Expr(ExprKind::Call, l) {}
};

struct Index : Expr {
  ExprPtr object;
  std::vector<ExprPtr> indices;     // 1 or more: a[i] or a[i, j]
  explicit Index(Loc l) : Expr(ExprKind::Index, l) {}
};

// ---------------------------------------------------------------- statements

enum class StmtKind : uint8_t {
  Let,          // let x = e
  Assign,       // x = e, x += e (op set for augmented)
  IndexAssign,  // a[i, ...] = e, a[i] += e
  ExprStmt,
  If,
  While,
  ForRange,     // for i in range(a[, b[, c]])
  ForIn,        // for x in expr
  Break,
  Continue,
  Return,
  FnDecl,       // top level only
  Block,        // a bare { ... } is not in the language; used for bodies
};

struct Stmt {
  StmtKind kind;
  Loc loc;
  explicit Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
  std::vector<StmtPtr> stmts;
  explicit Block(Loc l) : Stmt(StmtKind::Block, l) {}
};

struct Let : Stmt {
  Loc name_loc;
  std::string name;
  ExprPtr init;
  explicit Let(Loc l) : Stmt(StmtKind::Let, l) {}
};

// Augmented assignment: has_op = true and op is the arithmetic operator
// (only Add, Sub, Mul, Div, IDiv, Mod occur).
struct Assign : Stmt {
  Loc name_loc;
  std::string name;
  bool has_op = false;
  BinOp op = BinOp::Add;
  ExprPtr value;
  explicit Assign(Loc l) : Stmt(StmtKind::Assign, l) {}
};

struct IndexAssign : Stmt {
  ExprPtr object;
  std::vector<ExprPtr> indices;
  bool has_op = false;
  BinOp op = BinOp::Add;
  ExprPtr value;
  explicit IndexAssign(Loc l) : Stmt(StmtKind::IndexAssign, l) {}
};

struct ExprStmt : Stmt {
  ExprPtr expr;
  ExprStmt(Loc l, ExprPtr e) : Stmt(StmtKind::ExprStmt, l), expr(std::move(e)) {}
};

// if/elif chains: branches[0] is the `if`, the rest are `elif`s.
struct If : Stmt {
  struct Branch {
    ExprPtr cond;
    std::unique_ptr<Block> body;
  };
  std::vector<Branch> branches;
  std::unique_ptr<Block> else_body;  // may be null
  explicit If(Loc l) : Stmt(StmtKind::If, l) {}
};

struct While : Stmt {
  ExprPtr cond;
  std::unique_ptr<Block> body;
  explicit While(Loc l) : Stmt(StmtKind::While, l) {}
};

// for VAR in range(args...), 1 to 3 args (stop | start, stop | start, stop, step).
// A wrong number of range arguments is a syntax error reported by the parser.
struct ForRange : Stmt {
  Loc var_loc;
  Loc range_loc;  // the `range(...)` call: its errors (a zero step) point there
  std::string var;
  std::vector<ExprPtr> range_args;
  std::unique_ptr<Block> body;
  explicit ForRange(Loc l) : Stmt(StmtKind::ForRange, l) {}
};

struct ForIn : Stmt {
  Loc var_loc;
  std::string var;
  ExprPtr iterable;
  std::unique_ptr<Block> body;
  explicit ForIn(Loc l) : Stmt(StmtKind::ForIn, l) {}
};

struct Break : Stmt { explicit Break(Loc l) : Stmt(StmtKind::Break, l) {} };
struct Continue : Stmt { explicit Continue(Loc l) : Stmt(StmtKind::Continue, l) {} };

struct Return : Stmt {
  ExprPtr value;  // null for a bare `return`
  explicit Return(Loc l) : Stmt(StmtKind::Return, l) {}
};

struct FnDecl : Stmt {
  Loc name_loc;
  std::string name;
  std::vector<std::string> params;
  std::vector<Loc> param_locs;
  std::unique_ptr<Block> body;
  explicit FnDecl(Loc l) : Stmt(StmtKind::FnDecl, l) {}
};

// A whole file. Top-level statements in order; FnDecls appear among them in
// source order (the compiler hoists them).
struct Program {
  std::string filename;
  std::vector<StmtPtr> stmts;
};

}  // namespace tessera::ast
