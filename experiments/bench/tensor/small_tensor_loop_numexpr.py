"""small_tensor_loop, numexpr twin of small_tensor_loop.tsb (see there). Args: [N] [W]. Two numexpr
calls per iteration: the update, and sum(s * s) (numexpr's reduction, fused with the square).
Constants are f32 scalars (numexpr reads a float literal as a double)."""
import time

import numexpr as ne
import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report

K09, K01 = np.float32(0.9), np.float32(0.1)


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
        s = ne.evaluate("tanh(s * ca + cb) * K09 + s * K01")
        acc += float(ne.evaluate("sum(s * s)"))
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, s) + acc, durations(t0, ends[w:]))


main()
