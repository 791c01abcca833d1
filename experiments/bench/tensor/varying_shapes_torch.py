"""varying_shapes, PyTorch (eager) twin of varying_shapes.tsb (see there). Args: [N] [W]."""
import torch
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def step(x, y):
    return torch.tanh(y * 1.3 + x) * torch.sigmoid(y - 0.2) * 1.7 + x * 0.05


def main():
    n, w = bench_args(200, 60)
    xs = [torch.sin(phase(torch, 256 + 64 * k, 512, 0.375, 0.8125)) * 0.5 for k in range(5)]
    ys = [torch.cos(phase(torch, 256 + 64 * k, 512, 0.625, 0.3125)) * 0.5 for k in range(5)]
    out, acc = xs[0], 0.0

    def body(i):
        nonlocal out, acc
        k = i % 5
        out = step(xs[k], ys[k])
        acc += float(out[i % 256, i * 37 % 512])

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, out) + acc, iter_seconds)


main()
