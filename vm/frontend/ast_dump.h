// Compact S-expression rendering of the AST, for tests and debugging.
//
//   let x = 1 + 2 * 3      ->  (let x (+ 1 (* 2 3)))
//   -a[i, j]               ->  (neg (index a i j))
//   f(a, k=1)              ->  (call f a (kw k 1))
//
// Forms: literals as written (floats always with '.', 'e', inf or nan;
// strings re-escaped in double quotes), (list ...), (neg x), (not x),
// (OP a b) for binary/compare/logical, (call f args... (kw name v)...),
// (index a i...), (let x e), (= x e), (+= x e), (= (index a i) e),
// (if c (block ...) (elif c (block ...)) (else (block ...))), (while c B),
// (for v (range a b c) B), (for v ITER B), (break), (continue), (return),
// (return e), (fn name (params...) B), (block stmts...). A program is its
// top-level statements, one per line.
#pragma once

#include <string>

#include "vm/frontend/ast.h"

namespace tessera::ast {

std::string dump(const Program& program);
std::string dump(const Stmt& stmt);
std::string dump(const Expr& expr);

}  // namespace tessera::ast
