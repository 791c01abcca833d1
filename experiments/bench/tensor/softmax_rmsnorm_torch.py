"""softmax_rmsnorm, PyTorch (eager) twin of softmax_rmsnorm.tsb (see there). Args: [N] [W].
PyTorch 1.13 has no rms_norm: it is written out as Tessera defines it."""
import torch
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, g):
    s = torch.softmax(x * 2.0, dim=-1)
    return s * torch.rsqrt((s * s).mean(dim=-1, keepdim=True) + 1e-6) * g


def main():
    n, w = bench_args(100, 60)
    x = torch.sin(phase(torch, 1024, 1024, 0.375, 0.8125)) * 1.5
    g = (torch.cos(phase(torch, 1, 1024, 0.0, 0.3125)) * 0.5 + 1.0).reshape(-1)
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = step(x, g)
        acc += out[i % 1024, i * 37 % 1024].item()

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, out) + acc, iter_seconds)


main()
