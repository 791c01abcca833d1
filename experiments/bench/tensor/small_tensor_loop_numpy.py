"""small_tensor_loop, NumPy twin of small_tensor_loop.tsb (see there). Args: [N] [W]."""
import time

import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report


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
        s = np.tanh(s * ca + cb) * 0.9 + s * 0.1
        acc += float(np.sum(s * s))
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, s) + acc, durations(t0, ends[w:]))


main()
