// The kernel IR's text form (docs/tensor-jit.md has an example):
//
//   kernel @softmax_rows
//     dims N, D                      (K3: dims N=1024, D=64)
//     in %x : f32[N, D]
//     out %y : f32[N, D]
//     grid [N]                       (extents: 4*N*D, cdiv(N*D, 1024))
//   {
//     %row = program_id 0 : i64
//     %c = const 1.5 : f32
//     %m = cmp.lt %a, %b : tile<256xi1>
//     %v = load %x[%off], mask %m, other %o : tile<256xf32>
//     %s = reduce.sum %v, axis 0 : f32
//     %r, %q = for %k = %lo to %hi step %st iter(%a = %a0, %b = %b0) {
//       ...
//       yield %a1, %b1
//     }
//     store %y[%off], %v, mask %m
//   }
//
// print(parse(text)) == text for printed text; `//` starts a comment.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

std::string print(const Kernel& k);

// Thrown by parse: "LINE:COL: what was expected".
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Parses one kernel; the result is not verified (call verify()).
Kernel parse(std::string_view text);

}  // namespace tessera::kir
