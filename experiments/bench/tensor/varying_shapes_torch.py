"""varying_shapes, PyTorch (eager) twin of varying_shapes.tsb (see there). Args: [N] [W]."""
import time

import torch
from tensor_twin import bench_args, checksum, durations, phase, report


def step(x, y):
    return torch.tanh(y * 1.3 + x) * torch.sigmoid(y - 0.2) * 1.7 + x * 0.05


def main():
    n, w = bench_args(200, 60)
    xs = [torch.sin(phase(torch, 256 + 64 * k, 512, 0.375, 0.8125)) * 0.5 for k in range(5)]
    ys = [torch.cos(phase(torch, 256 + 64 * k, 512, 0.625, 0.3125)) * 0.5 for k in range(5)]
    out = xs[0]
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        k = i % 5
        out = step(xs[k], ys[k])
        acc += float(out[i % 256, i * 37 % 512])
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(torch, out) + acc, durations(t0, ends[w:]))


main()
