"""mlp_block, Numba twin of mlp_block.tsb (see there). Args: [N] [W]. One @njit(parallel=True)
function: the products with np.dot (BLAS), the bias and gelu (the exact erf form, math.erf) and
then the bias and residual as prange loops over the rows, in place on the products' outputs, in
f32 (a float64 constant would promote the arithmetic to f64). The threading layer is workqueue
(tensor_twin.numba_threading_layer says why). Numba compiles on the first call, in the warm-up
iterations."""
import math
import time

import numba
import numpy as np
from numba import njit, prange
from tensor_twin import bench_args, checksum, durations, numba_threading_layer, phase, report

numba_threading_layer(numba)
ONE, HALF, RSQRT2 = np.float32(1), np.float32(0.5), np.float32(1.0 / math.sqrt(2.0))


@njit(parallel=True)
def step(x, w1, b1, w2, b2):
    h = np.dot(x, w1)
    for r in prange(h.shape[0]):
        for c in range(h.shape[1]):
            v = h[r, c] + b1[c]
            h[r, c] = v * HALF * (ONE + math.erf(v * RSQRT2))
    out = np.dot(h, w2)
    for r in prange(out.shape[0]):
        for c in range(out.shape[1]):
            out[r, c] = out[r, c] + b2[c] + x[r, c]
    return out


def main():
    n, w = bench_args(200, 60)
    x = np.sin(phase(np, 128, 256, 0.375, 0.8125)) * 0.5
    w1 = np.cos(phase(np, 256, 1024, 0.625, 0.3125)) * 0.25
    b1 = (np.sin(phase(np, 1, 1024, 0.0, 0.1875)) * 0.125).reshape(-1)
    w2 = np.sin(phase(np, 1024, 256, 0.8125, 0.625)) * 0.03125
    b2 = (np.cos(phase(np, 1, 256, 0.0, 0.4375)) * 0.125).reshape(-1)
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        out = step(x, w1, b1, w2, b2)
        acc += float(out[i % 128, i * 37 % 256])
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, out) + acc, durations(t0, ends[w:]))


main()
