"""small_tensor_loop, Numba twin of small_tensor_loop.tsb (see there). Args: [N] [W]. One @njit call
per iteration: the update and sum(s * s) in one loop over the 16 elements, in f32 (a float64
constant would promote the arithmetic to f64). Not parallel: 16 elements are far too few to
share among threads. Numba compiles on the first call, in the warm-up iterations."""
import math
import time

import numpy as np
from numba import njit
from tensor_twin import bench_args, checksum, durations, phase, report

ZERO, K09, K01 = np.float32(0), np.float32(0.9), np.float32(0.1)


@njit
def step(s, ca, cb):
    out = np.empty_like(s)
    ss = ZERO
    for r in range(s.shape[0]):
        for c in range(s.shape[1]):
            v = math.tanh(s[r, c] * ca[r, c] + cb[r, c]) * K09 + s[r, c] * K01
            out[r, c] = v
            ss += v * v
    return out, ss


def main():
    n, w = bench_args(100000, 60)
    s = np.sin(phase(np, 4, 4, 0.375, 0.8125)) * 0.5
    ca = np.cos(phase(np, 4, 4, 0.625, 0.3125))
    cb = np.sin(phase(np, 4, 4, 0.8125, 0.625)) * 0.5
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        s, ss = step(s, ca, cb)
        acc += float(ss)
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, s) + acc, durations(t0, ends[w:]))


main()
