#!/usr/bin/env python3
"""GPU profiling's figures (issue targets of docs/gpu.md, "Profiling with CUPTI"):

  - what CUPTI's activity records cost: cupti_device_test's on/off measurement of a chain of
    2000 small fused calls (its RESULT line): the added time in percent and per launch, and the
    one-time instrumentation CUPTI reports;
  - the design documents' overhead criteria on a GPU workload (a run of tessera-vm with --dump):
    tracing overhead, the VM thread's time recording and compiling traces (the timeline's
    `record` and `T1 compile` spans) over the run's wall time (< 10%); runtime orchestration
    overhead, the share of the device's busy span in which it waited for the host between
    kernels (1 - kernel time / (last kernel's end - first kernel's start), from CUPTI's spans on
    the timeline's GPU track, the tuner's timings left out) (< 5%);
  - a profiled tuning run (--profile-kernels): the run's `--stats` lines of the GPU.

Writes experiments/results/gpu-profile-latest.md (with --dated, gpu-profile-DATE.md too) and,
with --json-dir, the raw figures as gpu-profile-DATE.json. On the host emulation
(TESSERA_GPU_EMULATION=1 with the CUPTI test double) the same path runs for testing, and the
report says that its figures are not a GPU's.

  python3 experiments/harness/run_gpu_profile.py --vm build/tessera-vm \\
      [--test build/tests/runtime/cupti_device_test] \\
      [--program experiments/bench/tensor/elementwise_chain.tsb --args 200 60] [--out FILE.md] [--dated]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_kernel_tiers import REPO, built_from, write_report  # noqa: E402

GPU_TRACK = "GPU device (kernels as they ran)"
TRACING_SPANS = ("record", "T1 compile")


def overhead_result(test):
    """cupti_device_test's figures: {name: value} of its RESULT line, and its report lines."""
    p = subprocess.run([test, "--gtest_filter=CuptiDevice.*"], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{test} failed ({p.returncode}):\n{p.stdout[-3000:]}{p.stderr[-2000:]}")
    if "[  SKIPPED ]" in p.stdout and "RESULT" not in p.stdout:
        sys.exit(f"{test} skipped (no GPU?):\n{p.stdout[-2000:]}")
    m = re.search(r"^RESULT cupti_overhead (.*)$", p.stdout, re.M)
    if not m:
        sys.exit(f"{test}: no RESULT line:\n{p.stdout[-2000:]}")
    figures = {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    return figures, [l for l in p.stdout.splitlines() if l.startswith("  gpu")]


def timeline_figures(path):
    """Tracing and orchestration figures from a timeline.json (ms)."""
    with open(path) as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    tracks = {(e.get("pid"), e.get("tid")): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    gpu, tracing = [], 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        track = tracks.get((e.get("pid"), e.get("tid")), "")
        if track == GPU_TRACK and "[tuning" not in e.get("name", ""):
            gpu.append((e["ts"] / 1000.0, (e["ts"] + e["dur"]) / 1000.0))
        elif track.startswith("VM") and e.get("name") in TRACING_SPANS:
            tracing += e["dur"] / 1000.0
    busy = sum(end - start for start, end in gpu)
    span = max(end for _, end in gpu) - min(start for start, _ in gpu) if gpu else 0.0
    return {"kernels": len(gpu), "device_busy_ms": busy, "device_span_ms": span,
            "orchestration_pct": (1 - busy / span) * 100 if span > 0 else None, "tracing_ms": tracing}


def run_vm(vm, program, args, extra):
    """One run with --stats and --dump: (wall ms, stats text, timeline figures)."""
    with tempfile.TemporaryDirectory() as dump:
        cmd = [vm, "run", program, "--device=gpu", "--stats", "--dump", dump] + extra + ["--"] + args
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        wall = (time.perf_counter() - start) * 1000
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
        return wall, p.stderr, timeline_figures(os.path.join(dump, "timeline.json"))


def verdict(value, limit, unit):
    if value is None:
        return "not measured"
    return f"{value:.2f}{unit}: {'met' if value < limit else 'NOT met'} (< {limit}{unit})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"))
    ap.add_argument("--test", help="cupti_device_test (a GPU only): CUPTI's cost on and off")
    ap.add_argument("--program", default=os.path.join(REPO, "experiments", "bench", "tensor", "elementwise_chain.tsb"))
    ap.add_argument("--args", nargs="*", default=["200", "60"], help="the program's arguments")
    ap.add_argument("--vm-arg", action="append", default=[], help="another tessera-vm option (repeatable), "
                    "e.g. --vm-arg=--jit-param --vm-arg=async=0")
    ap.add_argument("--out", default=os.path.join(REPO, "experiments", "results", "gpu-profile-latest.md"))
    ap.add_argument("--dated", action="store_true")
    ap.add_argument("--json-dir")
    a = ap.parse_args()

    emulated = os.environ.get("TESSERA_GPU_EMULATION") == "1"
    raw = {"date": datetime.date.today().isoformat(), "built_from": built_from(), "emulated": emulated,
           "program": os.path.relpath(a.program, REPO), "args": a.args, "vm_args": a.vm_arg}
    lines = ["# GPU profiling: CUPTI's cost and the overhead criteria", ""]
    if emulated:
        lines += ["**Host emulation with the CUPTI test double: these figures test the harness; they are not a "
                  "GPU's.**", ""]
    if a.test:
        figures, report = overhead_result(a.test)
        raw["cupti"] = figures
        lines += ["## CUPTI's activity records, on and off in one run", "",
                  f"A chain of {int(figures['calls'])} fused calls of {int(figures['elements'])} elements, the best "
                  "of 5 alternating rounds each (cupti_device_test).", "",
                  "| | figure | target |", "|---|---|---|",
                  f"| off | {figures['off_ms']:.3f} ms | |", f"| on | {figures['on_ms']:.3f} ms | |",
                  f"| added | {verdict(figures['overhead_pct'], 2, '%')} | <= 2% |",
                  f"| per launch | {verdict(figures['per_launch_us'], 1, ' us')} | <= 1 us |",
                  f"| instrumentation (once per module) | {figures['instrumentation_ms']:.3f} ms | reported |", "",
                  "```", *report, "```", ""]
    wall, stats, tl = run_vm(a.vm, a.program, a.args, ["--profile-kernels"] + a.vm_arg)
    device = next((l.split(":", 1)[1].strip() for l in stats.splitlines() if l.startswith("  device:")), "unknown")
    tracing_pct = tl["tracing_ms"] / wall * 100 if wall > 0 else None
    raw.update({"device": device, "wall_ms": wall, "timeline": tl, "tracing_pct": tracing_pct})
    lines += [f"## Overhead criteria: `{raw['program']} {' '.join(a.args)}` on the GPU", "",
              f"Device: {device}. Wall time {wall:.1f} ms (the whole process); {tl['kernels']} kernels on the "
              f"GPU track.", "",
              "| criterion | measured | |", "|---|---|---|",
              f"| tracing overhead (recording and T1 compiles on the VM thread / wall) | "
              f"{tl['tracing_ms']:.2f} ms of {wall:.1f} ms | {verdict(tracing_pct, 10, '%')} |",
              f"| runtime orchestration overhead (device idle between kernels / device span) | "
              f"{tl['device_busy_ms']:.2f} ms busy of {tl['device_span_ms']:.2f} ms | "
              f"{verdict(tl['orchestration_pct'], 5, '%')} |", "",
              "## The profiled tuning run (--profile-kernels --stats)", "", "```",
              *[l for l in stats.splitlines() if l.startswith("  gpu") or l.startswith("  device")], "```", "",
              f"Made by `experiments/harness/run_gpu_profile.py` from {raw['built_from']}, {raw['date']}."]
    write_report("\n".join(lines) + "\n", a.out, f"gpu-profile-{raw['date']}.md" if a.dated else None)
    if a.json_dir:
        os.makedirs(a.json_dir, exist_ok=True)
        with open(os.path.join(a.json_dir, f"gpu-profile-{raw['date']}.json"), "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
