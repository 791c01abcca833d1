#!/usr/bin/env python3
"""What allocation sinking buys: the small-tensor programs of experiments/bench/sinking/ under
the interpreter and under each host tier with sinking off (`--jit-param sink=0`) and on (the
default), side by side.

Every program prints a `checksum ...` line; every mode must print the same one (the JIT never
changes what a program prints), else the run fails. Writes
experiments/results/sinking-latest.md and .csv (median wall seconds of --runs runs per
program and mode, the speed-up of sinking per tier, and the traces' sunk tensors and remaining
tensor helper calls from one `--stats --dump` run), and with --dated (or --tag) dated copies.
"""

import argparse
import datetime
import glob
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import results_index

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "experiments", "bench", "sinking")
PROGRAMS = ["vec3", "rotate2d", "intstats"]
SMALL_N = "20000"  # CI smoke size: a few ms under the JIT
# (label, tessera-vm run options)
MODES = [
    ("interp", ["--jit=off"]),
    ("t1 sink=0", ["--jit-param", "tier=1", "--jit-param", "sink=0"]),
    ("t1", ["--jit-param", "tier=1"]),
    ("t2 sink=0", ["--jit-param", "tier=2", "--jit-param", "sink=0"]),
    ("t2", ["--jit-param", "tier=2"]),
    ("auto sink=0", ["--jit-param", "sink=0"]),
    ("auto", []),
]


def log(msg):
    print("[sinking] " + msg, flush=True)


def run(vm, prog, opts, args, timeout):
    cmd = [vm, "run", os.path.join(BENCH, prog + ".tsb")] + opts + (["--"] + args if args else [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[:500]}")
    lines = [l for l in p.stdout.splitlines() if l.startswith("checksum")]
    if len(lines) != 1:
        raise RuntimeError(f"{' '.join(cmd)} printed no checksum line")
    return wall, lines[0]


def trace_census(vm, prog, args, timeout):
    """Sunk tensors (VNEWTENSOR) and CALLs left in the compiled traces of one default run."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [vm, "run", os.path.join(BENCH, prog + ".tsb"), "--dump", d, "--jit-param", "async=0"]
        cmd += ["--"] + args if args else []
        subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
        sunk = calls = 0
        for path in glob.glob(os.path.join(d, "*-trace[0-9]*.ir")):
            if re.search(r"\.\d+-[a-z]+\.ir$", path):
                continue  # per-pass dumps
            with open(path) as f:
                for line in f:
                    if re.match(r"^\d{4}\s", line):
                        sunk += " VNEWTENSOR " in line
                        calls += " CALL " in line
        return sunk, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"))
    ap.add_argument("--size", choices=["small", "default"], default="default",
                    help=f"small: N={SMALL_N} (CI smoke); default: the programs' own N")
    ap.add_argument("--runs", type=int, default=3, help="runs per program and mode (median shown)")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"))
    results_index.dated_arguments(ap, "sinking")
    ap.add_argument("--check-only", action="store_true",
                    help="only check that every mode prints the same checksum; write nothing")
    a = ap.parse_args()
    programs = [p for p in a.programs.split(",") if p]
    for p in programs:
        if p not in PROGRAMS:
            sys.exit(f"unknown program '{p}' (known: {', '.join(PROGRAMS)})")
    args = [SMALL_N] if a.size == "small" else []

    rows = []
    failed = False
    for prog in programs:
        times, sums = {}, {}
        for label, opts in MODES:
            walls = []
            for _ in range(a.runs):
                wall, checksum = run(a.vm, prog, opts, args, a.timeout)
                walls.append(wall)
                sums[label] = checksum
            times[label] = statistics.median(walls)
            log(f"{prog:9s} {label:12s} {times[label]:8.3f} s  {checksum}")
        if len(set(sums.values())) != 1:
            failed = True
            log(f"{prog}: checksums differ: {sums}")
        sunk, calls = trace_census(a.vm, prog, args, a.timeout)
        rows.append((prog, times, sums["interp"], sunk, calls))
    if failed:
        sys.exit("checksum mismatch")
    if a.check_only:
        log("all checksums agree")
        return

    today = datetime.date.today().isoformat()
    labels = [m[0] for m in MODES]
    table = results_index.csv_text([["program"] + labels + ["sunk tensors", "calls left", "checksum"]]
                                   + [[prog] + [f"{times[l]:.4f}" for l in labels] + [sunk, calls, checksum]
                                      for prog, times, checksum, sunk, calls in rows])
    md = [f"# Allocation sinking of small tensors ({today})", "",
          f"Median wall seconds of {a.runs} runs, `tessera-vm` at {a.vm}, size `{a.size}`; "
          f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}.",
          "Command: `python3 experiments/harness/run_sinking.py " + " ".join(sys.argv[1:]) + "`.", "",
          "| program | " + " | ".join(labels) + " | t1 gain | t2 gain | auto gain | sunk tensors | calls left |",
          "|---|" + "---|" * (len(labels) + 5)]
    for prog, times, _, sunk, calls in rows:
        gain = lambda t: f"{times[t + ' sink=0'] / times[t]:.1f}x"
        md.append(f"| {prog} | " + " | ".join(f"{times[l]:.3f}" for l in labels) +
                  f" | {gain('t1')} | {gain('t2')} | {gain('auto')} | {sunk} | {calls} |")
    md += ["", "Gain: the same tier's time with `sink=0` over its time with sinking. Sunk tensors: "
           "`VNEWTENSOR` instructions in the compiled traces of one default run; calls left: helper "
           "calls those traces still make (any kind). Every mode printed the same checksum."]
    text = "\n".join(md) + "\n"
    dated = results_index.dated_run(a.dated, a.tag)
    written = results_index.save(a.out_dir, "sinking", "md", text, dated)
    written += results_index.save(a.out_dir, "sinking", "csv", table, dated)
    log("wrote " + ", ".join(written))
    results_index.refresh(a.out_dir)


if __name__ == "__main__":
    main()
