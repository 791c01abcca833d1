// FunctionCompiler: expressions.
#include <algorithm>
#include <limits>

#include "vm/bytecode/function_compiler.h"

namespace tessera {

namespace {

template <class T>
const T& as(const ast::Expr& e) {
  return static_cast<const T&>(e);
}

// How each arithmetic operator compiles: register form and, where one
// exists, the form with a constant right operand.
struct ArithOps {
  Op reg;
  Op konst;  // Op::NumOps: none
};
constexpr ArithOps kArith[] = {
    /* Add    */ {Op::ADD, Op::ADDK},
    /* Sub    */ {Op::SUB, Op::SUBK},
    /* Mul    */ {Op::MUL, Op::MULK},
    /* Div    */ {Op::DIV, Op::DIVK},
    /* IDiv   */ {Op::IDIV, Op::IDIVK},
    /* Mod    */ {Op::MOD, Op::MODK},
    /* Pow    */ {Op::POW, Op::POWK},
    /* MatMul */ {Op::MATMUL, Op::NumOps},
};

constexpr Op kCompareValue[] = {Op::EQ, Op::NE, Op::LT, Op::LE, Op::GT, Op::GE};

// Long list literals are built NEWLIST + LISTEXT in chunks of this many
// elements, so that a literal of any length fits the register file.
constexpr size_t kListChunk = 1024;

// Left spines of arithmetic longer than this are compiled in a loop
// (binary_to): the parser does not limit their length.
constexpr size_t kLongSpine = 64;

// The value of a numeric literal, looking through unary minus (so `-5` is
// the constant -5). Int negation wraps, as the language's ints do.
std::optional<Value> numeric_literal(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Int: return Value::integer(as<ast::IntLit>(e).value);
    case ast::ExprKind::Float: return Value::number(as<ast::FloatLit>(e).value);
    case ast::ExprKind::Unary: {
      const auto& u = as<ast::Unary>(e);
      if (u.op != ast::UnOp::Neg) return std::nullopt;
      auto v = numeric_literal(*u.operand);
      if (!v) return std::nullopt;
      if (v->is_int())
        return Value::integer(static_cast<int64_t>(0 - static_cast<uint64_t>(v->as_int())));
      return Value::number(-v->as_float());
    }
    default: return std::nullopt;
  }
}

}  // namespace

// ---------------------------------------------------------------- dispatch

void FunctionCompiler::expr_to(const ast::Expr& e, Reg dst) {
  AtNode at(*this, e.loc);
  switch (e.kind) {
    case ast::ExprKind::Nil:
    case ast::ExprKind::Bool:
    case ast::ExprKind::Int:
    case ast::ExprKind::Float:
    case ast::ExprKind::Str: literal_to(e, dst); return;
    case ast::ExprKind::Name: name_to(as<ast::Name>(e), dst); return;
    case ast::ExprKind::List: list_to(as<ast::ListExpr>(e), dst); return;
    case ast::ExprKind::Unary: unary_to(as<ast::Unary>(e), dst); return;
    case ast::ExprKind::Binary: binary_to(as<ast::Binary>(e), dst); return;
    case ast::ExprKind::Compare: compare_to(as<ast::Compare>(e), dst); return;
    case ast::ExprKind::Logical: logical_to(as<ast::Logical>(e), dst); return;
    case ast::ExprKind::Call: call_to(as<ast::Call>(e), dst); return;
    case ast::ExprKind::Index: index_to(as<ast::Index>(e), dst); return;
  }
}

Reg FunctionCompiler::expr_any(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Name)
    if (auto local = scopes_.lookup(as<ast::Name>(e).name)) return *local;
  Reg r = alloc();
  expr_to(e, r);
  regs_.free_to(r + 1);
  return r;
}

Reg FunctionCompiler::exprs_to_consecutive(const std::vector<ast::ExprPtr>& items, size_t from,
                                           size_t count) {
  Reg first = static_cast<Reg>(regs_.top());
  for (size_t i = from; i < from + count; ++i) {
    Reg r = alloc();
    expr_to(*items[i], r);
    regs_.free_to(r + 1);  // the item's own temporaries
  }
  return first;
}

// ---------------------------------------------------------------- leaves

void FunctionCompiler::load_value(Reg dst, const Value& v) {
  if (v.is_int() && v.as_int() >= std::numeric_limits<int32_t>::min() &&
      v.as_int() <= std::numeric_limits<int32_t>::max()) {
    code_.emit_asbx(Op::LOADI, dst, static_cast<int32_t>(v.as_int()));
    return;
  }
  code_.emit_abx(Op::LOADK, dst, code_.constants().add(v));
}

