#!/usr/bin/env python3
"""What the embedding API costs a host: runs experiments/micro/embed_bench
(Google Benchmark, JSON output, through libtessera.so as a host links it) and
writes experiments/results/embedding-latest.md (and, with --dated, a copy
named by today's date): a host->script call of a small function, compiled
and interpreted; a compiled script loop calling a host function; and a
1M-element f32 tensor passed in and out (wrapped host memory, and DLPack
import + export) with the bytes the VM copied. Cells are medians over
--repetitions runs.

  cmake --build build --target embed_bench
  python3 experiments/harness/run_embed_bench.py [--bench build/experiments/micro/embed_bench]
"""
import argparse
import datetime
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model  # noqa: E402
from run_kernel_tiers import bench_arguments, built_from, command_line, run, write_report  # noqa: E402


def medians(data):
    """{run_name: {"ns": median real time in ns, "counters": {name: median}, "label": str}}."""
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    acc = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        e = acc.setdefault(b["run_name"], {"ns": [], "counters": {}, "label": b.get("label", "")})
        e["ns"].append(b["real_time"] * scale[b["time_unit"]])
        for k in ("compiled_traces", "bytes_copied", "tensor_bytes", "items_per_second"):
            if k in b:
                e["counters"].setdefault(k, []).append(b[k])
    return {n: {"ns": statistics.median(e["ns"]), "label": e["label"],
                "counters": {k: statistics.median(v) for k, v in e["counters"].items()}} for n, e in acc.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_arguments(ap, "embed_bench", "embedding-latest.md", 5, f"embedding-{datetime.date.today().isoformat()}.md")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per benchmark run (default 0.2)")
    args = ap.parse_args()
    data, command = run(args.bench, args.repetitions, args.min_time)
    m = medians(data)
    get = lambda name: m.get(name) or sys.exit(f"{name} is missing from the benchmark's output")
    on, off, host = get("BM_HostCall/1"), get("BM_HostCall/0"), get("BM_ScriptCallsHost")
    wrap, dl = get("BM_TensorInOut"), get("BM_DLPackInOut")
    per_host_fn = 1e9 / host["counters"]["items_per_second"]
    mib = wrap["counters"]["tensor_bytes"] / 2**20
    lines = [
        f"# What the embedding API costs a host, {datetime.date.today().isoformat()}",
        "",
        f"- machine: {cpu_model()}, {data['context'].get('num_cpus')} CPUs",
        f"- command: {command_line('run_embed_bench.py', command)}",
        f"- built from {built_from()}; cells: median of {args.repetitions} repetitions",
        "- every call goes through the C ABI of libtessera.so (`tsr_call`, handles made and freed as a host does)",
        "",
        "| what | time per call | notes |",
        "|---|---:|---|",
        f"| host→script call of `fn f(x) {{ return x * 2 + 1 }}`, JIT on | {on['ns']:.0f} ns | "
        f"{on['counters'].get('compiled_traces', 0):.0f} compiled trace (the function trace, entered on each call) |",
        f"| the same, JIT off (interpreted) | {off['ns']:.0f} ns | |",
        f"| compiled script loop calling a host function `inc(x)` | {per_host_fn:.0f} ns | per host-function call |",
        f"| {mib:.0f} MiB f32 tensor (1M elements) in and out: wrapped host memory, a script function "
        f"writes one element and returns it | {wrap['ns']:.0f} ns | bytes copied: {wrap['counters']['bytes_copied']:.0f} |",
        f"| the same through DLPack: import, call, export, consumer's deleter | {dl['ns']:.0f} ns | "
        f"bytes copied: {dl['counters']['bytes_copied']:.0f} |",
        "",
        "The issue's targets: a host→script call of a small compiled function under 1 µs, and a 1M-element",
        "tensor passed in and out with 0 bytes copied (the `tensor_bytes_copied` statistic).",
        "",
    ]
    write_report("\n".join(lines), args.out, f"embedding-{datetime.date.today().isoformat()}.md" if args.dated else None)


if __name__ == "__main__":
    main()
