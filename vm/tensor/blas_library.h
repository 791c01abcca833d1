// OpenBLAS, the f32 matrix product's library, loaded (dlopen) by the first
// product that needs it rather than when the process starts: its start
// (worker threads, buffers) took several milliseconds of every run,
// scripts that never multiply matrices included (issue 17's start-up).
#pragma once

namespace tessera {

// cblas_sgemm's signature, with cblas.h's enums as ints.
using BlasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                           int lda, const float* b, int ldb, float beta, float* c, int ldc);

// The process's cblas_sgemm, loaded once (thread-safe). The library is
// TESSERA_OPENBLAS_LIBRARY when set (that file alone), else libopenblas.so.0
// (the loader's search: RPATH, LD_LIBRARY_PATH, the system's), else the file
// the build found. Throws RuntimeError saying what was tried when none loads.
BlasSgemm blas_sgemm();

}  // namespace tessera
