#!/usr/bin/env python3
"""Executed-instruction comparison of two tessera-vm binaries, per host tier.

Wall times on a shared machine move by tens of percent from run to run; the number of
instructions a process executes does not depend on the machine's load. This harness runs each
program of the scalar suite (experiments/bench/tsb/, at sizes small enough for valgrind) under
`valgrind --tool=callgrind`, whole process (start-up, parsing, recording, compilation and the
run), once per binary and host tier (`--jit-param tier=1`, `--jit-param tier=2 --jit-param
async=0`), checks that both binaries print the same checksum, and writes a table per tier:
program, args, instructions of the baseline binary, of the new binary, change in percent. Exit
status 1 if a program's count moved by more than --tolerance percent (or a run failed).

It also reports, without asserting anything, each tier's median compile time of one trace for
both binaries (from `--stats`, outside valgrind, --latency-runs runs per program): wall times,
too noisy on a shared machine for a pass / fail.

The two binaries: --baseline-vm PATH / --vm PATH, or --baseline-commit REV / --commit REV,
which builds that commit's tessera-vm (git worktree add + cmake + ninja) in
build-baseline-HASH/ or build-commit-HASH/ at the repository root (ignored by git; reused by
later runs).

Writes experiments/results/instructions-latest.md and .csv; with --dated (or --tag TEXT) also
instructions-YYYY-MM-DD-tier1-tier2[-TEXT].md / .csv (the tiers measured, then a word on what is
compared).
"""

import argparse
import concurrent.futures
import datetime
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HARNESS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HARNESS))
sys.path.insert(0, HARNESS)
import callgrind_calls  # noqa: E402  (the instructions spent in the host compilers)
import run_bench  # noqa: E402  (the programs, the checksum comparison, the machine's name)
import stats_report  # noqa: E402  (compile times from --stats)
import results_index  # noqa: E402  (the results' names and INDEX.md)

PROGRAMS = run_bench.PROGRAMS
# Sizes chosen to keep valgrind short (seconds at tier=1, minutes at tier=2 where LLVM runs under
# valgrind too).
ARGS = {
    "fib": ["30"], "loop_sum": ["300000", "1"], "mandelbrot": ["100", "50"], "nbody": ["20000"],
    "sieve": ["400000"], "spectral_norm": ["100"], "matmul_scalar": ["60"], "fannkuch": ["8"],
}
# tessera-vm run options of each tier. tier=2 with async=0: with async=1 LLVM compiles on a
# background thread, and how far the main thread gets in the interpreter while it waits depends
# on the thread schedule, so the counts change from run to run.
TIER_OPTS = {
    "1": ["--jit-param", "tier=1"],
    "2": ["--jit-param", "tier=2", "--jit-param", "async=0"],
}
TIER_NAMES = {"1": "tier=1 (asmjit T1)", "2": "tier=2 (LLVM T2)"}
# The host compiler of each tier, as callgrind names it: the instructions of one trace's compile
# are those spent in (and below) this function.
TIER_COMPILER = {"1": "tessera::jit::AsmjitBackend::compile(", "2": "tessera::jit::LlvmBackend::compile("}
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)\s*$", re.M)

_print_lock = threading.Lock()


def log(msg):
    with _print_lock:
        print("[instructions] " + msg, flush=True)


def git(*args, cwd=REPO, check=True):
    p = subprocess.run(["git"] + list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), p.stderr.decode("utf-8", "replace").strip()))
    return p.stdout.decode("utf-8", "replace").strip() if p.returncode == 0 else None


