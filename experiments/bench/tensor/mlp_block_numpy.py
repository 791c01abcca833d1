"""mlp_block, NumPy twin of mlp_block.tsb (see there). Args: [N] [W]. gelu is the exact erf form,
with scipy's vectorized erf (NumPy has none). main(step) serves the numexpr and Numba twins too
(their step, these inputs and this loop)."""
import math

import numpy as np
from scipy.special import erf
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = h * 0.5 * (1.0 + erf(h * (1.0 / math.sqrt(2.0))))
    return h @ w2 + b2 + x


def inputs():
    x = np.sin(phase(np, 128, 256, 0.375, 0.8125)) * 0.5
    w1 = np.cos(phase(np, 256, 1024, 0.625, 0.3125)) * 0.25
    b1 = (np.sin(phase(np, 1, 1024, 0.0, 0.1875)) * 0.125).reshape(-1)
    w2 = np.sin(phase(np, 1024, 256, 0.8125, 0.625)) * 0.03125
    b2 = (np.cos(phase(np, 1, 256, 0.0, 0.4375)) * 0.125).reshape(-1)
    return x, w1, b1, w2, b2


def main(step=step):
    n, w = bench_args(200, 60)
    x, w1, b1, w2, b2 = inputs()
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = step(x, w1, b1, w2, b2)
        acc += float(out[i % 128, i * 37 % 256])

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, out) + acc, iter_seconds)


if __name__ == "__main__":
    main()
