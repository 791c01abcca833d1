"""varying_shapes, Numba twin of varying_shapes.tsb (see there). Args: [N] [W]. The step is
elementwise_chain_numba.py's on [R, 512]: one @njit(parallel=True) loop, prange over the rows,
f32 constants; one compiled function serves every row count (shapes are not part of Numba's
signature). The threading layer is workqueue (tensor_twin.numba_threading_layer says why).
Numba compiles on the first call, in the warm-up iterations."""
import math
import time

import numba
import numpy as np
from numba import njit, prange
from tensor_twin import bench_args, checksum, durations, numba_threading_layer, phase, report

numba_threading_layer(numba)
ONE, K13, K02, K17, K005 = map(np.float32, (1, 1.3, 0.2, 1.7, 0.05))


@njit(parallel=True)
def step(x, y):
    out = np.empty_like(x)
    for r in prange(x.shape[0]):
        for c in range(x.shape[1]):
            xi, yi = x[r, c], y[r, c]
            out[r, c] = math.tanh(yi * K13 + xi) * (ONE / (ONE + math.exp(K02 - yi))) * K17 + xi * K005
    return out


def main():
    n, w = bench_args(200, 60)
    xs = [np.sin(phase(np, 256 + 64 * k, 512, 0.375, 0.8125)) * 0.5 for k in range(5)]
    ys = [np.cos(phase(np, 256 + 64 * k, 512, 0.625, 0.3125)) * 0.5 for k in range(5)]
    out = xs[0]
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        k = i % 5
        out = step(xs[k], ys[k])
        acc += float(out[i % 256, i * 37 % 512])
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, out) + acc, durations(t0, ends[w:]))


main()
