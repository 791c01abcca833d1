"""elementwise_chain, PyTorch (eager) twin of elementwise_chain.tsb (see there). Args: [N] [W]."""
import torch
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, y):
    return torch.tanh(y * 1.3 + x) * torch.sigmoid(y - 0.2) * 1.7 + x * 0.05


def main():
    n, w = bench_args(100, 60)
    x = (torch.sin(phase(torch, 1024, 1024, 0.375, 0.8125)) * 0.5).reshape(-1)
    y = (torch.cos(phase(torch, 1024, 1024, 0.625, 0.3125)) * 0.5).reshape(-1)

    def body(i):
        nonlocal x
        x = step(x, y)

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, x), iter_seconds)


main()
