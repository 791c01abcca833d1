#include <charconv>
#include <cmath>
#include <cstdio>

#include "vm/frontend/ast.h"
#include "vm/frontend/ast_dump.h"

namespace tessera::ast {

Binary::~Binary() {
  // Detach each left operand that is a Binary before it is destroyed, so
  // that no destructor recurses into the next one.
  while (lhs && lhs->kind == ExprKind::Binary) {
    ExprPtr next = std::move(static_cast<Binary&>(*lhs).lhs);
    lhs = std::move(next);
  }
}

namespace {

// Shortest text that reads back as the same double, always recognisable as a
// float ("2.0", not "2").
void put_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view s(buf, res.ptr - buf);
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void put_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: {
        auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
          out += c;
        } else {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          out += buf;
        }
      }
    }
  }
  out += '"';
}

void put_expr(std::string& out, const Expr& e);
void put_stmt(std::string& out, const Stmt& s);

void put_binary(std::string& out, const char* op, const Expr& a, const Expr& b) {
  out += '(';
  out += op;
  out += ' ';
  put_expr(out, a);
  out += ' ';
  put_expr(out, b);
  out += ')';
}

void put_expr(std::string& out, const Expr& e) {
  switch (e.kind) {
    case ExprKind::Nil: out += "nil"; break;
    case ExprKind::Bool: out += static_cast<const BoolLit&>(e).value ? "true" : "false"; break;
    case ExprKind::Int: out += std::to_string(static_cast<const IntLit&>(e).value); break;
    case ExprKind::Float: put_float(out, static_cast<const FloatLit&>(e).value); break;
    case ExprKind::Str: put_string(out, static_cast<const StrLit&>(e).value); break;
    case ExprKind::Name: out += static_cast<const Name&>(e).name; break;
    case ExprKind::List: {
      out += "(list";
      for (const auto& item : static_cast<const ListExpr&>(e).items) {
        out += ' ';
        put_expr(out, *item);
      }
      out += ')';
      break;
    }
    case ExprKind::Unary: {
      const auto& u = static_cast<const Unary&>(e);
      out += u.op == UnOp::Neg ? "(neg " : "(not ";
      put_expr(out, *u.operand);
      out += ')';
      break;
    }
    case ExprKind::Binary: {
      const auto& b = static_cast<const Binary&>(e);
      put_binary(out, binop_symbol(b.op), *b.lhs, *b.rhs);
      break;
    }
    case ExprKind::Compare: {
      const auto& c = static_cast<const Compare&>(e);
      put_binary(out, cmpop_symbol(c.op), *c.lhs, *c.rhs);
      break;
    }
    case ExprKind::Logical: {
      const auto& l = static_cast<const Logical&>(e);
      put_binary(out, l.op == LogicOp::And ? "and" : "or", *l.lhs, *l.rhs);
      break;
    }
    case ExprKind::Call: {
      const auto& c = static_cast<const Call&>(e);
      out += "(call ";
      put_expr(out, *c.callee);
      for (const auto& a : c.args) {
        out += ' ';
        put_expr(out, *a);
      }
      for (const auto& kw : c.kwargs) {
        out += " (kw " + kw.name + ' ';
        put_expr(out, *kw.value);
        out += ')';
      }
      out += ')';
      break;
    }
    case ExprKind::Index: {
      const auto& ix = static_cast<const Index&>(e);
      out += "(index ";
      put_expr(out, *ix.object);
      for (const auto& i : ix.indices) {
        out += ' ';
        put_expr(out, *i);
      }
      out += ')';
      break;
    }
  }
}

void put_block(std::string& out, const Block& b) {
  out += "(block";
  for (const auto& s : b.stmts) {
    out += ' ';
    put_stmt(out, *s);
  }
  out += ')';
}

// "=" or the augmented form "+=", "//=", ...
std::string assign_op(bool has_op, BinOp op) {
  return has_op ? std::string(binop_symbol(op)) + "=" : "=";
}

void put_stmt(std::string& out, const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Let: {
      const auto& l = static_cast<const Let&>(s);
      out += "(let " + l.name + ' ';
      put_expr(out, *l.init);
      out += ')';
      break;
    }
    case StmtKind::Assign: {
      const auto& a = static_cast<const Assign&>(s);
      out += '(' + assign_op(a.has_op, a.op) + ' ' + a.name + ' ';
      put_expr(out, *a.value);
      out += ')';
      break;
    }
    case StmtKind::IndexAssign: {
      const auto& a = static_cast<const IndexAssign&>(s);
      out += '(' + assign_op(a.has_op, a.op) + " (index ";
      put_expr(out, *a.object);
      for (const auto& i : a.indices) {
        out += ' ';
        put_expr(out, *i);
      }
      out += ") ";
      put_expr(out, *a.value);
      out += ')';
      break;
    }
    case StmtKind::ExprStmt:
      put_expr(out, *static_cast<const ExprStmt&>(s).expr);
      break;
    case StmtKind::If: {
      const auto& i = static_cast<const If&>(s);
      out += "(if ";
      for (size_t n = 0; n < i.branches.size(); ++n) {
        if (n > 0) out += " (elif ";
        put_expr(out, *i.branches[n].cond);
        out += ' ';
        put_block(out, *i.branches[n].body);
        if (n > 0) out += ')';
      }
      if (i.else_body) {
        out += " (else ";
        put_block(out, *i.else_body);
        out += ')';
      }
      out += ')';
      break;
    }
    case StmtKind::While: {
      const auto& w = static_cast<const While&>(s);
      out += "(while ";
      put_expr(out, *w.cond);
      out += ' ';
      put_block(out, *w.body);
      out += ')';
      break;
    }
    case StmtKind::ForRange: {
      const auto& f = static_cast<const ForRange&>(s);
      out += "(for " + f.var + " (range";
      for (const auto& a : f.range_args) {
        out += ' ';
        put_expr(out, *a);
      }
      out += ") ";
      put_block(out, *f.body);
      out += ')';
      break;
    }
    case StmtKind::ForIn: {
      const auto& f = static_cast<const ForIn&>(s);
      out += "(for " + f.var + ' ';
      put_expr(out, *f.iterable);
      out += ' ';
      put_block(out, *f.body);
      out += ')';
      break;
    }
    case StmtKind::Break: out += "(break)"; break;
    case StmtKind::Continue: out += "(continue)"; break;
    case StmtKind::Return: {
      const auto& r = static_cast<const Return&>(s);
      if (!r.value) {
        out += "(return)";
        break;
      }
      out += "(return ";
      put_expr(out, *r.value);
      out += ')';
      break;
    }
    case StmtKind::FnDecl: {
      const auto& f = static_cast<const FnDecl&>(s);
      out += "(fn " + f.name + " (";
      for (size_t n = 0; n < f.params.size(); ++n) {
        if (n > 0) out += ' ';
        out += f.params[n];
      }
      out += ") ";
      put_block(out, *f.body);
      out += ')';
      break;
    }
    case StmtKind::Block:
      put_block(out, static_cast<const Block&>(s));
      break;
  }
}

}  // namespace

std::string dump(const Expr& expr) {
  std::string out;
  put_expr(out, expr);
  return out;
}

std::string dump(const Stmt& stmt) {
  std::string out;
  put_stmt(out, stmt);
  return out;
}

std::string dump(const Program& program) {
  std::string out;
  for (size_t n = 0; n < program.stmts.size(); ++n) {
    if (n > 0) out += '\n';
    put_stmt(out, *program.stmts[n]);
  }
  return out;
}

}  // namespace tessera::ast
