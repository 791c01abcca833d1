"""elementwise_chain, PyTorch (eager) twin of elementwise_chain.tsb (see there). Args: [N] [W]."""
import time

import torch
from tensor_twin import bench_args, checksum, durations, phase, report


def step(x, y):
    return torch.tanh(y * 1.3 + x) * torch.sigmoid(y - 0.2) * 1.7 + x * 0.05


def main():
    n, w = bench_args(100, 60)
    x = (torch.sin(phase(torch, 1024, 1024, 0.375, 0.8125)) * 0.5).reshape(-1)
    y = (torch.cos(phase(torch, 1024, 1024, 0.625, 0.3125)) * 0.5).reshape(-1)
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        x = step(x, y)
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(torch, x), durations(t0, ends[w:]))


main()
