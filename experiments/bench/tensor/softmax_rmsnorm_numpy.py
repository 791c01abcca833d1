"""softmax_rmsnorm, NumPy twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]."""
import time

import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report


def step(x, g):
    z = x * 2.0
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e / np.sqrt(np.mean(e * e, axis=-1, keepdims=True) + 1e-6) * g


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
