"""attention_s256, PyTorch (eager) twin of attention_s256.tsb (see there); run(s, n, w) serves
attention_s1024 too. PyTorch 1.13 has no scaled_dot_product_attention, so plain eager ops:
scores = q @ k^T * scale, masked_fill(-inf) above the diagonal, softmax, @ v. Args: [N] [W]."""
import math

import torch
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def attention(q, k, v, mask, scale):
    s = (q @ k.transpose(-2, -1) * scale).masked_fill(mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def run(s, default_n, default_w=5):
    n, w = bench_args(default_n, default_w)
    shp = (2, 8, s, 64)
    q = (torch.sin(phase(torch, 16 * s, 64, 0.375, 0.8125)) * 0.5).reshape(shp)
    k = (torch.cos(phase(torch, 16 * s, 64, 0.625, 0.3125)) * 0.5).reshape(shp)
    v = (torch.sin(phase(torch, 16 * s, 64, 0.8125, 0.625)) * 0.5).reshape(shp)
    # causal: query i sees keys j <= i; True above the diagonal = masked out
    mask = torch.ones(s, s, dtype=torch.bool).triu(diagonal=1)
    scale = 1.0 / math.sqrt(64.0)
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = attention(q, k, v, mask, scale)
        acc += out[i % 2, i % 8, i * 37 % s, i % 64].item()

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(torch, out) + acc, iter_seconds)


if __name__ == "__main__":
    run(256, 30)
