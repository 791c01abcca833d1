"""small_tensor_loop, PyTorch (eager) twin of small_tensor_loop.tsb (see there). Args: [N] [W]."""
import time

import torch
from tensor_twin import bench_args, checksum, durations, phase, report


def main():
    n, w = bench_args(100000, 60)
    s = torch.sin(phase(torch, 4, 4, 0.375, 0.8125)) * 0.5
    ca = torch.cos(phase(torch, 4, 4, 0.625, 0.3125))
    cb = torch.sin(phase(torch, 4, 4, 0.8125, 0.625)) * 0.5
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        s = torch.tanh(s * ca + cb) * 0.9 + s * 0.1
        acc += torch.sum(s * s).item()
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(torch, s) + acc, durations(t0, ends[w:]))


main()
