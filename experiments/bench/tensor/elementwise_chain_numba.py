"""elementwise_chain, Numba twin of elementwise_chain.tsb (see there). Args: [N] [W]. The step is
one @njit(parallel=True) loop over the elements (prange, on Numba's threads), writing a new x as
the other twins do; sigmoid(z) is written 1 / (1 + exp(-z)). The constants, 1 included, are f32
(Numba, as NumPy's type rules, would promote f32 arithmetic with a Python float or int to f64).
The threading layer is workqueue (tensor_twin.numba_threading_layer says why). Numba compiles on
the first call, in the warm-up iterations."""
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
    for i in prange(x.size):
        xi, yi = x[i], y[i]
        out[i] = math.tanh(yi * K13 + xi) * (ONE / (ONE + math.exp(K02 - yi))) * K17 + xi * K005
    return out


def main():
    n, w = bench_args(100, 60)
    x = (np.sin(phase(np, 1024, 1024, 0.375, 0.8125)) * 0.5).reshape(-1)
    y = (np.cos(phase(np, 1024, 1024, 0.625, 0.3125)) * 0.5).reshape(-1)
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        x = step(x, y)
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, x), durations(t0, ends[w:]))


main()