def build_commit(rev, kind, build_jobs):
    """Builds REV's tessera-vm in REPO/build-KIND-HASH/ (a detached git worktree in src/, the
    CMake build in build/) unless it is there already; returns (binary, full hash)."""
    full = git("rev-parse", "--verify", rev + "^{commit}")
    root = os.path.join(REPO, "build-%s-%s" % (kind, full[:12]))
    src, build = os.path.join(root, "src"), os.path.join(root, "build")
    vm = os.path.join(build, "tessera-vm")
    if os.path.exists(vm):
        log("%s %s: reusing %s" % (kind, full[:12], os.path.relpath(vm, REPO)))
        return vm, full
    if not os.path.exists(os.path.join(src, ".git")):
        log("%s %s: git worktree add %s" % (kind, full[:12], os.path.relpath(src, REPO)))
        os.makedirs(root, exist_ok=True)
        git("worktree", "add", "--detach", src, full)
    log("%s %s: cmake + ninja tessera-vm (Release) in %s" % (kind, full[:12], os.path.relpath(build, REPO)))
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", os.path.dirname(REPO))
    for cmd in (["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DTESSERA_BUILD_TESTS=OFF", "-DTESSERA_BUILD_BENCH=OFF"],
                ["ninja", "-C", build] + (["-j", str(build_jobs)] if build_jobs else []) + ["tessera-vm"]):
        start = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        if p.returncode != 0:
            sys.stderr.write(p.stdout.decode("utf-8", "replace")[-4000:])
            raise RuntimeError("%s failed (exit %d)" % (cmd[0], p.returncode))
        log("%s %s: %s done in %.0f s" % (kind, full[:12], cmd[0], time.perf_counter() - start))
    return vm, full


class Binary:
    def __init__(self, role, label, vm, commit, dirty):
        self.role, self.label, self.vm, self.commit, self.dirty = role, label, vm, commit, dirty
        self.version = run_bench.version_of([vm, "--version"]) or "unknown"

    def describe(self):
        c = "commit unknown"
        if self.commit:
            c = "commit %s" % self.commit[:12]
            info = git("log", "-1", "--format=%cs%n%s", self.commit, check=False)
            if info and "\n" in info:
                date, subject = info.split("\n", 1)
                if len(subject) > 90:
                    subject = subject[:89].rstrip() + "…"
                c += " of %s (“%s”)" % (date, subject)
            if self.dirty:
                c += " plus uncommitted changes"
        path = os.path.relpath(self.vm, REPO) if self.vm.startswith(REPO + os.sep) else self.vm
        return "%s: %s; binary `%s` (%s)" % (self.label, c, path, self.version)


def callgrind(vm, prog, args, tier, timeout, tmp):
    """One run under callgrind: (status, instructions, checksum line, seconds, detail, compile), where
    compile = (instructions, calls) into the tier's host compiler (TIER_COMPILER)."""
    out_file = os.path.join(tempfile.mkdtemp(dir=tmp), "callgrind.out")
    # --smc-check=all-non-file: valgrind checks code it did not load from a file for changes before
    # running a translation of it again (a trace's code may be written where a freed one was).
    cmd = (["valgrind", "--tool=callgrind", "--smc-check=all-non-file", "--callgrind-out-file=" + out_file, vm, "run",
            os.path.join(REPO, "experiments", "bench", "tsb", prog + ".tsb")] + TIER_OPTS[tier] + ["--"] + args)
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, "", None, "timed out after %gs" % timeout, None
    secs = time.perf_counter() - start
    out = p.stdout.decode("utf-8", "replace").strip()
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        tail = [l for l in err.splitlines() if not l.startswith("==")]
        return "crash", None, out, secs, "exit %d: %s" % (p.returncode, tail[0] if tail else ""), None
    m = COLLECTED.search(err)
    if not m:
        return "crash", None, out, secs, "no 'Collected' line in callgrind's report", None
    try:
        compile_cost = callgrind_calls.calls_into(out_file, TIER_COMPILER[tier])
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return "crash", None, out, secs, str(e), None
    finally:
        shutil.rmtree(os.path.dirname(out_file), ignore_errors=True)
    return "ok", int(m.group(1)), out, secs, "", compile_cost


def compile_times(vm, prog, args, tier, runs, timeout):
    """Per-trace host compile times (ms) of the tier's traces over `runs` --stats runs, and the
    traces per run (the last run's), or (None, None, detail) if a run failed."""
    ms, traces = [], None
    cmd = ([vm, "run", os.path.join(REPO, "experiments", "bench", "tsb", prog + ".tsb"), "--stats"]
           + TIER_OPTS[tier] + ["--"] + args)
    for _ in range(runs):
        status, _, _, err, detail = stats_report.run_stats(cmd, timeout)
        if status != "ok":
            return None, None, detail or status
        tiers = stats_report.parse_tiers(err)
        ms += tiers["T" + tier]["ms"]
        traces = stats_report.tier_summary(tiers["T" + tier])[0]
    return ms, traces, ""


