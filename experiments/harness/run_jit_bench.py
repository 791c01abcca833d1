#!/usr/bin/env python3
"""What the JIT's own work costs: runs the micro-benchmark
experiments/micro/jit_bench (Google Benchmark, JSON output) and writes
experiments/results/jit-costs-latest.md (and, with --dated, a copy named by
today's date): the interpreter's dispatch, recording per IR instruction, T1
and T2 compile latency per trace size, a deopt exit's round trip, a fused
kernel's compile, and what each observability setting costs a run (none,
an event log with nothing on, --jit-log, --metrics, --dump's timeline).
Cells are medians over --repetitions runs.

  cmake --build build --target jit_bench
  python3 experiments/harness/run_jit_bench.py [--bench build/experiments/micro/jit_bench]
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
    """{run_name: {"time": median real time, "unit", "counters": {name: median}, "label"}}."""
    acc = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        e = acc.setdefault(b["run_name"], {"times": [], "unit": b["time_unit"], "counters": {}, "label": b.get("label", "")})
        e["times"].append(b["real_time"])
        for k, v in b.items():
            if k in ("ir_recorded", "ns_per_ir", "ir", "code_bytes", "exits", "items_per_second"):
                e["counters"].setdefault(k, []).append(v)
    return {name: {"time": statistics.median(e["times"]), "unit": e["unit"], "label": e["label"],
                   "counters": {k: statistics.median(v) for k, v in e["counters"].items()}}
            for name, e in acc.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_arguments(ap, "jit_bench", "jit-costs-latest.md", 5, "jit-costs-DATE.md")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per benchmark run (default 0.2)")
    args = ap.parse_args()
    data, command = run(args.bench, args.repetitions, args.min_time)
    m = medians(data)
    get = lambda name: m.get(name) or sys.exit(f"{name} is missing from the benchmark's output")

    d = get("BM_Dispatch/20000")
    dispatch_ns = 1e9 / d["counters"]["items_per_second"]
    lines = [
        f"# What the JIT's own work costs, {datetime.date.today().isoformat()}",
        "",
        f"- machine: {cpu_model()}, {data['context'].get('num_cpus')} CPUs",
        f"- command: {command_line('run_jit_bench.py', command)}",
        f"- built from {built_from()}; cells: median of {args.repetitions} repetitions",
        "",
        "## Interpreter and recording",
        "",
        f"The interpreter alone runs a statement `s = s + k` in {dispatch_ns:.1f} ns (a loop of 20 000 iterations "
        "of 16 such statements).",
        "",
        "| loop body (statements) | IR recorded | recording µs per trace | ns per recorded IR instruction |",
        "|---|---|---|---|",
    ]
    for b in (4, 16, 64):
        r = get(f"BM_Record/{b}/manual_time")
        lines.append(f"| {b} | {r['counters']['ir_recorded']:.0f} | {r['time']:.1f} | {r['counters']['ns_per_ir']:.0f} |")
    lines += ["", "## Compiling a trace", "",
              "| loop body (statements) | IR after the optimizer | T1 (asmjit) µs | T1 code bytes | T2 (LLVM) ms | T2 code bytes |",
              "|---|---|---|---|---|---|"]
    for b in (4, 16, 64):
        t1, t2 = get(f"BM_Compile/{b}/1/manual_time"), get(f"BM_Compile/{b}/2/manual_time")
        lines.append(f"| {b} | {t1['counters']['ir']:.0f} | {t1['time']:.1f} | {t1['counters']['code_bytes']:.0f} "
                     f"| {t2['time'] / 1e3:.2f} | {t2['counters']['code_bytes']:.0f} |")
    e0, e1 = get("BM_Exit/0"), get("BM_Exit/1")
    exits = e0["counters"]["exits"] - e1["counters"]["exits"]
    per_exit = (e0["time"] - e1["time"]) * 1e3 / exits if exits > 0 else float("nan")
    lines += ["", "## A deopt exit", "",
              f"A loop of 20 000 iterations whose branch leaves its trace every other iteration: {e0['time']:.0f} µs "
              f"with side traces off ({e0['counters']['exits']:.0f} exits, each back to the interpreter and into the "
              f"trace again), {e1['time']:.0f} µs with them ({e1['counters']['exits']:.0f} exits). The difference per "
              f"exit, the round trip of a deopt exit: **{per_exit:.0f} ns**.",
              "", "## Compiling a fused kernel (K2, kernel IR to object code)", "",
              "| region | ms |", "|---|---|"]
    for c in (0, 1):
        k = get(f"BM_KernelCompile/{c}")
        lines.append(f"| {k['label']} | {k['time']:.2f} |")
    base = get("BM_Observe/0")["time"]
    lines += ["", "## What observing a run costs", "",
              "A program with a loop trace and its side exits (20 000 iterations) and a fused call (400 calls), "
              "run in a fresh VM per iteration:", "",
              "| setting | ms per run | relative to none |", "|---|---|---|"]
    for mode in range(5):
        o = get(f"BM_Observe/{mode}")
        lines.append(f"| {o['label']} | {o['time']:.2f} | {o['time'] / base:.2f} |")
    lines += ["",
              "Without `--jit-log`, `--dump` or `--metrics` the JIT builds no event and times nothing: each place "
              "that reports tests a pointer first. The second row is that state with an event log installed. "
              "Times are wall-clock medians; differences under a few percent are within this machine's noise."]
    text = "\n".join(lines) + "\n"
    write_report(text, args.out, f"jit-costs-{datetime.date.today().isoformat()}.md" if args.dated else None)


if __name__ == "__main__":
    main()
