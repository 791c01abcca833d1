"""softmax_rmsnorm, NumPy twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]. main(step)
serves the numexpr and Numba twins too (their step, these inputs and this loop)."""
import numpy as np
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, g):
    z = x * 2.0
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e / np.sqrt(np.mean(e * e, axis=-1, keepdims=True) + 1e-6) * g


def inputs():
    x = np.sin(phase(np, 1024, 1024, 0.375, 0.8125)) * 1.5
    g = (np.cos(phase(np, 1, 1024, 0.0, 0.3125)) * 0.5 + 1.0).reshape(-1)
    return x, g


def main(step=step):
    n, w = bench_args(100, 60)
    x, g = inputs()
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = step(x, g)
        acc += float(out[i % 1024, i * 37 % 1024])

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, out) + acc, iter_seconds)


if __name__ == "__main__":
    main()
