"""varying_shapes, NumPy twin of varying_shapes.tsb (see there). Args: [N] [W]. main(step) serves
the numexpr and Numba twins too (their step, these inputs and this loop)."""
import numpy as np
from scipy.special import expit  # NumPy's sigmoid: one ufunc, as torch.sigmoid and Tessera's
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, y):
    return np.tanh(y * 1.3 + x) * expit(y - 0.2) * 1.7 + x * 0.05


def inputs():
    xs = [np.sin(phase(np, 256 + 64 * k, 512, 0.375, 0.8125)) * 0.5 for k in range(5)]
    ys = [np.cos(phase(np, 256 + 64 * k, 512, 0.625, 0.3125)) * 0.5 for k in range(5)]
    return xs, ys


def main(step=step):
    n, w = bench_args(200, 60)
    xs, ys = inputs()
    out, acc = xs[0], 0.0

    def body(i):
        nonlocal out, acc
        k = i % 5
        out = step(xs[k], ys[k])
        acc += float(out[i % 256, i * 37 % 512])

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, out) + acc, iter_seconds)


if __name__ == "__main__":
    main()
