"""mlp_block, PyTorch (eager) twin of mlp_block.tsb (see there). Args: [N] [W]. F.gelu is the exact
erf form by default."""
import torch
import torch.nn.functional as F
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, w1, b1, w2, b2):
    return F.gelu(x @ w1 + b1) @ w2 + b2 + x


def main():
    n, w = bench_args(200, 60)
    x = torch.sin(phase(torch, 128, 256, 0.375, 0.8125)) * 0.5
    w1 = torch.cos(phase(torch, 256, 1024, 0.625, 0.3125)) * 0.25
    b1 = (torch.sin(phase(torch, 1, 1024, 0.0, 0.1875)) * 0.125).reshape(-1)
    w2 = torch.sin(phase(torch, 1024, 256, 0.8125, 0.625)) * 0.03125
    b2 = (torch.cos(phase(torch, 1, 256, 0.0, 0.4375)) * 0.125).reshape(-1)
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = step(x, w1, b1, w2, b2)
        acc += out[i % 128, i * 37 % 256].item()

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, out) + acc, iter_seconds)


main()
