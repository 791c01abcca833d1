// How generated CPU kernels are called (kernel IR → cpu_emitter → LLVM).
//
// A kernel is one function  void k(const KernelArgs*, int64_t begin, int64_t end)
// that runs the programs begin .. end-1 of its grid, in order. A program's
// linear index p splits into grid coordinates with axis 0 fastest:
// p0 = p % g0, p1 = (p / g0) % g1, p2 = p / (g0 g1). The launcher
// (cpu_launch.h) hands ranges of programs to threads.
#pragma once

#include <cstdint>

namespace tessera::kir {

struct KernelArgs {
  void* const* params;   // each param's data, in the kernel's param order
  const int64_t* dims;   // each dim's value, in the kernel's dim order
  int64_t grid[3];       // the grid's extents (1 for missing axes)
};

using KernelFn = void (*)(const KernelArgs* args, int64_t begin, int64_t end);

}  // namespace tessera::kir

// What generated kernels call besides SLEEF (kernel_runtime.cpp; the
// compiler defines these names in every kernel's symbol table).
extern "C" {
// c[m, n] += a[m, k] b[k, n], f32 row-major tiles: the vector-math `dot`
// (vm/tensor/vector_math.h), the interpreter's own micro-kernel.
void tessera_kernel_dot_f32(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
}
