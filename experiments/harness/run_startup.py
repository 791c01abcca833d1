#!/usr/bin/env python3
"""Start-up: the whole-process wall time of a one-line script, `print(1)`, under tessera-vm (JIT
on, the default, and --jit=off) beside lua5.4, luajit and python3 (and python3 -S, without the
site module) in the same run. Each runtime runs --runs times back to back (the caches warm with
its own earlier runs, as when a script is run again and again), then --runs times interleaved
round-robin with the others (each run finds the caches full of another runtime's, and a slow
moment of the machine falls on all of them); the table gives the medians of both, the 10th and
90th percentiles of the interleaved runs, and the ratios of medians to lua5.4's. A runtime that is not installed is left out.
Writes experiments/results/startup-latest.md (and, with --dated, startup-DATE.md).

  python3 experiments/harness/run_startup.py [--vm build/tessera-vm] [--runs 50] [--dated]
"""
import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model  # noqa: E402
from run_kernel_tiers import REPO, built_from, write_report  # noqa: E402


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"))
    ap.add_argument("--runs", type=int, default=50, help="runs of each runtime (default 50)")
    ap.add_argument("--out", default=os.path.join(REPO, "experiments", "results", "startup-latest.md"))
    ap.add_argument("--dated", action="store_true", help="also write startup-DATE.md beside it")
    a = ap.parse_args()
    if not os.path.exists(a.vm):
        sys.exit(f"{a.vm} not found: cmake --build build --target tessera-vm")
    work = tempfile.mkdtemp(prefix="tessera-startup-")
    try:
        scripts = {"tsb": "print(1)\n", "lua": "print(1)\n", "py": "print(1)\n"}
        paths = {}
        for ext, text in scripts.items():
            paths[ext] = os.path.join(work, "one." + ext)
            with open(paths[ext], "w") as f:
                f.write(text)
        # Debian's python3, not a version manager's shim (pyenv's is a shell script: +25 ms).
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
        runtimes = [("tessera-vm", [a.vm, "run", paths["tsb"]]),
                    ("tessera-vm --jit=off", [a.vm, "run", paths["tsb"], "--jit=off"]),
                    ("lua5.4", ["lua5.4", paths["lua"]]),
                    ("luajit", ["luajit", paths["lua"]]),
                    ("python3", [python, paths["py"]]),
                    ("python3 -S", [python, "-S", paths["py"]])]
        runtimes = [(n, c) for n, c in runtimes if shutil.which(c[0]) or os.path.exists(c[0])]
        times = {n: [] for n, _ in runtimes}
        back_to_back = {n: [] for n, _ in runtimes}
        for n, c in runtimes:  # one unmeasured run each (the files in the page cache), then a block
            subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
            for _ in range(a.runs):
                t0 = time.perf_counter()
                subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
                back_to_back[n].append((time.perf_counter() - t0) * 1000)
        for i in range(a.runs):
            for n, c in runtimes:
                t0 = time.perf_counter()
                subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
                times[n].append((time.perf_counter() - t0) * 1000)
            if (i + 1) % 10 == 0:
                print(f"  {i + 1}/{a.runs} rounds", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lua = statistics.median(times["lua5.4"]) if "lua5.4" in times else None
    lua_b = statistics.median(back_to_back["lua5.4"]) if "lua5.4" in back_to_back else None
    today = datetime.date.today().isoformat()
    lines = [f"# Start-up of a one-line script, {today}", "",
             f"- machine: {cpu_model()}, {os.cpu_count()} CPUs",
             f"- command: `python3 experiments/harness/run_startup.py --runs {a.runs}` (tessera-vm: `{os.path.relpath(a.vm, REPO)}`)",
             f"- built from {built_from()}",
             f"- python3 is `{python}`; each runtime runs the script `print(1)` from a file, whole process "
             "(fork, exec, load, run, exit), "
             f"{a.runs} runs each, interleaved; times in ms", "",
             "| runtime | back to back: median ms | × lua5.4 | interleaved: median ms | p10 ms | p90 ms | × lua5.4 |",
             "|---|---|---|---|---|---|---|"]
    for n, _ in runtimes:
        med, med_b = statistics.median(times[n]), statistics.median(back_to_back[n])
        ratio = f"{med / lua:.1f}x" if lua else "—"
        ratio_b = f"{med_b / lua_b:.1f}x" if lua_b else "—"
        lines.append(f"| {n} | {med_b:.2f} | {ratio_b} | {med:.2f} | {percentile(times[n], 10):.2f} | "
                     f"{percentile(times[n], 90):.2f} | {ratio} |")
    lines += ["", "docs/jit.md (\"Start-up\") says what tessera-vm does and does not do at start."]
    write_report("\n".join(lines) + "\n", a.out, f"startup-{today}.md" if a.dated else None)


if __name__ == "__main__":
    main()
