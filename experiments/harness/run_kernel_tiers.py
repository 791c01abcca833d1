#!/usr/bin/env python3
"""K2 against K3 kernels, and K2 compile latency: runs the micro-benchmark
experiments/micro/kernel_tier_bench (Google Benchmark, JSON output) and writes
experiments/results/kernel-tiers-latest.md (and, with --dated, a copy named by
today's date).

Per case (a fused region at one shape): the K2 kernel's time per run, the K3
kernel's (dims constant, variant chosen by the tuner, named in the table), the
speed-up K2 / K3, and the K2 kernel's compile time (kernel IR to object code).
Cells are medians over --repetitions runs of each benchmark.

  cmake --build build --target kernel_tier_bench
  python3 experiments/harness/run_kernel_tiers.py [--bench build/experiments/micro/kernel_tier_bench]
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import REPO, cpu_model, git_out  # noqa: E402
import results_index  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def bench_arguments(ap, bench, report, repetitions, dated_name):
    """The options every benchmark harness has: the benchmark binary (under build/experiments/micro),
    repetitions, the report (under experiments/results) and --dated."""
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "experiments", "micro", bench))
    ap.add_argument("--repetitions", type=int, default=repetitions)
    ap.add_argument("--out", default=os.path.join(REPO, "experiments", "results", report))
    ap.add_argument("--dated", action="store_true", help=f"also write {dated_name} beside it")


def built_from():
    """'commit X', with ' plus uncommitted changes' where the tree differs (the results a run
    replaces do not count); inside the device bundle, which has no git, the commit it was built from."""
    commit = git_out(REPO, "rev-parse", "--short=12", "HEAD")
    if not commit:
        bundled = os.path.join(REPO, "COMMIT")
        return "commit " + (open(bundled).read().strip() if os.path.exists(bundled) else "unknown")
    dirty = bool(git_out(REPO, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!experiments/results"))
    return f"commit {commit}{' plus uncommitted changes' if dirty else ''}"


def command_line(script, command):
    """How a report was made: the harness script, and the benchmark command it ran."""
    words = command.split()
    return f"`python3 experiments/harness/{script}` (ran `{os.path.relpath(words[0], REPO)} {' '.join(words[1:])}`)"


def write_report(text, out, dated_name=None):
    """Writes the report to `out` and, given a name, a dated copy beside it; then the folder's index."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    paths = [out] + ([os.path.join(os.path.dirname(out), dated_name)] if dated_name else [])
    for path in paths:
        with open(path, "w") as f:
            f.write(text)
        log(f"wrote {path}")
    results_index.refresh(os.path.dirname(out))