void FunctionCompiler::literal_to(const ast::Expr& e, Reg dst) {
  switch (e.kind) {
    case ast::ExprKind::Nil: code_.emit_abc(Op::LOADNIL, dst, 0, 0); return;
    case ast::ExprKind::Bool:
      code_.emit_abc(as<ast::BoolLit>(e).value ? Op::LOADTRUE : Op::LOADFALSE, dst, 0, 0);
      return;
    case ast::ExprKind::Int: load_value(dst, Value::integer(as<ast::IntLit>(e).value)); return;
    case ast::ExprKind::Float: load_value(dst, Value::number(as<ast::FloatLit>(e).value)); return;
    case ast::ExprKind::Str: load_value(dst, make_str(as<ast::StrLit>(e).value)); return;
    default: return;
  }
}

void FunctionCompiler::name_to(const ast::Name& e, Reg dst) {
  if (auto local = scopes_.lookup(e.name)) {
    if (*local != dst) code_.emit_abc(Op::MOVE, dst, *local, 0);
    return;
  }
  code_.emit_abx(Op::GETGLOBAL, dst, globals_.slot_for_read(e.name));
}

void FunctionCompiler::list_to(const ast::ListExpr& e, Reg dst) {
  size_t n = e.items.size();
  if (n == 0) {
    code_.emit_abc(Op::NEWLIST, dst, regs_.top(), 0);
    return;
  }
  int saved_top = regs_.top();
  for (size_t done = 0; done < n;) {
    // Shrink the chunk when the frame is nearly full rather than fail.
    size_t room = static_cast<size_t>(std::max(1, kMaxRegisters - regs_.top()));
    size_t count = std::min({kListChunk, n - done, room});
    Reg first = exprs_to_consecutive(e.items, done, count);
    AtNode at(*this, e.loc);  // NEWLIST/LISTEXT belong to the literal's line
    code_.emit_abc(done == 0 ? Op::NEWLIST : Op::LISTEXT, dst, first, static_cast<int>(count));
    regs_.free_to(saved_top);
    done += count;
  }
}

// ---------------------------------------------------------------- operators

void FunctionCompiler::unary_to(const ast::Unary& e, Reg dst) {
  if (e.op == ast::UnOp::Neg) {
    if (auto v = numeric_literal(e)) {
      load_value(dst, *v);
      return;
    }
  }
  int saved_top = regs_.top();
  Reg operand = expr_any(*e.operand);
  code_.emit_abc(e.op == ast::UnOp::Neg ? Op::NEG : Op::NOT, dst, operand, 0);
  regs_.free_to(saved_top);
}

std::optional<uint16_t> FunctionCompiler::small_numeric_const(const ast::Expr& e) {
  auto v = numeric_literal(e);
  if (!v) return std::nullopt;
  uint32_t k = code_.constants().add(*v);
  if (k > std::numeric_limits<uint16_t>::max()) return std::nullopt;
  return static_cast<uint16_t>(k);
}

void FunctionCompiler::emit_arith(ast::BinOp op, Reg dst, Reg lhs, const ast::Expr& rhs) {
  const ArithOps& ops = kArith[static_cast<int>(op)];
  if (ops.konst != Op::NumOps) {
    if (auto k = small_numeric_const(rhs)) {
      code_.emit_abc(ops.konst, dst, lhs, *k);
      return;
    }
  }
  int saved_top = regs_.top();
  Reg r = expr_any(rhs);
  code_.emit_abc(ops.reg, dst, lhs, r);
  regs_.free_to(saved_top);
}

