// Kernel IR → LLVM IR for the host CPU (kernel_abi.h is the function it makes).
//
// Design: every tile value lives in a stack buffer (padded to whole vectors),
// and every tile operation is one loop over the tile in strips of `lanes`
// elements, with vector instructions of that width; scalars are LLVM values.
// Param loads and stores whose offsets are a scalar plus `range` are vector
// loads and stores (masked where the IR masks or the tile's tail needs it),
// other offsets gather and scatter. Transcendental functions call SLEEF's
// vector functions of that width, the same ones the interpreter's kernels
// call (vm/tensor/vector_math.h), and float sums follow the interpreter's
// order (f32 lanes i % 16, blocks of 1024 in double), so a kernel computes
// what the interpreter computes, bit for bit.
//
// Arithmetic is done on f32, i32 and i64 (f16 and bf16 are loaded, stored
// and cast, as the fusion lowering computes half precision in f32).
#pragma once

#include <memory>
#include <string>

#include "codegen/kernel/kernel_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::kir {

struct CpuTarget {
  int lanes = 8;  // f32 lanes of the vector code (8: AVX2, 4: SSE2)
};

// The module holding `fn_name`; throws std::runtime_error ("cpu emitter:
// kernel @name: ...") on what the emitter does not do, std::invalid_argument
// on a kernel the verifier refuses.
std::unique_ptr<llvm::Module> emit_cpu_kernel(const Kernel& k, const std::string& fn_name, llvm::LLVMContext& ctx,
                                              const CpuTarget& target);

}  // namespace tessera::kir