def compile_instruction_tables(rows, tiers, programs, base, new):
    """Markdown: per tier, the instructions one trace's host compile takes (callgrind, the same runs
    as the whole-process counts), per program and over all programs."""
    lines = ["", "## Host compile: instructions per trace (callgrind; reported, not checked)", "",
             "From the same callgrind runs: the instructions spent in (and below) the tier's host compiler "
             "(`%s` at tier=1, `%s` at tier=2), divided by its number of calls, the traces it compiled. "
             "The mean per trace, not the median (callgrind adds the calls up); unlike wall times it does "
             "not depend on the machine's load." % (TIER_COMPILER["1"].rstrip("("), TIER_COMPILER["2"].rstrip("("))]
    for t in tiers:
        lines += ["", "### %s" % TIER_NAMES[t], ""]
        lines.append("| program | %s traces | %s instructions per trace | %s traces | %s instructions per trace "
                     "| change |" % (base.label, base.label, new.label, new.label))
        lines.append("|---|---|---|---|---|---|")
        total = {"base": [0, 0], "new": [0, 0]}
        for p in list(programs) + ["all programs"]:
            per = {}
            cells = []
            for role in ("base", "new"):
                if p == "all programs":
                    instr, calls = total[role]
                else:
                    c = rows[(t, p)][role]["compile"]
                    instr, calls = c if c else (None, None)
                    if c:
                        total[role][0] += instr
                        total[role][1] += calls
                per[role] = instr / calls if calls else None
                cells += ["—" if calls is None else str(calls), "—" if per[role] is None else fmt_count(round(per[role]))]
            ch = change(per["base"], per["new"])
            lines.append("| %s | %s | %s |" % (p, " | ".join(cells), "—" if ch is None else "%+.2f%%" % ch))
    return lines


def fmt_count(n):
    return "—" if n is None else "{:,}".format(n)


