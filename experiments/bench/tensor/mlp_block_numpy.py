"""mlp_block, NumPy twin of mlp_block.tsb (see there). Args: [N] [W]. gelu is the exact erf form,
with scipy's vectorized erf (NumPy has none)."""
import math
import time

import numpy as np
from scipy.special import erf
from tensor_twin import bench_args, checksum, durations, phase, report


def step(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = h * 0.5 * (1.0 + erf(h * (1.0 / math.sqrt(2.0))))
    return h @ w2 + b2 + x


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
