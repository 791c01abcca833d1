#!/usr/bin/env python3
"""Is performance unchanged? One run of the tensor suite (experiments/bench/tensor) and the scalar
corpus (tests/conformance/corpus) under Tessera only, for two builds of tessera-vm on this machine:
the current one (--vm) and a baseline (--baseline-vm, another commit's build), their runs taking
turns (baseline, current, baseline, ...) so that a busy moment slows both alike. Each program's
median (the tensor programs' own time per iteration; the corpus programs' wall time) is compared
with the baseline's and with the `tessera` column of the suite's last results file
(tensor-latest.csv, corpus-latest.md): the ratio to the baseline is the verdict, within --noise
(default 5%) or not; the last file's numbers are older runs, of another day's machine load, and
are shown for reference.

Writes perf-check-latest.md in --out-dir and, with --dated or --tag WHAT, perf-check-DATE[-WHAT].md.
"""

import argparse
import csv
import datetime
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model, run_once, source_commit  # noqa: E402
from run_corpus import CORPUS, command as corpus_command, small_args  # noqa: E402
from run_tensor_bench import BENCH, PROGRAMS, run_program  # noqa: E402
from run_kernel_tiers import REPO  # noqa: E402
import results_index  # noqa: E402

RESULTS = os.path.join(REPO, "experiments", "results")


def log(msg):
    print("[perf-check] " + msg, file=sys.stderr, flush=True)


def last_tensor(path):
    """{program: median us per iteration} of the tessera peer in a tensor results CSV."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row.get("peer") == "tessera" and row.get("status") == "ok":
                    out[row["program"]] = float(row["median_us_per_iter"])
    return out


def last_corpus(path):
    """{program: wall seconds} of the tessera column in a corpus results table."""
    out, cols = {}, None
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == "program":
                cols = cells
            elif cols and len(cells) == len(cols) and "tessera" in cols and not cells[0].startswith("---"):
                try:
                    out[cells[0]] = float(cells[cols.index("tessera")])
                except ValueError:
                    pass
    return out


def corpus_time(cmd, timeout):
    status, t, _, detail = run_once(cmd, timeout, None)
    if status != "ok":
        raise RuntimeError(f"{status}: {detail}")
    return t


def tensor_time(cmd, timeout):
    status, us, _, detail, _ = run_program(cmd, timeout)
    if status != "ok":
        raise RuntimeError(f"{status}: {detail}")
    return us


def compare(name, suite, unit, timer, commands, runs, last):
    """Runs the baseline's and the current command in turn `runs` times: a table row."""
    times = {"baseline": [], "current": []}
    for _ in range(runs):
        for which in ("baseline", "current"):
            times[which].append(timer(commands[which]))
    b, c = statistics.median(times["baseline"]), statistics.median(times["current"])
    log(f"{suite} {name}: baseline {b:.4g} {unit}, current {c:.4g} {unit} ({c / b:.3f}x)")
    return {"program": name, "suite": suite, "unit": unit, "baseline": b, "current": c, "last": last.get(name),
            "spread": max(times["current"]) / min(times["current"]) - 1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"), help="the current build")
    ap.add_argument("--baseline-vm", required=True, help="the baseline build (another commit's tessera-vm)")
    ap.add_argument("--runs", type=int, default=5, help="runs of each build per program (median; default 5)")
    ap.add_argument("--noise", type=float, default=0.05, help="the ratio's tolerance (default 0.05: 5%%)")
    ap.add_argument("--tensor-programs", help="comma-separated subset of the tensor suite")
    ap.add_argument("--corpus-programs", help="comma-separated subset of the corpus")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ap.add_argument("--out-dir", default=RESULTS)
    results_index.dated_arguments(ap, "perf-check")
    a = ap.parse_args()
    for vm in (a.vm, a.baseline_vm):
        if not os.path.exists(vm):
            sys.exit(f"run_perf_check: no tessera-vm at {vm}")
    last_t = last_tensor(os.path.join(RESULTS, "tensor-latest.csv"))
    last_c = last_corpus(os.path.join(RESULTS, "corpus-latest.md"))
    rows = []
    tensor = a.tensor_programs.split(",") if a.tensor_programs else list(PROGRAMS)
    for prog in tensor:
        args = [str(x) for x in PROGRAMS[prog].args["default"]]
        cmds = {w: [vm, "run", os.path.join(BENCH, prog + ".tsb"), "--"] + args
                for w, vm in (("baseline", a.baseline_vm), ("current", a.vm))}
        rows.append(compare(prog, "tensor", "us/iter", lambda c: tensor_time(c, a.timeout), cmds, a.runs, last_t))
    corpus = (a.corpus_programs.split(",") if a.corpus_programs
              else sorted(f[:-4] for f in os.listdir(CORPUS) if f.endswith(".tsb")))
    for prog in corpus:
        cmds = {w: corpus_command("tessera", vm, prog, []) for w, vm in (("baseline", a.baseline_vm), ("current", a.vm))}
        rows.append(compare(prog, "corpus", "s", lambda c: corpus_time(c, a.timeout), cmds, a.runs, last_c))

    def commit(vm):
        c, dirty = source_commit(vm)
        return (c or "unknown")[:12] + (" plus uncommitted changes" if dirty else "")

    today = datetime.date.today().isoformat()
    lines = [f"# Performance check, {today}", "",
             f"- machine: {cpu_model()}, {os.cpu_count()} CPUs",
             f"- tessera-vm built from commit {commit(a.vm)} (`{os.path.relpath(a.vm, REPO)}`)",
             f"- baseline: built from commit {commit(a.baseline_vm)} (`{a.baseline_vm}`)",
             f"- command: `python3 experiments/harness/run_perf_check.py --runs {a.runs} --noise {a.noise}`",
             f"- cells: medians of {a.runs} runs of each build, taking turns; the tensor suite's own time per "
             "iteration (default size), the corpus's wall seconds; `last file`: the tessera column of "
             "tensor-latest.csv / corpus-latest.md (older runs, for reference)", "",
             "| suite | program | unit | last file | baseline | current | current / baseline | current's spread | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    outside = 0
    for r in rows:
        ratio = r["current"] / r["baseline"]
        verdict = "within noise" if abs(ratio - 1) <= a.noise else ("slower" if ratio > 1 else "faster")
        outside += verdict != "within noise"
        last = "—" if r["last"] is None else f"{r['last']:.4g}"
        lines.append(f"| {r['suite']} | {r['program']} | {r['unit']} | {last} | {r['baseline']:.4g} | "
                     f"{r['current']:.4g} | {ratio:.3f} | {100 * r['spread']:.0f}% | {verdict} |")
    geo = statistics.geometric_mean([r["current"] / r["baseline"] for r in rows])
    lines += ["", f"Geometric mean of current / baseline over {len(rows)} programs: {geo:.3f}; "
              f"{outside} outside ±{100 * a.noise:.0f}%."]
    text = "\n".join(lines) + "\n"
    for p in results_index.save(a.out_dir, "perf-check", "md", text, results_index.dated_run(a.dated, a.tag)):
        log("wrote " + p)
    results_index.refresh(a.out_dir)
    print(text)


if __name__ == "__main__":
    main()