def change(b, n):
    return None if not b or n is None else 100.0 * (n - b) / b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", help="the new tessera-vm binary (default build/tessera-vm unless --commit)")
    ap.add_argument("--label", help="what to call it in the tables (default: its commit's short hash)")
    ap.add_argument("--commit", metavar="REV", help="build this commit's tessera-vm as the new binary")
    ap.add_argument("--baseline-vm", metavar="PATH", help="the baseline tessera-vm binary")
    ap.add_argument("--baseline-label", metavar="TEXT", help="its name in the tables (default: its commit's short hash)")
    ap.add_argument("--baseline-commit", metavar="REV", help="build this commit's tessera-vm as the baseline")
    ap.add_argument("--tiers", default="1,2", help="host tiers to count: 1, 2 or 1,2 (default 1,2)")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="subset of " + ", ".join(PROGRAMS))
    ap.add_argument("--jobs", type=int, default=1, help="valgrind runs at a time (default 1)")
    ap.add_argument("--build-jobs", type=int, help="ninja -j for --baseline-commit / --commit (default: ninja's)")
    ap.add_argument("--tolerance", type=float, default=2.0,
                    help="percent a count may move before the exit status is 1 (default 2)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="callgrind runs per binary, tier and program; the table shows the median and "
                         "the spread when the runs differ (default 1)")
    ap.add_argument("--latency-runs", type=int, default=3,
                    help="--stats runs per binary, tier and program for the compile-latency tables, "
                         "one at a time (default 3; 0: no latency tables)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    results_index.dated_arguments(ap, "instructions")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"),
                    help="where the results go (default experiments/results)")
    a = ap.parse_args()

    if shutil.which("valgrind") is None:
        sys.stderr.write("run_instructions.py: valgrind is not installed; the instruction counts need its "
                         "callgrind tool (Debian / Ubuntu: sudo apt-get install valgrind)\n")
        return 2
    if bool(a.baseline_vm) == bool(a.baseline_commit):
        ap.error("give one of --baseline-vm PATH and --baseline-commit REV")
    if a.vm and a.commit:
        ap.error("give at most one of --vm PATH and --commit REV")
    tiers = [t.strip() for t in a.tiers.split(",") if t.strip()]
    programs = [p.strip() for p in a.programs.split(",") if p.strip()]
    for t in tiers:
        if t not in TIER_OPTS:
            ap.error("unknown tier %r (1 or 2)" % t)
    for p in programs:
        if p not in ARGS:
            ap.error("unknown program %r" % p)

    try:
        if a.baseline_commit:
            bvm, bcommit = build_commit(a.baseline_commit, "baseline", a.build_jobs)
            bdirty = False
        else:
            bvm = os.path.abspath(a.baseline_vm)
            bcommit, bdirty = run_bench.source_commit(bvm)
        if a.commit:
            nvm, ncommit = build_commit(a.commit, "commit", a.build_jobs)
            ndirty = False
        else:
            nvm = os.path.abspath(a.vm or os.path.join(REPO, "build", "tessera-vm"))
            ncommit, ndirty = run_bench.source_commit(nvm)
    except RuntimeError as e:
        sys.stderr.write("run_instructions.py: %s\n" % e)
        return 2
    for vm in (bvm, nvm):
        if not os.access(vm, os.X_OK):
            sys.stderr.write("run_instructions.py: %s is not an executable tessera-vm\n" % vm)
            return 2

    def default_label(commit, dirty, fallback):
        if not commit:
            return fallback
        return commit[:7] + ("+changes" if dirty else "")
    base = Binary("baseline", a.baseline_label or default_label(bcommit, bdirty, "baseline"), bvm, bcommit, bdirty)
    new = Binary("new", a.label or default_label(ncommit, ndirty, "new"), nvm, ncommit, ndirty)
    if base.label == new.label:
        base.label, new.label = base.label + " (baseline)", new.label + " (new)"
    binaries = [base, new]
    valgrind_version = run_bench.version_of(["valgrind", "--version"]) or "unknown"
    log("baseline " + base.describe())
    log("new      " + new.describe())

    # The callgrind runs: (tier, program, binary, repetition), --jobs at a time.
    jobs = [(t, p, b, r) for t in tiers for p in programs for b in binaries for r in range(a.repeat)]
    counts = {}  # (tier, program, role) -> [(status, instructions, output, detail, compile)]
    done = [0]
    tmp = tempfile.mkdtemp(prefix="tessera-callgrind-")

    def work(job):
        t, p, b, r = job
        res = callgrind(b.vm, p, ARGS[p], t, a.timeout, tmp)
        with _print_lock:
            done[0] += 1
            n = done[0]
        status, instr, _, secs, detail, _ = res
        log("(%d/%d) tier=%s %-13s %-10s %s%s" % (
            n, len(jobs), t, p, b.label, fmt_count(instr) if status == "ok" else status.upper() + " " + detail,
            "" if secs is None else " (%.1f s)" % secs))
        return job, res

    start = time.perf_counter()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            for (t, p, b, r), (status, instr, out, _, detail, compile_cost) in ex.map(work, jobs):
                counts.setdefault((t, p, b.role), []).append((status, instr, out, detail, compile_cost))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log("callgrind runs done in %.0f s" % (time.perf_counter() - start))

    # Compile latency: --stats runs one at a time (wall times), after the callgrind runs.
    latency = {}  # (tier, program, role) -> (per-trace ms list or None, traces, detail)
    if a.latency_runs > 0:
        for t in tiers:
            for p in programs:
                for b in binaries:
                    latency[(t, p, b.role)] = compile_times(b.vm, p, ARGS[p], t, a.latency_runs, a.timeout)
            log("compile latency, tier=%s: %d --stats runs per program and binary done" % (t, a.latency_runs))

    # One row per (tier, program).
    failures, outside = [], []
    rows = {}
    for t in tiers:
        for p in programs:
            cells = {}
            for b in binaries:
                runs = counts[(t, p, b.role)]
                bad = [r for r in runs if r[0] != "ok"]
                if bad:
                    cells[b.role] = dict(status=bad[0][0], instr=None, spread=None, out=bad[0][2], detail=bad[0][3],
                                         compile=None)
                    continue
                vals = [r[1] for r in runs]
                outs = set(r[2] for r in runs)
                cells[b.role] = dict(status="ok" if len(outs) == 1 else "output changed between runs",
                                     instr=int(statistics.median(vals)),
                                     spread=(min(vals), max(vals)) if min(vals) != max(vals) else None,
                                     out=runs[0][2], detail="",
                                     # the run of the median count (the first where they agree)
                                     compile=min(runs, key=lambda r: abs(r[1] - statistics.median(vals)))[4])
            bc, nc = cells["baseline"], cells["new"]
            status = "ok"
            if bc["status"] != "ok" or nc["status"] != "ok":
                status = "baseline " + bc["status"] if bc["status"] != "ok" else "new " + nc["status"]
            elif not run_bench.same_checksum(bc["out"], nc["out"]):
                status = "checksum mismatch (%s / %s)" % (bc["out"], nc["out"])
            ch = change(bc["instr"], nc["instr"]) if status == "ok" else None
            if status != "ok":
                failures.append("tier=%s %s: %s" % (t, p, status))
            elif abs(ch) > a.tolerance:
                outside.append((t, p, ch))
            lat = {}
            for b in binaries:
                ms, traces, detail = latency.get((t, p, b.role), (None, None, ""))
                lat[b.role] = (ms, traces)
            rows[(t, p)] = dict(base=bc, new=nc, status=status, change=ch, lat=lat)

    today = datetime.date.today().isoformat()
    command = shlex.join(["python3", os.path.relpath(os.path.abspath(sys.argv[0]), REPO)] + sys.argv[1:])
    tol = "%g%%" % a.tolerance
    lines = ["# Executed instructions per host tier: %s against %s (%s)" % (new.label, base.label, today), "",
             "- machine: %d CPUs (nproc), %s, %s" % (os.cpu_count() or 0, run_bench.cpu_model(), platform.platform()),
             "- command: `%s`" % command,
             "- baseline " + base.describe(),
             "- new " + new.describe(),
             "- valgrind: %s (`valgrind --tool=callgrind`, the `Collected` total: every instruction of the "
             "process, all threads)" % valgrind_version,
             "- runs: %d callgrind run%s per binary, tier and program%s; tolerance ±%s" % (
                 a.repeat, "" if a.repeat == 1 else "s", "" if a.repeat == 1 else " (the median is shown)", tol),
             "",
             "Each cell counts one whole process: start-up, parsing, trace recording, the optimizer, the host "
             "compiler (asmjit or LLVM) and the program's run:",
             "",
             "```",
             "valgrind --tool=callgrind --smc-check=all-non-file tessera-vm run experiments/bench/tsb/PROG.tsb OPTIONS -- ARGS",
             "```",
             "",
             "The sizes are smaller than the wall-time harness's, to keep valgrind's time short. Unlike wall "
             "times, the counts do not depend on the machine's load: a change of more than a fraction of a "
             "percent is a change in what the VM does (repeated runs of one binary by the harness agree to "
             "within about 0.01%; run by hand from another directory or shell, whose environment differs, "
             "tier=2 counts moved by up to 0.1%). tier=2 runs with `async=0` (LLVM compiles before the program goes on): with the default "
             "`async=1` how far the interpreter gets while LLVM works on its thread depends on the thread "
             "schedule, and the counts vary by several percent from run to run. Both binaries must print the "
             "same checksum."]
    for t in tiers:
        lines += ["", "## %s: `%s`" % (TIER_NAMES[t], " ".join(TIER_OPTS[t])), ""]
        lines.append("| program | args | %s | %s | change |" % (base.label, new.label))
        lines.append("|---|---|---|---|---|")
        for p in programs:
            r = rows[(t, p)]

            def cell(c):
                if c["status"] != "ok":
                    return c["status"].upper()
                s = fmt_count(c["instr"])
                if c["spread"]:
                    s += " (%s to %s)" % (fmt_count(c["spread"][0]), fmt_count(c["spread"][1]))
                return s
            ch = "%+.3f%%" % r["change"] if r["change"] is not None else r["status"].upper()
            lines.append("| %s | %s | %s | %s | %s |" % (p, " ".join(ARGS[p]), cell(r["base"]), cell(r["new"]), ch))
        bad = [p for (tt, p, _) in outside if tt == t] + [f for f in failures if f.startswith("tier=%s " % t)]
        lines.append("")
        if not bad:
            lines.append("Every program within ±%s (largest change %+.3f%%); every checksum equal." % (
                tol, max((rows[(t, p)]["change"] for p in programs), key=abs)))
        else:
            lines.append("**Outside ±%s or failed: %s.**" % (tol, ", ".join(
                ["%s (%+.2f%%)" % (p, ch) for (tt, p, ch) in outside if tt == t]
                + [f for f in failures if f.startswith("tier=%s " % t)])))

    lines += compile_instruction_tables(rows, tiers, programs, base, new)

    if latency:
        lines += ["", "## Compile latency per trace (wall time; reported, not checked)", "",
                  "Median host compile time of one trace, over every trace of %d `--stats` run%s per program "
                  "and binary (the same options and sizes as above, without valgrind, one run at a time), from "
                  "each `trace` line's `(T1 X ms ..., T2 Y ms ...)`. T1 in microseconds, T2 in milliseconds. "
                  "Wall times on a shared machine move by tens of percent between runs; read the change as a "
                  "hint, the instruction counts above as the measure." % (
                      a.latency_runs, "" if a.latency_runs == 1 else "s")]
        for t in tiers:
            unit, scale, f = ("µs", 1000.0, "%.0f") if t == "1" else ("ms", 1.0, "%.2f")
            lines += ["", "### %s" % TIER_NAMES[t], ""]
            lines.append("| program | %s traces | %s median %s | %s traces | %s median %s | change |" % (
                base.label, base.label, unit, new.label, new.label, unit))
            lines.append("|---|---|---|---|---|---|")
            every = {"baseline": [], "new": []}
            for p in list(programs) + ["all programs"]:
                cells = []
                meds = {}
                for b in binaries:
                    if p == "all programs":
                        ms = every[b.role]
                        counted = [rows[(t, q)]["lat"][b.role][1] for q in programs]
                        traces = sum(n for n in counted if n is not None) if any(n is not None for n in counted) else None
                    else:
                        ms, traces = rows[(t, p)]["lat"][b.role]
                        if ms is not None:
                            every[b.role] += ms
                    meds[b.role] = statistics.median(ms) * scale if ms else None
                    cells += ["—" if traces is None else str(traces),
                              "FAILED" if ms is None else ("—" if not ms else f % meds[b.role])]
                ch = change(meds["baseline"], meds["new"])
                ch = None if ch is None else round(ch) + 0  # + 0: no "-0%"
                lines.append("| %s | %s | %s |" % (p, " | ".join(cells), "—" if ch is None else "%+d%%" % ch))
            lines += ["", "traces = traces the tier compiled in one run (the last); all programs = their sum, and "
                      "the median over every trace of every run of every program."]
    report = "\n".join(lines) + "\n"

    table = [["tier", "program", "args", "baseline", "new", "baseline_instructions", "new_instructions",
             "change_percent", "status", "baseline_traces", "baseline_median_compile_ms",
             "new_traces", "new_median_compile_ms", "baseline_compile_instructions", "baseline_compile_calls",
             "new_compile_instructions", "new_compile_calls"]]
    for t in tiers:
        for p in programs:
            r = rows[(t, p)]
            lat = []
            for role in ("baseline", "new"):
                ms, traces = r["lat"][role]
                lat += ["" if traces is None else traces,
                        "%.6f" % statistics.median(ms) if ms else ""]
            table.append([t, p, " ".join(ARGS[p]), base.label, new.label,
                         "" if r["base"]["instr"] is None else r["base"]["instr"],
                         "" if r["new"]["instr"] is None else r["new"]["instr"],
                         "" if r["change"] is None else "%.4f" % r["change"], r["status"]] + lat
                        + [v for role in ("base", "new")
                           for v in (r[role]["compile"] or ("", ""))])
    # The tiers measured go into the dated copies' names, after the date: instructions-DATE-tier1-tier2[-TAG].
    what = "-".join("tier" + t for t in tiers) + ("-" + a.tag if a.tag else "")
    dated = results_index.dated_run(a.dated or a.tag, what)
    written = results_index.save(a.out_dir, "instructions", "md", report, dated)
    written += results_index.save(a.out_dir, "instructions", "csv", results_index.csv_text(table), dated)
    log("wrote " + ", ".join(os.path.basename(x) for x in written) + " in " + a.out_dir)
    results_index.refresh(a.out_dir)
    print(report)
    if failures or outside:
        log("%d failed run(s), %d program(s) outside ±%s" % (len(failures), len(outside), tol))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
