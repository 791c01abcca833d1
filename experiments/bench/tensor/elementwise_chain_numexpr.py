"""elementwise_chain, numexpr twin of elementwise_chain.tsb (see there). Args: [N] [W]. The step is
one numexpr expression (one pass over x and y, on numexpr's threads); sigmoid(z) is written
1 / (1 + exp(-z)), numexpr having none. numexpr reads a float literal as a double, which would
make the whole expression f64: the constants are f32 scalars, named."""
import time

import numexpr as ne
import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report

K13, K02, K17, K005 = map(np.float32, (1.3, 0.2, 1.7, 0.05))


def step(x, y):
    return ne.evaluate("tanh(y * K13 + x) * (1 / (1 + exp(K02 - y))) * K17 + x * K005")


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
