"""small_tensor_loop, NumPy twin of small_tensor_loop.tsb (see there). Args: [N] [W]. main(step)
serves the numexpr and Numba twins too (their step, these inputs and this loop); a step returns
the new s and sum(s * s)."""
import numpy as np
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(s, ca, cb):
    s = np.tanh(s * ca + cb) * 0.9 + s * 0.1
    return s, np.sum(s * s)


def inputs():
    s = np.sin(phase(np, 4, 4, 0.375, 0.8125)) * 0.5
    ca = np.cos(phase(np, 4, 4, 0.625, 0.3125))
    cb = np.sin(phase(np, 4, 4, 0.8125, 0.625)) * 0.5
    return s, ca, cb


def main(step=step):
    n, w = bench_args(100000, 60)
    s, ca, cb = inputs()
    acc = 0.0

    def body(i):
        nonlocal s, acc
        s, ss = step(s, ca, cb)
        acc += float(ss)

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, s) + acc, iter_seconds)


if __name__ == "__main__":
    main()
