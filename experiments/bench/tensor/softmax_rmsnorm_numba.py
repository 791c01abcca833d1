"""softmax_rmsnorm, Numba twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]. One
@njit(parallel=True) row kernel: prange over the rows, each row in four passes (max, exp and sum,
the division and the sum of squares, the rms_norm scale), all in f32 (a float64 constant would
promote the arithmetic to f64). fastmath lets LLVM reassociate the f32 max and sums, and so
vectorize the passes that call no libm function; no value is inf or nan. The threading layer is
workqueue (tensor_twin.numba_threading_layer says why). Numba compiles on the first call, in the
warm-up iterations."""
import math
import time

import numba
import numpy as np
from numba import njit, prange
from tensor_twin import bench_args, checksum, durations, numba_threading_layer, phase, report

numba_threading_layer(numba)
ZERO, ONE, TWO, EPS = np.float32(0), np.float32(1), np.float32(2), np.float32(1e-6)


@njit(parallel=True, fastmath=True)
def step(x, g):
    rows, cols = x.shape
    out = np.empty_like(x)
    inv_cols = ONE / np.float32(cols)
    for r in prange(rows):
        m = x[r, 0] * TWO
        for c in range(1, cols):
            m = max(m, x[r, c] * TWO)
        d = ZERO
        for c in range(cols):
            e = math.exp(x[r, c] * TWO - m)
            out[r, c] = e
            d += e
        inv_d = ONE / d
        ss = ZERO
        for c in range(cols):
            p = out[r, c] * inv_d
            out[r, c] = p
            ss += p * p
        scale = ONE / math.sqrt(ss * inv_cols + EPS)
        for c in range(cols):
            out[r, c] = out[r, c] * scale * g[c]
    return out


def main():
    n, w = bench_args(100, 60)
    x = np.sin(phase(np, 1024, 1024, 0.375, 0.8125)) * 1.5
    g = (np.cos(phase(np, 1, 1024, 0.0, 0.3125)) * 0.5 + 1.0).reshape(-1)
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        out = step(x, g)
        acc += float(out[i % 1024, i * 37 % 1024])
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, out) + acc, durations(t0, ends[w:]))


main()
