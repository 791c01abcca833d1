"""elementwise_chain, NumPy twin of elementwise_chain.tsb (see there). Args: [N] [W]. main(step)
serves the numexpr and Numba twins too (their step, these inputs and this loop)."""
import numpy as np
from scipy.special import expit  # NumPy's sigmoid: one ufunc, as torch.sigmoid and Tessera's
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, y):
    return np.tanh(y * 1.3 + x) * expit(y - 0.2) * 1.7 + x * 0.05


def inputs():
    x = (np.sin(phase(np, 1024, 1024, 0.375, 0.8125)) * 0.5).reshape(-1)
    y = (np.cos(phase(np, 1024, 1024, 0.625, 0.3125)) * 0.5).reshape(-1)
    return x, y


def main(step=step):
    n, w = bench_args(100, 60)
    x, y = inputs()

    def body(i):
        nonlocal x
        x = step(x, y)

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, x), iter_seconds)


if __name__ == "__main__":
    main()