void FunctionCompiler::binary_to(const ast::Binary& e, Reg dst) {
  // `K + x` and `K * x` with a numeric literal K use ADDK/MULK flagged
  // kFlagConstLeft (numbers commute; the flag keeps error messages in source
  // order). Other operators keep the literal in a register.
  if ((e.op == ast::BinOp::Add || e.op == ast::BinOp::Mul) && !numeric_literal(*e.rhs)) {
    if (auto k = small_numeric_const(*e.lhs)) {
      int saved_top = regs_.top();
      Reg rhs = expr_any(*e.rhs);
      uint32_t pc = code_.emit_abc(kArith[static_cast<int>(e.op)].konst, dst, rhs, *k);
      code_.set_flags(pc, kFlagConstLeft);
      regs_.free_to(saved_top);
      return;
    }
  }
  int saved_top = regs_.top();
  // A long left spine (`a + b + c + ...`, which the parser lets grow past
  // the nesting limit) is compiled in a loop into one temporary; a short
  // one recursively, as any operand.
  std::vector<const ast::Binary*> spine;
  for (const ast::Expr* l = e.lhs.get(); l->kind == ast::ExprKind::Binary && spine.size() <= kLongSpine;
       l = as<ast::Binary>(*l).lhs.get())
    spine.push_back(&as<ast::Binary>(*l));
  if (spine.size() > kLongSpine) {
    while (spine.back()->lhs->kind == ast::ExprKind::Binary) spine.push_back(&as<ast::Binary>(*spine.back()->lhs));
    const Reg acc = alloc();
    binary_to(*spine.back(), acc);  // the innermost: its left operand is no Binary
    for (size_t i = spine.size() - 1; i-- > 0;) {
      AtNode at(*this, spine[i]->loc);
      emit_arith(spine[i]->op, acc, acc, *spine[i]->rhs);
    }
    emit_arith(e.op, dst, acc, *e.rhs);
    regs_.free_to(saved_top);
    return;
  }
  Reg lhs = expr_any(*e.lhs);
  emit_arith(e.op, dst, lhs, *e.rhs);
  regs_.free_to(saved_top);
}

void FunctionCompiler::compare_to(const ast::Compare& e, Reg dst) {
  int saved_top = regs_.top();
  Reg lhs = expr_any(*e.lhs);
  Reg rhs = expr_any(*e.rhs);
  code_.emit_abc(kCompareValue[static_cast<int>(e.op)], dst, lhs, rhs);
  regs_.free_to(saved_top);
}

void FunctionCompiler::logical_to(const ast::Logical& e, Reg dst) {
  // `a and b`: if a is false it is the result; otherwise b, which must be a
  // bool too. JMPF/JMPT check a; CHKBOOL checks b.
  Label end;
  expr_to(*e.lhs, dst);
  code_.emit_jump(e.op == ast::LogicOp::And ? Op::JMPF : Op::JMPT, dst, end);
  expr_to(*e.rhs, dst);
  code_.emit_abc(Op::CHKBOOL, dst, 0, 0);
  code_.bind(end);
}

// ---------------------------------------------------------------- calls, indexing

void FunctionCompiler::call_to(const ast::Call& e, Reg dst) {
  int saved_top = regs_.top();
  // dst is scratch (see the header); when nothing is above it the call can
  // be laid out in place and needs no final MOVE.
  Reg base = (dst + 1 == regs_.top()) ? dst : alloc();
  expr_to(*e.callee, base);
  regs_.free_to(base + 1);
  exprs_to_consecutive(e.args, 0, e.args.size());
  for (const auto& kw : e.kwargs) {
    Reg r = alloc();
    expr_to(*kw.value, r);
    regs_.free_to(r + 1);
  }
  int nargs = static_cast<int>(e.args.size());
  uint32_t pc;
  if (e.kwargs.empty()) {
    pc = code_.emit_abc(Op::CALL, base, nargs, 0);
  } else {
    std::vector<Value> names;
    names.reserve(e.kwargs.size());
    for (const auto& kw : e.kwargs) names.push_back(make_str(kw.name));
    uint32_t k = code_.constants().add(make_list(std::move(names)));
    if (k > std::numeric_limits<uint16_t>::max()) error("function too large", e.loc);
    pc = code_.emit_abc(Op::CALLKW, base, nargs, static_cast<int>(k));
  }
  if (e.callee->kind == ast::ExprKind::Name)
    proto_.call_names.emplace_back(pc, as<ast::Name>(*e.callee).name);
  if (base != dst) code_.emit_abc(Op::MOVE, dst, base, 0);
  regs_.free_to(saved_top);
}

void FunctionCompiler::index_to(const ast::Index& e, Reg dst) {
  int saved_top = regs_.top();
  if (e.indices.size() == 1) {
    Reg obj = expr_any(*e.object);
    Reg idx = expr_any(*e.indices[0]);
    code_.emit_abc(Op::GETINDEX, dst, obj, idx);
  } else {
    // GETINDEXN reads the object and its indices from consecutive registers.
    Reg base = alloc();
    expr_to(*e.object, base);
    regs_.free_to(base + 1);
    exprs_to_consecutive(e.indices, 0, e.indices.size());
    code_.emit_abc(Op::GETINDEXN, dst, base, static_cast<int>(e.indices.size()));
  }
  regs_.free_to(saved_top);
}

}  // namespace tessera
