// The kernel IR's rules (kernel_ir.h): what each operation accepts and what
// it gives. The builder types results with infer_result; the verifier
// checks a whole kernel, including dominance and loop structure, and is run
// on every parsed kernel and before every emitter.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

// The result type of `inst` from its operands and attributes (not For,
// Yield and Store, which give none); throws std::invalid_argument with the
// rule that failed.
Type infer_result(const Kernel& k, const Inst& inst);

// Every problem found, each as "instruction N (op): what is wrong"; empty
// when the kernel is well formed.
std::vector<std::string> verify(const Kernel& k);

}  // namespace tessera::kir
