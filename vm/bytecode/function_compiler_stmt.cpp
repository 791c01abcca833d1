// FunctionCompiler: entry points and statements.
#include "vm/bytecode/function_compiler.h"

#include <algorithm>

#include "vm/core/error.h"

namespace tessera {

namespace {

template <class T>
const T& as(const ast::Stmt& s) {
  return static_cast<const T&>(s);
}

// Expressions whose code writes the destination before it has read all of
// its operands (the left operand of and/or, a call's callee, the first chunk
// of a long list). Assigning one of these to an existing local goes through
// a temporary so that `x = y and x` still reads the old x.
bool writes_destination_early(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Logical || e.kind == ast::ExprKind::Call ||
         e.kind == ast::ExprKind::List;
}

}  // namespace

FunctionCompiler::AtNode::AtNode(FunctionCompiler& fc, ast::Loc loc) : fc_(fc), saved_(fc.loc_) {
  fc_.loc_ = loc;
  fc_.code_.set_line(loc.line);
  fc_.code_.set_col(loc.col);
}

FunctionCompiler::AtNode::~AtNode() {
  fc_.loc_ = saved_;
  fc_.code_.set_line(saved_.line);
  fc_.code_.set_col(saved_.col);
}

FunctionCompiler::FunctionCompiler(FunctionProto& proto, GlobalTable& globals)
    : proto_(proto), globals_(globals), scopes_(proto.locals) {}

void FunctionCompiler::error(const std::string& msg, ast::Loc where) const {
  throw SyntaxError(msg, where.line, where.col);
}

void FunctionCompiler::compile_main(const std::vector<ast::StmtPtr>& stmts) {
  is_main_ = true;
  loc_ = {proto_.line, 1};
  code_.set_line(proto_.line);
  code_.set_col(1);
  for (const auto& s : stmts)
    if (s->kind != ast::StmtKind::FnDecl) stmt(*s);
  finish_function();
}

void FunctionCompiler::compile_function(const ast::FnDecl& fn) {
  AtNode at(*this, fn.loc);
  proto_.nparams = static_cast<int>(fn.params.size());
  scopes_.open_block();  // the parameters' scope
  for (size_t i = 0; i < fn.params.size(); ++i) {
    AtNode at_param(*this, i < fn.param_locs.size() ? fn.param_locs[i] : fn.loc);
    scopes_.declare(fn.params[i], alloc(), 0);
  }
  block(*fn.body);
  finish_function();
}

void FunctionCompiler::finish_function() {
  // Falling off the end returns nil; blame the last statement's line.
  if (code_.pc() > 0) code_.set_line(code_.last_line());
  code_.emit_abc(Op::RETNIL, 0, 0, 0);
  if (!scopes_.at_top_level()) scopes_.close_block(code_.pc());
  proto_.nregs = std::max(regs_.max_used(), proto_.nparams);
  code_.finish(proto_);
}

// ---------------------------------------------------------------- dispatch

void FunctionCompiler::stmt(const ast::Stmt& s) {
  AtNode at(*this, s.loc);
  int saved_top = regs_.top();
  switch (s.kind) {
    case ast::StmtKind::Let: let_stmt(as<ast::Let>(s)); return;  // keeps its register
    case ast::StmtKind::Assign: assign_stmt(as<ast::Assign>(s)); break;
    case ast::StmtKind::IndexAssign: index_assign_stmt(as<ast::IndexAssign>(s)); break;
    case ast::StmtKind::ExprStmt: expr_stmt(as<ast::ExprStmt>(s)); break;
    case ast::StmtKind::If: if_stmt(as<ast::If>(s)); break;
    case ast::StmtKind::While: while_stmt(as<ast::While>(s)); break;
    case ast::StmtKind::ForRange: for_range_stmt(as<ast::ForRange>(s)); break;
    case ast::StmtKind::ForIn: for_in_stmt(as<ast::ForIn>(s)); break;
    case ast::StmtKind::Break: break_stmt(as<ast::Break>(s)); break;
    case ast::StmtKind::Continue: continue_stmt(as<ast::Continue>(s)); break;
    case ast::StmtKind::Return: return_stmt(as<ast::Return>(s)); break;
    case ast::StmtKind::Block: block(as<ast::Block>(s)); break;
    case ast::StmtKind::FnDecl:
      // The parser already rejects this; keep the compiler safe on its own.
      error("fn declarations are only allowed at top level", s.loc);
  }
  regs_.free_to(saved_top);
}

void FunctionCompiler::block(const ast::Block& b) {
  int saved_top = regs_.top();
  scopes_.open_block();
  for (const auto& s : b.stmts) stmt(*s);
  scopes_.close_block(code_.pc());
  regs_.free_to(saved_top);
}

// ---------------------------------------------------------------- bindings

void FunctionCompiler::let_stmt(const ast::Let& s) {
  if (at_file_level()) {
    Reg tmp = alloc();
    expr_to(*s.init, tmp);
    code_.emit_abx(Op::DEFGLOBAL, tmp, globals_.slot_for_read(s.name));
    regs_.free_to(tmp);
    return;
  }
  // The initialiser is compiled before the name is declared: in
  // `let x = x + 1` the right-hand x is the outer one.
  Reg r = alloc();
  expr_to(*s.init, r);
  regs_.free_to(r + 1);
  scopes_.declare(s.name, r, code_.pc());
}

void FunctionCompiler::assign_stmt(const ast::Assign& s) {
  if (auto local = scopes_.lookup(s.name)) {
    if (s.has_op) {
      emit_arith(s.op, *local, *local, *s.value);
    } else if (writes_destination_early(*s.value)) {
      Reg tmp = alloc();
      expr_to(*s.value, tmp);
      code_.emit_abc(Op::MOVE, *local, tmp, 0);
    } else {
      expr_to(*s.value, *local);
    }
    return;
  }
  auto slot = globals_.slot_for_write(s.name);
  if (!slot) error("name '" + s.name + "' is undeclared", s.name_loc);
  Reg tmp = alloc();
  if (s.has_op) {
    code_.emit_abx(Op::GETGLOBAL, tmp, *slot);
    emit_arith(s.op, tmp, tmp, *s.value);
  } else {
    expr_to(*s.value, tmp);
  }
  code_.emit_abx(Op::SETGLOBAL, tmp, *slot);
}

void FunctionCompiler::index_assign_stmt(const ast::IndexAssign& s) {
  // Object, then indices, then (for op=) the current element, then the
  // value: left to right, each evaluated once.
  if (s.indices.size() == 1) {
    Reg obj = expr_any(*s.object);
    Reg idx = expr_any(*s.indices[0]);
    Reg val;
    if (s.has_op) {
      val = alloc();
      code_.emit_abc(Op::GETINDEX, val, obj, idx);
      emit_arith(s.op, val, val, *s.value);
    } else {
      val = expr_any(*s.value);
    }
    code_.emit_abc(Op::SETINDEX, obj, idx, val);
    return;
  }
  // SETINDEXN wants the object and its indices in consecutive registers.
  Reg base = alloc();
  expr_to(*s.object, base);
  regs_.free_to(base + 1);
  exprs_to_consecutive(s.indices, 0, s.indices.size());
  int n = static_cast<int>(s.indices.size());
  Reg val;
  if (s.has_op) {
    val = alloc();
    code_.emit_abc(Op::GETINDEXN, val, base, n);
    emit_arith(s.op, val, val, *s.value);
  } else {
    val = expr_any(*s.value);
  }
  code_.emit_abc(Op::SETINDEXN, base, val, n);
}

void FunctionCompiler::expr_stmt(const ast::ExprStmt& s) {
  // expr_any emits nothing for a bare local name (reading it cannot fail)
  // and still reads a global, which may raise "not defined".
  expr_any(*s.expr);
}

// ---------------------------------------------------------------- control flow

void FunctionCompiler::if_stmt(const ast::If& s) {
  Label end;
  for (size_t i = 0; i < s.branches.size(); ++i) {
    const auto& br = s.branches[i];
    Label next;
    cond_jump(*br.cond, false, next);
    block(*br.body);
    bool more = i + 1 < s.branches.size() || s.else_body;
    if (more) code_.emit_jump(Op::JMP, 0, end);
    code_.bind(next);
  }
  if (s.else_body) block(*s.else_body);
  code_.bind(end);
}

void FunctionCompiler::while_stmt(const ast::While& s) {
  Loop loop;
  code_.bind(loop.next);
  code_.emit_abc(Op::LOOP, 0, 0, 0);
  cond_jump(*s.cond, false, loop.exit);
  loops_.push_back(&loop);
  block(*s.body);
  loops_.pop_back();
  code_.emit_jump(Op::JMP, 0, loop.next);
  code_.bind(loop.exit);
}

void FunctionCompiler::for_range_stmt(const ast::ForRange& s) {
  const auto& args = s.range_args;
  if (args.empty() || args.size() > 3) error("range expects 1 to 3 arguments", s.loc);
  // R[A] start, R[A+1] stop, R[A+2] step, each written once it is reached so
  // that a call argument can be evaluated in place.
  Reg base = regs_.top();
  auto next_slot = [&](const ast::Expr* e, int64_t dflt) {
    Reg r = alloc();
    if (e)
      expr_to(*e, r);
    else
      code_.emit_asbx(Op::LOADI, r, static_cast<int32_t>(dflt));
    regs_.free_to(r + 1);
  };
  next_slot(args.size() >= 2 ? args[0].get() : nullptr, 0);
  next_slot(args.size() >= 2 ? args[1].get() : args[0].get(), 0);
  next_slot(args.size() == 3 ? args[2].get() : nullptr, 1);
  alloc();  // R[A+3], the loop variable
  Loop loop;
  {
    AtNode at(*this, s.range_loc);  // a zero step or a non-int bound is the call's error
    code_.emit_jump(Op::FORPREP, base, loop.exit);
  }
  loop_body(base, s.var, *s.body, Op::FORLOOP, loop);
}

void FunctionCompiler::for_in_stmt(const ast::ForIn& s) {
  Reg base = alloc();
  expr_to(*s.iterable, base);
  regs_.free_to(base + 1);
  alloc(3);  // length snapshot, index, loop variable
  Loop loop;
  {
    AtNode at(*this, s.iterable->loc);  // "cannot iterate over int" is the iterable's error
    code_.emit_jump(Op::ITERPREP, base, loop.exit);
  }
  loop_body(base, s.var, *s.body, Op::ITERLOOP, loop);
}

void FunctionCompiler::loop_body(Reg base, const std::string& var, const ast::Block& body,
                                 Op loop_op, Loop& loop) {
  Label body_start;
  code_.bind(body_start);
  scopes_.open_block();  // the loop variable: a fresh local of each loop
  scopes_.declare(var, static_cast<Reg>(base + 3), code_.pc());
  loops_.push_back(&loop);
  block(body);
  loops_.pop_back();
  code_.bind(loop.next);
  code_.emit_jump(loop_op, base, body_start);
  scopes_.close_block(code_.pc());
  code_.bind(loop.exit);
}

void FunctionCompiler::break_stmt(const ast::Break& s) {
  if (loops_.empty()) error("'break' outside a loop", s.loc);
  code_.emit_jump(Op::JMP, 0, loops_.back()->exit);
}

void FunctionCompiler::continue_stmt(const ast::Continue& s) {
  if (loops_.empty()) error("'continue' outside a loop", s.loc);
  code_.emit_jump(Op::JMP, 0, loops_.back()->next);
}

void FunctionCompiler::return_stmt(const ast::Return& s) {
  if (!s.value) {
    code_.emit_abc(Op::RETNIL, 0, 0, 0);
    return;
  }
  Reg r = expr_any(*s.value);
  code_.emit_abc(Op::RET, r, 0, 0);
}

}  // namespace tessera
