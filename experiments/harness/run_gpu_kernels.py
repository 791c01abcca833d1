#!/usr/bin/env python3
"""Fused kernels on a GPU: runs experiments/micro/cuda_device_bench (Google Benchmark, JSON) and,
where PyTorch sees the GPU, experiments/harness/torch_eager_gpu.py, and writes
experiments/results/gpu-kernels-latest.md (with --dated also a copy named by date and device).

Per case: the K2 kernel's time, the K3 kernel's (dims constant, tile and block size chosen by
timing candidates with CUDA events; the variant is named), K3's speed-up, the bytes each moves
(inputs read once, output written once) over its time as GB/s and as a share of the device's
measured device-to-device copy bandwidth, and PyTorch eager's time for the same computation with
the fused kernel's speed-up over it. Needs a GPU: run it on a GPU machine (tools/run-gpu-checks.sh
does, inside the device bundle).

  python3 experiments/harness/run_gpu_kernels.py --bench build/experiments/micro/cuda_device_bench

With --raw-dir DIR it also writes the evaluation's raw result (experiments/evaluation/
raw_results.py), DIR/<run id>-gpu-<device>/gpu_kernels.json, every repetition's time kept: the
paper's GPU table reads it once it is copied into experiments/raw/.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evaluation"))
from run_kernel_tiers import bench_arguments, built_from, collect, command_line, log, run, write_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_arguments(ap, "cuda_device_bench", "gpu-kernels-latest.md", 5, "gpu-kernels-DATE-DEVICE.md")
    ap.add_argument("--no-torch", action="store_true", help="leave out the PyTorch eager column")
    ap.add_argument("--raw-dir", help="also write the evaluation's raw result under this folder")
    args = ap.parse_args()
    data, command = run(args.bench, args.repetitions, 0.2)
    ctx = data["context"]
    device = ctx.get("device", "?")
    if device.startswith("none"):
        sys.exit(f"cuda_device_bench found no GPU ({device}): these figures need a GPU machine")
    errors = [b for b in data["benchmarks"] if b.get("error_occurred")]
    if errors:
        sys.exit("cuda_device_bench failed: " + errors[0].get("error_message", "?"))
    res = collect(data)
    cases = {int(k[4:]): v for k, v in ctx.items() if k.startswith("case") and k[4:].isdigit()}
    copy = [b for b in data["benchmarks"] if b["run_name"].startswith("BM_Copy") and b.get("run_type") == "iteration"]
    copy_gbps = statistics.median(b["GBps"] for b in copy) if copy else float("nan")
    gbps = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "iteration" and b["run_name"].startswith("BM_Kernel"):
            parts = [int(x) for x in b["run_name"].split("/")[1:] if x.isdigit()]
            gbps.setdefault((parts[0], parts[1]), []).append(b["GBps"])
    torch_ms, torch_version = {}, None
    if not args.no_torch:
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_eager_gpu.py")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode == 0:
            t = json.loads(p.stdout)
            torch_ms, torch_version = t["ms"], t["torch"]
        else:
            log("PyTorch eager not measured: " + p.stderr.strip()[-300:])
    rows, raw_cells = [], []
    for i in sorted(cases):
        k2, k3 = res.get(("BM_Kernel", i, 0)), res.get(("BM_Kernel", i, 1))
        if not k2 or not k3:
            continue
        t2, t3 = statistics.median(k2["times"]), statistics.median(k3["times"])
        g2, g3 = statistics.median(gbps[(i, 0)]), statistics.median(gbps[(i, 1)])
        best = min(t2, t3)
        eager = torch_ms.get(cases[i])
        raw_cells.append((cases[i], k2["times"] if t2 <= t3 else k3["times"],
                          dict(k2_ms=t2, k3_ms=t3, k2_samples=k2["times"], k3_samples=k3["times"],
                               k3_variant=k3["label"], best_over_copy=max(g2, g3) / copy_gbps, torch_ms=eager)))
        rows.append(f"| {cases[i]} | {t2:.3f} | {t3:.3f} | `{k3['label']}` | {t2 / t3:.2f}x | {g2:.0f} | {g3:.0f} "
                    f"| {100 * max(g2, g3) / copy_gbps:.0f}% | "
                    + (f"{eager:.3f} | {eager / best:.2f}x |" if eager else "– | – |"))
    today = datetime.date.today().isoformat()
    lines = [
        f"# Fused kernels on the GPU, {today}",
        "",
        f"- device: {device}",
        f"- device-to-device copy: {copy_gbps:.0f} GB/s (bytes read plus written; the bandwidth ceiling of the table)",
        f"- command: {command_line('run_gpu_kernels.py', command)}",
        f"- built from {built_from()}; cells: median of {args.repetitions} repetitions; PyTorch "
        + (torch_version or "not measured"),
        "",
        "| case | K2 ms | K3 ms | K3 variant | K3 speed-up | K2 GB/s | K3 GB/s | best / copy | PyTorch eager ms | fused speed-up over eager |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Cases (`experiments/micro/cuda_device_bench.cpp`): `chain` is the tensor suite's elementwise chain "
        "`tanh(x * 1.3 + y) * sigmoid(x - 0.2) * 1.7 + y * 0.05` on 64 Mi elements; `muladd` `(x * y + x) * c`; "
        "`softmax_rms` `rms_norm(softmax(x * c), weight=w)` rows; `layernorm` `layer_norm(x + y, weight=w, bias=b)`; "
        "`rowsum` `sum(x * y, axis=1)`; all f32. Kernel times are CUDA events around one launch (inputs already on "
        "the device). GB/s counts every input read once and the output written once.",
    ]
    text = "\n".join(lines) + "\n"
    slug = re.sub(r"[^a-z0-9]+", "-", device.split(" (")[0].lower()).strip("-")
    write_report(text, args.out, f"gpu-kernels-{today}-{slug}.md" if args.dated else None)
    if args.raw_dir:
        import raw_results
        w = raw_results.RawWriter(raw_results.new_run_id("gpu-" + slug), "gpu", "gpu_kernels",
                                  "Fused kernels on the GPU against copy bandwidth and PyTorch eager",
                                  {"command": command, "repetitions": args.repetitions},
                                  {"repetitions": args.repetitions, "timer": "CUDA events around one launch"},
                                  {"torch": torch_version})
        for case, samples, extra in raw_cells:
            w.cell(case, samples, unit="ms", **extra)
        w.doc["derived"].update(device=device, copy_gb_s=copy_gbps,
                                note="Medians of the repetitions; best / copy: the faster tier's GB/s over the "
                                     "device-to-device copy's.")
        log(f"wrote {w.write(args.raw_dir)}")
    print(text)


if __name__ == "__main__":
    main()
