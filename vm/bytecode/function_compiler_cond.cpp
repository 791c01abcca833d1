// FunctionCompiler: conditions of if/elif/while as compare-and-branch code.
#include "vm/bytecode/function_compiler.h"

namespace tessera {

namespace {

// Compare-and-branch forms of each comparison. Gt/Ge have no register form:
// `a > b` is `b < a` (both operands are already in registers, evaluated in
// source order, so swapping them at the test is safe).
struct CompareBranch {
  Op reg;
  bool swap;
  Op konst;
  Op negated_reg;    // the exact logical negation, or NumOps if none
  Op negated_konst;  // (orderings have none: NaN makes not(a<b) != a>=b)
};
constexpr CompareBranch kCompareBranch[] = {
    /* Eq */ {Op::JEQ, false, Op::JEQK, Op::JNE, Op::JNEK},
    /* Ne */ {Op::JNE, false, Op::JNEK, Op::JEQ, Op::JEQK},
    /* Lt */ {Op::JLT, false, Op::JLTK, Op::NumOps, Op::NumOps},
    /* Le */ {Op::JLE, false, Op::JLEK, Op::NumOps, Op::NumOps},
    /* Gt */ {Op::JLT, true, Op::JGTK, Op::NumOps, Op::NumOps},
    /* Ge */ {Op::JLE, true, Op::JGEK, Op::NumOps, Op::NumOps},
};

}  // namespace

void FunctionCompiler::cond_jump(const ast::Expr& e, bool jump_if, Label& target) {
  AtNode at(*this, e.loc);
  int saved_top = regs_.top();
  if (e.kind == ast::ExprKind::Compare) {
    compare_jump(static_cast<const ast::Compare&>(e), jump_if, target);
  } else if (e.kind == ast::ExprKind::Unary &&
             static_cast<const ast::Unary&>(e).op == ast::UnOp::Not) {
    cond_jump(*static_cast<const ast::Unary&>(e).operand, !jump_if, target);
  } else if (e.kind == ast::ExprKind::Logical) {
    const auto& l = static_cast<const ast::Logical&>(e);
    // `a and b` jumps on false as soon as a is false; on true only when both
    // are (and vice versa for `or`).
    bool short_circuit_on = l.op == ast::LogicOp::Or;
    if (jump_if == short_circuit_on) {
      cond_jump(*l.lhs, jump_if, target);
      cond_jump(*l.rhs, jump_if, target);
    } else {
      Label skip;
      cond_jump(*l.lhs, short_circuit_on, skip);
      cond_jump(*l.rhs, jump_if, target);
      code_.bind(skip);
    }
  } else {
    Reg r = expr_any(e);
    code_.emit_jump(jump_if ? Op::JMPT : Op::JMPF, r, target);
  }
  regs_.free_to(saved_top);
}

void FunctionCompiler::compare_jump(const ast::Compare& e, bool jump_if, Label& target) {
  const CompareBranch& cb = kCompareBranch[static_cast<int>(e.op)];
  Reg lhs = expr_any(*e.lhs);
  // The pair `Jxx; JMP target` jumps when the test is false. To jump when it
  // is true use the negated test if it exists, else hop over an extra JMP.
  bool negate = jump_if && cb.negated_reg != Op::NumOps;
  bool hop = jump_if && !negate;
  if (auto k = small_numeric_const(*e.rhs)) {
    code_.emit_abc(negate ? cb.negated_konst : cb.konst, lhs, *k, 0);
  } else {
    Reg rhs = expr_any(*e.rhs);
    Op op = negate ? cb.negated_reg : cb.reg;
    if (cb.swap)
      code_.emit_abc(op, rhs, lhs, 0);
    else
      code_.emit_abc(op, lhs, rhs, 0);
  }
  if (hop) {
    Label skip;
    code_.emit_jump(Op::JMP, 0, skip);
    code_.emit_jump(Op::JMP, 0, target);
    code_.bind(skip);
  } else {
    code_.emit_jump(Op::JMP, 0, target);
  }
}

}  // namespace tessera