def run(bench, repetitions, min_time):
    """Runs the Google Benchmark binary `bench` (JSON output): (the data, the command line)."""
    if not os.path.exists(bench):
        sys.exit(f"{bench} not found: cmake --build build --target {os.path.basename(bench)}")
    # Repetitions of all benchmarks in a random order, so that a slow moment of
    # the machine (a VM's other vCPU taken away) hits K2 and K3 alike instead of
    # the one benchmark that ran then.
    cmd = [bench, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           f"--benchmark_min_time={min_time}", "--benchmark_enable_random_interleaving=true"]
    log("running: " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"{bench} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads(p.stdout), " ".join(cmd)


def collect(data):
    """{(bench, case index, tier or None): {"times": [...], "label": str}} over the repetitions."""
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        parts = b["run_name"].split("/")
        name, args = parts[0], [int(x) for x in parts[1:] if x.isdigit()]
        key = (name, args[0], args[1] if len(args) > 1 else None)
        # Times in the benchmark's unit: microseconds for runs, milliseconds for compiles.
        e = out.setdefault(key, {"times": [], "label": b.get("label", "")})
        e["times"].append(b["real_time"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_arguments(ap, "kernel_tier_bench", "kernel-tiers-latest.md", 5, "kernel-tiers-DATE.md")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per benchmark run (default 0.2)")
    args = ap.parse_args()
    data, command = run(args.bench, args.repetitions, args.min_time)
    cases = {int(k[4:]): v for k, v in data["context"].items() if k.startswith("case") and k[4:].isdigit()}
    res = collect(data)
    rows, speedups, min_speedups, compiles = [], [], [], []
    for i in sorted(cases):
        k2, k3 = res.get(("BM_Run", i, 0)), res.get(("BM_Run", i, 1))
        comp = res.get(("BM_CompileK2", i, None))
        if not k2 or not k3:
            continue
        t2, t3 = statistics.median(k2["times"]), statistics.median(k3["times"])
        m2, m3 = min(k2["times"]), min(k3["times"])
        c = statistics.median(comp["times"]) if comp else float("nan")
        speedups.append(t2 / t3)
        min_speedups.append(m2 / m3)
        if comp:
            compiles.append(c)
        rows.append(f"| {cases[i]} | {t2:.1f} ({m2:.1f}) | {t3:.1f} ({m3:.1f}) | {t2 / t3:.2f}x ({m2 / m3:.2f}x) "
                    f"| `{k3['label']}` | {c:.2f} |")

    def geomean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    geo, geo_min = geomean(speedups), geomean(min_speedups)
    ctx = data["context"]
    today = datetime.date.today().isoformat()
    lines = [
        f"# K2 against K3 CPU kernels, {today}",
        "",
        f"- machine: {cpu_model()}, {ctx.get('num_cpus')} CPUs, load average at start "
        f"{', '.join(f'{x:.2f}' for x in ctx.get('load_avg', []))}",
        f"- command: {command_line('run_kernel_tiers.py', command)}",
        f"- built from {built_from()}; "
        f"cells: median of {args.repetitions} repetitions (minimum in brackets)",
        "",
        "| case | K2 µs / run | K3 µs / run | K3 speed-up (K2 / K3) | K3 variant (tuner's choice) | K2 compile ms |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"Geometric mean of the K3 speed-ups: {geo:.2f}x over {len(speedups)} cases "
        f"(of the minima's: {geo_min:.2f}x). "
        f"K2 compile time, median over the cases: {statistics.median(compiles):.2f} ms"
        if compiles else "",
        "",
        "Cases (`experiments/micro/kernel_tier_bench.cpp`): `muladd` is `(x * y + x) * c` on two f32 "
        "tensors of the shape named; `bcast3` is a rank-3 tensor plus a [s1, 1] column times a [s2] "
        "row; `chain` is the tensor suite's elementwise chain `tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 "
        "+ x * 0.05` (1-D); row kernels: `softmax_rms` is `rms_norm(softmax(x * c), weight=w)`, "
        "`layernorm` `layer_norm(x + y, weight=w, bias=b)`, `rowsum` `sum(x * y, axis=1)`; "
        "`matmul_gelu` is `gelu(x @ w + b)` (the product by OpenBLAS, the epilogue generated). "
        "K2: dims are kernel parameters, tile 1024 (row kernels: chunks of 1024 of a row), launch "
        "heuristics (a grid of fewer than 256 programs on the calling thread). K3: dims constant, "
        "and the tuner's choice of tile and layout (`flat=1`: tiles of the flattened output instead "
        "of rows; row kernels have one layout: the row as one tile when it is at most 4096 long), "
        "and, for a grid of fewer than 256 programs, serial or every core (`threads=-1`; "
        "`threads=0`: the launcher's rule, as K2), measured on these shapes; masks that no program "
        "can make false are gone (the tile divides the constant extent: codegen/kernel/mask_fold.h). "
        "A run includes allocating the output, as in a trace. The repetitions of all benchmarks run "
        "interleaved in a random order, so that a slow moment of the machine falls on K2 and K3 alike.",
    ]
    text = "\n".join(lines) + "\n"
    write_report(text, args.out, f"kernel-tiers-{today}.md" if args.dated else None)
    print(text)


if __name__ == "__main__":
    main()
