#!/usr/bin/env python3
"""PyTorch on the GPU, the peer of experiments/micro/attention_bench: the same cells (attention
[B, H, S, D], causal or not, f16/bf16; products [M, K] x [K, N], alone and with + bias and relu),
attention through torch.nn.functional.scaled_dot_product_attention under each backend that
torch.nn.attention.sdpa_kernel selects (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION,
MATH; a backend that refuses a shape, or runs out of memory, is reported so, with its message),
products through torch.matmul (then the bias add and relu eagerly). Timed with CUDA events: warm-up
launches, then samples (the same protocol and budgets as attention_bench); per cell and backend the
median, its 95% confidence interval and TFLOP/s (FlashAttention-2's FLOP count: 4 B S^2 H D,
halved when causal; products 2 M N K).

The cells come from attention_bench itself (--cells FILE: its `--list` JSON; or --bench PATH with
--profile), so the two measure the same list. Where PyTorch or a GPU is missing it says so, writes
a JSON saying why ({"skipped": WHY}) and exits 0.

  python3 experiments/harness/torch_attention_gpu.py --bench build/experiments/micro/attention_bench \\
      --profile quick --json torch.json
"""
import argparse
import json
import math
import subprocess
import sys
import time

BACKENDS = ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"]


def median_ci(samples):
    """(median, low, high): the median and its distribution-free 95% confidence interval, the order
    statistics n/2 -+ 1.96 sqrt(n)/2 (as attention_bench computes it)."""
    x = sorted(samples)
    n = len(x)
    med = x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
    half = 1.96 * math.sqrt(n) / 2

    def at(rank):
        return x[int(min(max(rank, 0), n - 1))]
    return med, at(math.floor(n / 2 - half) - 1), at(math.ceil(n / 2 + half))


def emit(doc, path):
    text = json.dumps(doc, indent=1) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def load_cells(args):
    if args.cells:
        with open(args.cells) as f:
            return json.load(f)["cells"]
    cmd = [args.bench, "--list", "--profile", args.profile]
    return json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout)["cells"]


