// Compiles the body of one function (or <main>) to register bytecode.
//
// Expression code follows one contract: expr_to(e, dst) leaves e's value in
// dst, where dst is a scratch register (a temporary, or a local that is
// being initialised) that may be written before e is fully evaluated.
// expr_any(e) returns some register holding e's value: a local's own
// register when e names one (no code), otherwise a new temporary.
// Temporaries are stack-allocated and released at the end of the expression
// or statement that needed them.
#pragma once

#include <optional>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/bytecode/code_builder.h"
#include "vm/bytecode/global_table.h"
#include "vm/bytecode/register_allocator.h"
#include "vm/bytecode/scope.h"
#include "vm/frontend/ast.h"

namespace tessera {

class FunctionCompiler {
 public:
  FunctionCompiler(FunctionProto& proto, GlobalTable& globals);

  // <main>: the top-level statements except `fn` declarations. Top-level
  // `let`s define globals; lets inside blocks are locals of <main>.
  void compile_main(const std::vector<ast::StmtPtr>& stmts);
  // A `fn`: parameters in r0..n-1, then the body.
  void compile_function(const ast::FnDecl& fn);

 private:
  // Sets the source position (line table, error blame) for the node being
  // compiled and restores the enclosing node's on scope exit.
  class AtNode {
   public:
    AtNode(FunctionCompiler& fc, ast::Loc loc);
    ~AtNode();
    AtNode(const AtNode&) = delete;
    AtNode& operator=(const AtNode&) = delete;

   private:
    FunctionCompiler& fc_;
    ast::Loc saved_;
  };

  struct Loop {
    Label exit;  // break
    Label next;  // continue: the LOOP header, or the FORLOOP/ITERLOOP
  };

  // ---- statements (function_compiler_stmt.cpp)
  void stmt(const ast::Stmt& s);
  void block(const ast::Block& b);
  void let_stmt(const ast::Let& s);
  void assign_stmt(const ast::Assign& s);
  void index_assign_stmt(const ast::IndexAssign& s);
  void expr_stmt(const ast::ExprStmt& s);
  void if_stmt(const ast::If& s);
  void while_stmt(const ast::While& s);
  void for_range_stmt(const ast::ForRange& s);
  void for_in_stmt(const ast::ForIn& s);
  void break_stmt(const ast::Break& s);
  void continue_stmt(const ast::Continue& s);
  void return_stmt(const ast::Return& s);
  // Shared tail of both for-loops: body with the loop variable in R[base+3],
  // closed by `loop_op` (FORLOOP/ITERLOOP) jumping back to the body.
  void loop_body(Reg base, const std::string& var, const ast::Block& body, Op loop_op,
                 Loop& loop);
  void finish_function();

  // ---- expressions (function_compiler_expr.cpp)
  void expr_to(const ast::Expr& e, Reg dst);
  Reg expr_any(const ast::Expr& e);
  void literal_to(const ast::Expr& e, Reg dst);
  void name_to(const ast::Name& e, Reg dst);
  void list_to(const ast::ListExpr& e, Reg dst);
  void unary_to(const ast::Unary& e, Reg dst);
  void binary_to(const ast::Binary& e, Reg dst);
  void compare_to(const ast::Compare& e, Reg dst);
  void logical_to(const ast::Logical& e, Reg dst);
  void call_to(const ast::Call& e, Reg dst);
  void index_to(const ast::Index& e, Reg dst);

  // dst = lhs op rhs, evaluating rhs; uses the ...K form when rhs is a
  // numeric literal whose constant index fits the C operand.
  void emit_arith(ast::BinOp op, Reg dst, Reg lhs, const ast::Expr& rhs);
  // Constant index of `e` if it is a numeric literal (a negated one
  // included) and the index fits 16 bits.
  std::optional<uint16_t> small_numeric_const(const ast::Expr& e);
  void load_value(Reg dst, const Value& v);
  // Evaluates `items` into consecutive new registers starting at the top of
  // the register stack; returns the first.
  Reg exprs_to_consecutive(const std::vector<ast::ExprPtr>& items, size_t from, size_t count);

  // ---- conditions (function_compiler_cond.cpp)
  // Jumps to `target` when e evaluates to `jump_if`, falls through
  // otherwise; every operand that is not itself a comparison or logical
  // operator is checked to be a bool (by JMPF/JMPT).
  void cond_jump(const ast::Expr& e, bool jump_if, Label& target);
  void compare_jump(const ast::Compare& e, bool jump_if, Label& target);

  // ---- helpers
  Reg alloc(int n = 1) { return regs_.alloc(loc_, n); }
  bool at_file_level() const { return is_main_ && scopes_.at_top_level(); }
  [[noreturn]] void error(const std::string& msg, ast::Loc where) const;

  FunctionProto& proto_;
  GlobalTable& globals_;
  CodeBuilder code_;
  RegisterAllocator regs_;
  ScopeStack scopes_;
  std::vector<Loop*> loops_;  // innermost last
  bool is_main_ = false;
  ast::Loc loc_{};  // node being compiled
};

}  // namespace tessera
