#!/usr/bin/env python3
"""PyTorch eager on the GPU, the peer of experiments/micro/cuda_device_bench: the same cases
(the tensor suite's elementwise chain, a mul-add, softmax then rms_norm rows, layer_norm after a
residual add, a row sum of a product) at the same shapes, one PyTorch operation at a time, timed
with CUDA events (median of --reps runs after warm-up). Prints JSON:
{"device": NAME, "torch": VERSION, "ms": {case: milliseconds}}.

  python3 experiments/harness/torch_eager_gpu.py [--reps 20]
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"PyTorch is not installed: {e}")
    if not torch.cuda.is_available():
        sys.exit("PyTorch sees no CUDA device")
    dev = torch.device("cuda")

    def wave(*shape):
        n = 1
        for s in shape:
            n *= s
        i = torch.arange(n, device=dev, dtype=torch.float32) % 10007
        return torch.sin(0.37 * i).reshape(shape)

    cases = {}
    x, y = wave(64 << 20), wave(64 << 20)
    cases["chain_64M"] = lambda: torch.tanh(x * 1.3 + y) * torch.sigmoid(x - 0.2) * 1.7 + y * 0.05
    a, b = wave(8192, 8192), wave(8192, 8192)
    cases["muladd_8192x8192"] = lambda: (a * b + a) * 0.5
    s, w = wave(16384, 1024), wave(1024)
    cases["softmax_rms_16384x1024"] = lambda: F.rms_norm(torch.softmax(s * 0.5, dim=1), (1024,), weight=w, eps=1e-6)
    l1, l2, lw, lb = wave(8192, 4096), wave(8192, 4096), wave(4096), wave(4096)
    cases["layernorm_8192x4096"] = lambda: F.layer_norm(l1 + l2, (4096,), lw, lb, 1e-5)
    r1, r2 = wave(65536, 256), wave(65536, 256)
    cases["rowsum_65536x256"] = lambda: (r1 * r2).sum(dim=1)

    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "ms": {}}
    for name, fn in cases.items():
        for _ in range(3):
            fn()
        times = []
        for _ in range(args.reps):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        out["ms"][name] = statistics.median(times)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
