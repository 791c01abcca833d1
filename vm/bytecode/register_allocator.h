// Stack-discipline register allocation for one function frame.
//
// Registers are handed out in increasing order and given back by truncating
// the stack (free_to), which matches how expressions and block scopes nest.
// The high-water mark becomes FunctionProto::nregs.
#pragma once

#include <cstdint>

#include "vm/bytecode/bytecode.h"
#include "vm/core/error.h"
#include "vm/frontend/ast.h"

namespace tessera {

using Reg = uint16_t;

class RegisterAllocator {
 public:
  // The next register alloc() would return.
  int top() const { return top_; }
  // Frame size needed so far.
  int max_used() const { return max_; }

  // Allocates `n` consecutive registers and returns the first. `where` is
  // the source position blamed if the frame outgrows the encoding.
  Reg alloc(ast::Loc where, int n = 1) {
    if (top_ + n > kMaxRegisters) throw SyntaxError("function too large", where.line, where.col);
    Reg r = static_cast<Reg>(top_);
    top_ += n;
    if (top_ > max_) max_ = top_;
    return r;
  }

  // Releases every register at or above `r`.
  void free_to(int r) { top_ = r; }

 private:
  int top_ = 0;
  int max_ = 0;
};

}  // namespace tessera