class Timer:
    """The protocol over a callable that enqueues work on the current stream."""

    def __init__(self, torch, args):
        self.torch, self.args = torch, args

    def time_ms(self, fn, n):
        t = self.torch
        start, stop = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / n

    def measure(self, fn, flops):
        a = self.args
        fn()  # the first call (cuDNN's plan, a kernel's load)
        est = self.time_ms(fn, 1)
        per = int(min(max(math.ceil(0.1 / max(est, 1e-6)), 1), 32))  # ~0.1 ms a sample at least
        warmup, iters = a.warmup, a.iters
        budget_ms = a.cell_budget_s * 1000
        if est * per * (warmup + iters) > budget_ms:
            iters = max(5, int(budget_ms / (est * per) * 0.9))
            warmup = min(max(iters // 10, 1), a.warmup)
            iters = min(iters, a.iters)
        for _ in range(warmup):
            fn()
        samples = [self.time_ms(fn, per) for _ in range(iters)]
        med, lo, hi = median_ci(samples)
        return {"stats": {"median_ms": med, "ci95_ms": [lo, hi], "mean_ms": sum(samples) / len(samples),
                          "min_ms": min(samples), "max_ms": max(samples), "samples": len(samples),
                          "launches_per_sample": per, "warmup": warmup},
                "tflops": flops / (med * 1e-3) / 1e12, "tflops_ci95": [flops / (hi * 1e-3) / 1e12, flops / (lo * 1e-3) / 1e12]}


def wave(torch, shape, dtype, scale, phase):
    """scale * sin(0.37 i + phase) over a period of 4093 elements, as attention_bench fills its inputs."""
    n = math.prod(shape)
    i = torch.arange(n, device="cuda", dtype=torch.float64) % 4093
    return (scale * torch.sin(0.37 * i + phase)).to(dtype).reshape(shape)


def first_line(e):
    text = str(e).strip()
    return (text.splitlines() or [type(e).__name__])[0][:300]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", help="attention_bench --list's JSON (the cells to measure)")
    ap.add_argument("--bench", default="build/experiments/micro/attention_bench",
                    help="attention_bench, asked for its list when --cells is not given")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--cell-budget-s", type=float, default=10, help="the timed loop of one backend and cell, at most")
    ap.add_argument("--budget-s", type=float, default=0, help="cells not started by then are skipped (0: none)")
    ap.add_argument("--json", help="write the JSON here (default: stdout)")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        why = f"PyTorch (with torch.nn.attention) is not installed: {e}"
        print(f"torch_attention_gpu: {why}", file=sys.stderr)
        emit({"skipped": why, "results": []}, args.json)
        return 0
    if not torch.cuda.is_available():
        why = f"PyTorch {torch.__version__} sees no CUDA device"
        print(f"torch_attention_gpu: {why}", file=sys.stderr)
        emit({"skipped": why, "torch": torch.__version__, "results": []}, args.json)
        return 0
    cells = load_cells(args)
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    timer = Timer(torch, args)
    results = []
    start = time.monotonic()
    for cell in cells:
        row = {"cell": cell["id"], "kind": cell["kind"], "dtype": cell["dtype"], "shape": cell["shape"],
               "causal": cell["causal"], "flops": cell["flops"]}
        names = BACKENDS if cell["kind"] == "attention" else ["eager"]
        if args.budget_s and time.monotonic() - start > args.budget_s:
            for name in names:
                results.append({**row, "backend": name, "status": "skipped",
                                "reason": f"the run's time budget of {args.budget_s:g} s was spent (--budget-s)"})
            continue
        dt = dtypes[cell["dtype"]]
        t0 = time.monotonic()
        try:
            if cell["kind"] == "attention":
                shape = cell["shape"]
                q, k, v = (wave(torch, shape, dt, 1.0, p) for p in (0.1, 0.4, 0.7))
                calls = {}
                for name in BACKENDS:
                    backend = getattr(SDPBackend, name, None)
                    calls[name] = (backend, (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=cell["causal"])))
            else:
                m, n, kk = cell["shape"]
                a = wave(torch, [m, kk], dt, 1.0, 0.1)
                b = wave(torch, [kk, n], dt, 1.0 / math.sqrt(kk), 0.7)
                if cell["kind"] == "matmul":
                    fn = lambda: torch.matmul(a, b)  # noqa: E731
                else:
                    bias = wave(torch, [n], dt, 0.25, 0.3)
                    fn = lambda: torch.relu(torch.matmul(a, b) + bias)  # noqa: E731
                calls = {"eager": (None, fn)}
            for name, (backend, fn) in calls.items():
                r = {**row, "backend": name}
                if name != "eager" and backend is None:
                    results.append({**r, "status": "refused", "reason": f"SDPBackend.{name} is not in PyTorch {torch.__version__}"})
                    continue
                try:
                    if backend is None:
                        r.update(timer.measure(fn, cell["flops"]))
                    else:
                        with sdpa_kernel(backend):
                            r.update(timer.measure(fn, cell["flops"]))
                    r["status"] = "ok"
                except torch.cuda.OutOfMemoryError as e:
                    r.update(status="refused", reason="out of memory: " + first_line(e))
                except RuntimeError as e:  # the backend does not take this shape, dtype or device
                    r.update(status="refused", reason=first_line(e))
                torch.cuda.synchronize()
                results.append(r)
        except torch.cuda.OutOfMemoryError as e:
            for name in names:
                results.append({**row, "backend": name, "status": "refused", "reason": "inputs: out of memory: " + first_line(e)})
        finally:
            calls = q = k = v = a = b = bias = fn = None
            torch.cuda.empty_cache()
        print(f"  {cell['id']:<44} {time.monotonic() - t0:5.1f} s  " + "  ".join(
            f"{r['backend']} {r['stats']['median_ms']:.3f} ms" if r.get("status") == "ok" else f"{r['backend']} {r['status']}"
            for r in results if r["cell"] == cell["id"]), file=sys.stderr)
    emit({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
          "results": results, "seconds": time.monotonic() - start}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
