"""softmax_rmsnorm, numexpr twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]. numexpr for the
elementwise passes, NumPy for the row reductions (numexpr's max and sum along an axis are
single-threaded and slower than NumPy's), and for the rows' 1 / sqrt(mean + 1e-6) (1024 values,
not one per element). The * 2.0 is folded into the exp pass: max(2x) is 2 max(x) exactly.
Constants are f32 scalars (numexpr reads a float literal as a double)."""
import time

import numexpr as ne
import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report

TWO, EPS = np.float32(2.0), np.float32(1e-6)


def step(x, g):
    m = x.max(axis=-1, keepdims=True)
    e = ne.evaluate("exp(x * TWO - m * TWO)")
    d = e.sum(axis=-1, keepdims=True)
    ne.evaluate("e / d", out=e)
    r = 1 / np.sqrt(ne.evaluate("e * e").mean(axis=-1, keepdims=True) + EPS)
    return ne.evaluate("e * r * g")


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
