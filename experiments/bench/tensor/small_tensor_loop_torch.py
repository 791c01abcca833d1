"""small_tensor_loop, PyTorch (eager) twin of small_tensor_loop.tsb (see there). Args: [N] [W]."""
import torch
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def main():
    n, w = bench_args(100000, 60)
    s = torch.sin(phase(torch, 4, 4, 0.375, 0.8125)) * 0.5
    ca = torch.cos(phase(torch, 4, 4, 0.625, 0.3125))
    cb = torch.sin(phase(torch, 4, 4, 0.8125, 0.625)) * 0.5
    acc = 0.0

    def body(i):
        nonlocal s, acc
        s = torch.tanh(s * ca + cb) * 0.9 + s * 0.1
        acc += torch.sum(s * s).item()

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, s) + acc, iter_seconds)


main()
