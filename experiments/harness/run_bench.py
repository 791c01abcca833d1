#!/usr/bin/env python3
"""Benchmark harness: Tessera VM (trace JIT and interpreter) against Lua 5.4, LuaJIT (-joff and
JIT), CPython, PyPy and C.

Runs every program of the scalar suite under each runtime, takes the median of --runs wall
times, and checks that every runtime prints the same checksum as tessera-vm. Four Tessera
runtimes: `tessera` (JIT on, the default host tier `auto`: asmjit T1 first, LLVM T2 for the
traces that stay hot), `tessera-t1` (`--jit-param tier=1`, asmjit only), `tessera-t2`
(`--jit-param tier=2`, LLVM only) and `tessera-interp` (`--jit=off`). Then, unless --no-warmup,
one extra run of `tessera --stats` per program gives the warm-up table (traces recorded /
compiled / aborted, recording and compiling time, time to the first and to the last compiled
trace), and one extra `--stats` run with tier=1 / tier=2 (for tessera-t1 / tessera-t2 when
selected) gives the compile-latency-per-tier table (per-trace T1 and T2 compile times, code
bytes); and experiments/bench/warmup/warmup.tsb runs once under --jit=off, tier=1, tier=2
(async=0) and auto, printing its time per iteration, for the warm-up plot. Writes
experiments/results/jit-latest.md (all tables, a link to the plot) + .csv, the warm-up CSV
jit-warmup-latest.csv, the per-iteration CSV jit-warmup-iterations-latest.csv and the plot
jit-warmup-latest.svg (at --size small / short: jit-small-*, jit-short-*); with --dated (or --tag
TEXT) also copies named jit-DATE[-TEXT].md, ...,
which a document should cite (experiments/results/INDEX.md, rewritten at the end, lists them).

Programs: experiments/bench/tsb/*.tsb (ours); the twins live in the shared folder
(../shared/bench/{lua,py,c} relative to the repository root, or --shared PATH).
"""

import argparse
import datetime
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The --stats report (its parsers, and a run that reads it) and the warm-up plot.
from stats_report import TIER_FIELDS, WARMUP_FIELDS, parse_stats, parse_tiers, run_stats, tier_summary
from svg_plot import svg_line_plot
import results_index

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = ["fib", "loop_sum", "mandelbrot", "nbody", "sieve", "spectral_norm",
            "matmul_scalar", "fannkuch"]
# Sizes for CI smoke runs: each finishes in well under 0.5 s on the interpreter.
SMALL_ARGS = {
    "fib": ["20"], "loop_sum": ["100000", "1"], "mandelbrot": ["60", "50"],
    "nbody": ["2000"], "sieve": ["200000"], "spectral_norm": ["60"],
    "matmul_scalar": ["40"], "fannkuch": ["7"],
}
# Sizes for the warm-up comparison (issue 42's "0.01-0.1 s programs"): about a twentieth of each
# default problem's work, the nearest whole parameter (fib 40 -> 34: phi^6 ~ 18; n^2 and n^3
# programs scale n by 0.05^(1/2) and 0.05^(1/3); fannkuch 10 -> 9 is a tenth, 8 would be 1/90).
# Chosen from the work alone, before any time was measured at them.
SHORT_ARGS = {
    "fib": ["34"], "loop_sum": ["18000000", "1"], "mandelbrot": ["900", "50"],
    "nbody": ["250000"], "sieve": ["1000000"], "spectral_norm": ["670"],
    "matmul_scalar": ["220"], "fannkuch": ["9"],
}
# Checksums of the small and short sizes (computed with the Python twins), so that a run with tessera-vm
# alone still verifies its output.
EXPECTED_SMALL = {
    "fib": "6765", "loop_sum": "199999", "mandelbrot": "1428",
    "nbody": "-0.169075164 -0.169071607", "sieve": "17984", "spectral_norm": "1.274206094",
    "matmul_scalar": "-22.500000", "fannkuch": "228 16",
}
EXPECTED_SHORT = {
    "fib": "5702887", "loop_sum": "35999999", "mandelbrot": "321907",
    "nbody": "-0.169075164 -0.169085989", "sieve": "78498", "spectral_norm": "1.274224137",
    "matmul_scalar": "1347.500000", "fannkuch": "8629 30",
}
SIZE_ARGS = {"small": SMALL_ARGS, "short": SHORT_ARGS}
SIZE_EXPECTED = {"small": EXPECTED_SMALL, "short": EXPECTED_SHORT}
PEERS = ["tessera", "tessera-t1", "tessera-t2", "tessera-interp", "lua5.4", "luajit-joff", "luajit",
         "python3", "pypy3", "c"]
# The warm-up program (experiments/bench/warmup/warmup.tsb): iterations per --size, and the
# checksum it prints at the small size (whatever the mode).
WARMUP_ITERS = {"small": 40, "short": 250, "default": 5000}  # long enough for auto to reach T2
WARMUP_EXPECTED_SMALL = "checksum -1.535387135"
# Modes the warm-up program runs under: (label, tessera-vm run options).
WARMUP_MODES = [
    ("jit=off", ["--jit=off"]),
    ("tier=1", ["--jit-param", "tier=1"]),
    ("tier=2", ["--jit-param", "tier=2", "--jit-param", "async=0"]),
    ("auto", []),
]


def log(msg):
    print("[bench] " + msg, flush=True)


def version_of(cmd):
    """First line of a tool's version output, or None if the tool is missing."""
    if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]):
        return None
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = p.stdout.decode("utf-8", "replace").strip().splitlines()
    return text[0] if text else "(unknown version)"


def git_out(cwd, *args):
    """stdout of a git command run in cwd, stripped; None if it fails."""
    try:
        p = subprocess.run(["git"] + list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    return p.stdout.decode("utf-8", "replace").strip() if p.returncode == 0 else None


# What does not go into tessera-vm: a commit that changes only these leaves the binary as it was.
NOT_VM_SOURCES = [":!experiments", ":!tests", ":!docs", ":!*.md"]


def source_commit(vm):
    """(commit hash, dirty) of the source tree a binary was built from, read from the CMake
    cache next to it (or in a parent folder): the newest commit at or before the tree's HEAD
    that changed what goes into the binary (not experiments/, tests/ or the docs), and whether the tree
    has uncommitted changes to it; (None, False) when unknown."""
    d = os.path.dirname(os.path.abspath(vm))
    while True:
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache, errors="replace") as f:
                m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", f.read(), re.M)
            if not m:
                return None, False
            head = git_out(m.group(1), "log", "-1", "--format=%H", "HEAD", "--", ".", *NOT_VM_SOURCES)
            if not head:
                return None, False
            status = git_out(m.group(1), "status", "--porcelain", "--untracked-files=no", "--", ".",
                             *NOT_VM_SOURCES)
            return head, bool(status)
        parent = os.path.dirname(d)
        if parent == d:
            return None, False
        d = parent


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def numbers_in(text):
    return re.findall(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?", text)


def same_checksum(ref, got):
    """Compares two checksum lines numerically (1e-6 relative) token by token."""
    a, b = numbers_in(ref), numbers_in(got)
    if not a or len(a) != len(b):
        return ref.strip() == got.strip()
    for x, y in zip(a, b):
        fx, fy = float(x), float(y)
        if fx == fy:
            continue
        if abs(fx - fy) > 1e-6 * max(abs(fx), abs(fy)):
            return False
    return True


class Result:
    def __init__(self, status, seconds=None, output="", detail=""):
        self.status = status          # ok | crash | timeout | missing | mismatch
        self.seconds = seconds        # median wall seconds when status is ok or mismatch
        self.output = output
        self.detail = detail


def run_once(cmd, timeout, env=None):
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", None, "", "timed out after %gs" % timeout
    except OSError as e:
        return "crash", None, "", str(e)
    elapsed = time.perf_counter() - start
    out = p.stdout.decode("utf-8", "replace").strip()
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return "crash", elapsed, out, "exit %d: %s" % (p.returncode, err[0] if err else "")
    return "ok", elapsed, out, ""


def measure_interleaved(cmds, runs, timeout):
    """Runs each of `cmds` (key -> (command, env)) `runs` times, in rounds that run every command
    once, so that a slow spell of the machine falls on all the runtimes rather than on one of them;
    key -> Result (the median). A command that fails, or prints other than it did before, is not run
    again."""
    times = {k: [] for k in cmds}
    output, done = {}, {}
    for _ in range(runs):
        for k, (cmd, env) in cmds.items():
            if k in done:
                continue
            status, t, out, detail = run_once(cmd, timeout, env)
            if status != "ok":
                done[k] = Result(status, None, out, detail)
            elif k in output and out != output[k]:
                done[k] = Result("crash", None, out, "output changed between runs")
            else:
                output[k] = out
                times[k].append(t)
    return {k: done[k] if k in done else Result("ok", statistics.median(times[k]), output[k]) for k in cmds}


TESSERA = ("tessera", "tessera-t1", "tessera-t2", "tessera-interp")
# tessera-vm run options of each Tessera runtime, and how the log names it.
TESSERA_OPTS = {"tessera": [], "tessera-t1": ["--jit-param", "tier=1"],
                "tessera-t2": ["--jit-param", "tier=2"], "tessera-interp": ["--jit=off"]}
TESSERA_NAMES = {"tessera": "tessera-vm", "tessera-t1": "tessera-vm --jit-param tier=1",
                 "tessera-t2": "tessera-vm --jit-param tier=2", "tessera-interp": "tessera-vm --jit=off"}
# Compile-latency runs: (tier, the peer that asks for it) — one extra `--stats` run per program
# with `--jit-param tier=N`, only when that peer is selected.
TIER_RUNS = [("1", "tessera-t1"), ("2", "tessera-t2")]

def parse_iterations(text):
    """The warm-up program's output: ([(iteration, microseconds)], checksum line or None)."""
    times, check = [], None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "iter":
            try:
                times.append((int(parts[1]), float(parts[2])))
            except ValueError:
                pass
        elif parts and parts[0] == "checksum":
            check = line.strip()
    return times, check


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"), help="tessera-vm binary")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"),
                    help="the shared folder holding bench/{lua,py,c} (default: ../shared)")
    ap.add_argument("--runs", type=int, default=3, help="runs per program and runtime (median)")
    ap.add_argument("--size", choices=["small", "short", "default"], default="default",
                    help="small: CI smoke sizes (a few ms); short: about 1/20 of each default "
                         "problem (0.01-0.1 s under the JIT, for warm-up); default: the programs' "
                         "own sizes (~1 s under a JIT)")
    ap.add_argument("--programs", help="comma-separated subset of: " + ",".join(PROGRAMS))
    ap.add_argument("--peers", help="comma-separated subset of: " + ",".join(PEERS))
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"))
    results_index.dated_arguments(ap, "jit[-SIZE]")
    ap.add_argument("--check-only", action="store_true",
                    help="exit non-zero on any checksum mismatch, crash or timeout (for CI)")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the extra `tessera --stats` run per program (warm-up table)")
    a = ap.parse_args()
    # The results' name: jit-latest.* at the default size, jit-SIZE-latest.* at the others.
    results_name = "jit" if a.size == "default" else "jit-" + a.size

    programs = a.programs.split(",") if a.programs else PROGRAMS
    peers = a.peers.split(",") if a.peers else PEERS
    for p in programs:
        if p not in PROGRAMS:
            ap.error("unknown program %s" % p)
    for p in peers:
        if p not in PEERS:
            ap.error("unknown peer %s" % p)
    if "tessera" not in peers:
        peers = ["tessera"] + peers   # the reference checksum comes from tessera-vm
    peers = list(dict.fromkeys(peers))
    bench = os.path.join(a.shared, "bench")
    tsb_dir = os.path.join(REPO, "experiments", "bench", "tsb")
    vm = os.path.abspath(a.vm)

    notes = []
    versions = {}
    # How each peer runs a program: (command prefix or None when unavailable, source folder, ext)
    runners = {}
    def tessera_cmd(prog, args, opts=(), path=None):
        return ([vm, "run", path or os.path.join(tsb_dir, prog + ".tsb")] + list(opts)
                + (["--"] + args if args else []))
    if os.path.exists(vm):
        vm_version = version_of([vm, "--version"])
        for peer in TESSERA:
            versions[peer] = vm_version
            runners[peer] = (lambda opts: lambda prog, args: tessera_cmd(prog, args, opts))(TESSERA_OPTS[peer])
    else:
        notes.append("tessera-vm not found at %s" % vm)
        log("!!! tessera-vm not found at %s" % vm)
    if shutil.which("lua5.4"):
        versions["lua5.4"] = version_of(["lua5.4", "-v"])
        runners["lua5.4"] = lambda prog, args: ["lua5.4", os.path.join(bench, "lua", prog + ".lua")] + args
    if shutil.which("luajit"):
        versions["luajit"] = versions["luajit-joff"] = version_of(["luajit", "-v"])
        runners["luajit-joff"] = lambda prog, args: ["luajit", "-joff", os.path.join(bench, "lua", prog + ".lua")] + args
        runners["luajit"] = lambda prog, args: ["luajit", os.path.join(bench, "lua", prog + ".lua")] + args
    if shutil.which("python3"):
        versions["python3"] = version_of(["python3", "--version"])
        runners["python3"] = lambda prog, args: ["python3", os.path.join(bench, "py", prog + ".py")] + args
    if shutil.which("pypy3"):
        # pypy3 --version prints the Python version and the PyPy version on two lines
        pv = subprocess.run(["pypy3", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        versions["pypy3"] = pv.stdout.decode("utf-8", "replace").strip().replace("\n", " ")
        runners["pypy3"] = lambda prog, args: ["pypy3", os.path.join(bench, "py", prog + ".py")] + args
    tmpdir = None
    if "c" in peers and shutil.which("gcc"):
        versions["c"] = version_of(["gcc", "--version"])
        tmpdir = tempfile.mkdtemp(prefix="tessera-bench-")
        built = {}
        for prog in programs:
            src = os.path.join(bench, "c", prog + ".c")
            exe = os.path.join(tmpdir, prog)
            cmd = ["gcc", "-O2", "-o", exe, src, "-lm"]
            log("compiling " + shlex.join(cmd))
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode == 0:
                built[prog] = exe
            else:
                notes.append("gcc failed on %s: %s" % (prog, r.stdout.decode("utf-8", "replace")[:200]))
        runners["c"] = lambda prog, args: [built[prog]] + args if prog in built else None
    for p in peers:
        if p not in runners:
            notes.append("peer %s is not installed; skipped" % p)
    peers = [p for p in peers if p in runners]
    missing_vm = "tessera" not in runners

    env_pypy = dict(os.environ, PYPY_GC_NURSERY="4M")  # see shared/bench/README.md
    results = {}   # (prog, peer) -> Result
    warmup = {}    # prog -> dict: status, seconds, output, detail and WARMUP_FIELDS
    tiers = {}     # (prog, "default" | "1" | "2") -> parse_tiers() of that --stats run, or None
    tier_status = {}  # (prog, "1" | "2") -> status of the tier=N --stats run
    tier_runs = [(t, peer) for t, peer in TIER_RUNS if peer in peers]
    mismatches = 0
    failures = 0
    for prog in programs:
        args = SIZE_ARGS[a.size][prog] if a.size in SIZE_ARGS else []
        want = SIZE_EXPECTED[a.size][prog] if a.size in SIZE_EXPECTED else None
        ref, ref_name = None, None
        cmds = {}
        for peer in peers:
            cmd = runners[peer](prog, args)
            if cmd is None:
                results[(prog, peer)] = Result("missing", detail="not built")
                continue
            log("%-14s %-12s %s" % (prog, peer, shlex.join(cmd)))
            cmds[peer] = (cmd, env_pypy if peer == "pypy3" else None)
        measured = measure_interleaved(cmds, a.runs, a.timeout)
        for peer in cmds:
            r = measured[peer]
            if r.status == "ok":
                mismatch = None
                if peer in TESSERA and want is not None and not same_checksum(want, r.output):
                    mismatch = "printed %r, expected %r" % (r.output, want)
                elif ref is not None and not same_checksum(ref, r.output):
                    mismatch = "printed %r, %s printed %r" % (r.output, ref_name, ref)
                if mismatch:
                    r.status, r.detail = "mismatch", mismatch
                elif peer in TESSERA and ref is None:
                    # The reference is the default JIT's checksum; the next Tessera runtime's
                    # (tier=1, tier=2, then the interpreter) if it failed.
                    ref, ref_name = r.output, TESSERA_NAMES[peer]
            if r.status == "mismatch":
                mismatches += 1
                log("!!! CHECKSUM MISMATCH %s %s: %s" % (prog, peer, r.detail))
            elif r.status != "ok":
                failures += 1
                log("!!! %s %s: %s %s" % (prog, peer, r.status.upper(), r.detail))
            else:
                log("    %.3f s  -> %s" % (r.seconds, r.output))
            results[(prog, peer)] = r
        if a.no_warmup or "tessera" not in runners:
            continue
        # Warm-up: one more run of the JIT with --stats (stderr), not counted in the timings;
        # then, for the compile-latency table, one with tier=1 / tier=2 for each of tessera-t1 /
        # tessera-t2 that is selected.
        for tier, tpeer in [("default", "tessera")] + tier_runs:
            opts = ["--stats"] if tier == "default" else ["--stats", "--jit-param", "tier=" + tier]
            label = "tessera --stats" if tier == "default" else "tessera --stats tier=" + tier
            cmd = tessera_cmd(prog, args, opts)
            log("%-14s %-12s %s" % (prog, "warm-up" if tier == "default" else "tier=" + tier, shlex.join(cmd)))
            status, t, out, err, detail = run_stats(cmd, a.timeout)
            w = {"status": status, "seconds": t, "output": out, "detail": detail}
            w.update(parse_stats(err))
            tiers[(prog, tier)] = parse_tiers(err) if err else None
            if status == "ok":
                if want is not None and not same_checksum(want, out):
                    w["status"], w["detail"] = "mismatch", "printed %r, expected %r" % (out, want)
                elif ref is not None and not same_checksum(ref, out):
                    w["status"], w["detail"] = "mismatch", "printed %r, %s printed %r" % (out, ref_name, ref)
            if w["status"] == "mismatch":
                mismatches += 1
                log("!!! CHECKSUM MISMATCH %s %s: %s" % (prog, label, w["detail"]))
            elif w["status"] != "ok":
                failures += 1
                log("!!! %s %s: %s %s" % (prog, label, w["status"].upper(), w["detail"]))
            elif tier == "default":
                log("    %.3f s, traces %s compiled, first at %s ms, last at %s ms" % (
                    t, w["traces_compiled"], w["first_trace_ms"], w["last_trace_ms"]))
            else:
                n, med, code = tier_summary(tiers[(prog, tier)]["T" + tier])
                log("    %.3f s, T%s: %s traces, median %s ms per trace, %s bytes of code" % (
                    t, tier, n, med, code))
            if tier == "default":
                warmup[prog] = w
            else:
                tier_status[(prog, tier)] = w["status"]
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)

    # Warm-up plot: the warm-up program once under each mode, its time per iteration.
    iters = {}   # mode -> dict: status, seconds, output (checksum line), detail, times [(i, µs)]
    if not a.no_warmup and "tessera" in runners:
        n_iter = WARMUP_ITERS[a.size]
        wpath = os.path.join(REPO, "experiments", "bench", "warmup", "warmup.tsb")
        for mode, opts in WARMUP_MODES:
            cmd = tessera_cmd("warmup", [str(n_iter)], opts, path=wpath)
            log("%-14s %-12s %s" % ("warmup.tsb", mode, shlex.join(cmd)))
            status, t, out, detail = run_once(cmd, a.timeout)
            times, check = parse_iterations(out)
            if status == "ok" and (len(times) != n_iter or check is None):
                status, detail = "crash", "printed %d iteration lines (expected %d)%s" % (
                    len(times), n_iter, "" if check else " and no checksum line")
            iters[mode] = {"status": status, "seconds": t, "output": check or "", "detail": detail,
                           "times": times}
        # Checksums: against the known one at --size small, and across the modes (reference:
        # auto, or the first mode that passed if auto failed).
        want = WARMUP_EXPECTED_SMALL if a.size == "small" else None
        ref, ref_mode = None, None
        for mode in ["auto"] + [m for m, _ in WARMUP_MODES if m != "auto"]:
            it = iters[mode]
            if it["status"] != "ok":
                continue
            if want is not None and not same_checksum(want, it["output"]):
                it["status"], it["detail"] = "mismatch", "printed %r, expected %r" % (it["output"], want)
            elif ref is not None and not same_checksum(ref, it["output"]):
                it["status"], it["detail"] = "mismatch", "printed %r, %s printed %r" % (it["output"], ref_mode, ref)
            elif ref is None:
                ref, ref_mode = it["output"], mode
        for mode, _ in WARMUP_MODES:
            it = iters[mode]
            if it["status"] == "mismatch":
                mismatches += 1
                log("!!! CHECKSUM MISMATCH warmup.tsb %s: %s" % (mode, it["detail"]))
            elif it["status"] != "ok":
                failures += 1
                log("!!! warmup.tsb %s: %s %s" % (mode, it["status"].upper(), it["detail"]))
            else:
                us = [u for _, u in it["times"]]
                log("    %-8s %.3f s, first iteration %.1f us, median %.1f us -> %s" % (
                    mode, it["seconds"], us[0], statistics.median(us), it["output"]))

    # Report.
    def cell(prog, peer):
        r = results.get((prog, peer))
        if r is None:
            return "—"
        if r.status == "ok":
            return "%.3f" % r.seconds
        if r.status == "mismatch":
            return "%.3f MISMATCH" % r.seconds
        return r.status.upper()

    def secs(prog, peer):
        r = results.get((prog, peer))
        return r.seconds if r is not None and r.status == "ok" else None

    def ratio(prog, num, den):
        t, b = secs(prog, num), secs(prog, den)
        return t / b if t and b else None

    def geomean(xs):
        xs = [x for x in xs if x]
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None

    # Ratio columns: (header, numerator runtime, denominator runtime, cell format). Shown only
    # when both runtimes ran. The JIT speed-up is interp time / JIT time (> 1: the JIT is faster);
    # the others are time ratios (> 1: tessera is slower than the peer).
    ratio_cols = [
        ("JIT speed-up (tessera-interp / tessera)", "tessera-interp", "tessera", "%.2fx"),
        ("tessera / luajit", "tessera", "luajit", "%.2fx"),
        ("tessera-t1 / luajit", "tessera-t1", "luajit", "%.2fx"),
        ("tessera-t2 / luajit", "tessera-t2", "luajit", "%.2fx"),
        ("tessera / luajit -joff", "tessera", "luajit-joff", "%.2fx"),
        ("tessera-interp / luajit -joff", "tessera-interp", "luajit-joff", "%.2fx"),
    ]
    ratio_cols = [c for c in ratio_cols if c[1] in peers and c[2] in peers]

    today = datetime.date.today().isoformat()
    command = shlex.join([sys.executable] + sys.argv)
    lines = ["# Tessera VM benchmarks (trace JIT and interpreter), %s" % today, "",
             "- machine: %d CPUs (nproc), %s, %s" % (os.cpu_count() or 0, cpu_model(), platform.platform()),
             "- size: %s; runs per cell: %d (median wall seconds; the runtimes' runs interleaved, each "
             "round runs every runtime once)" % (a.size, a.runs),
             "- command: `%s`" % command]
    commit, dirty = source_commit(a.vm)
    if commit:
        lines.append("- tessera-vm built from commit %s (%s; the newest that changed its sources)%s" % (
            commit[:12], git_out(REPO, "log", "-1", "--format=%cs", commit) or "date unknown",
            " plus uncommitted changes" if dirty else ""))
    lines.append("- versions:")
    for p in peers:
        lines.append("  - %s: %s" % (p, versions.get(p) or "unknown"))
    for n in notes:
        lines.append("- note: %s" % n)
    lines += ["", "## Wall times", ""]
    header = ["program"] + peers + [c[0] for c in ratio_cols]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for prog in programs:
        row = [prog] + [cell(prog, p) for p in peers]
        for _, num, den, fmt in ratio_cols:
            r = ratio(prog, num, den)
            row.append(fmt % r if r else "—")
        lines.append("| " + " | ".join(row) + " |")
    gm = ["geomean"]
    for p in peers:
        g = geomean([secs(pr, p) for pr in programs])
        gm.append("%.3f" % g if g else "—")
    for _, num, den, fmt in ratio_cols:
        g = geomean([ratio(pr, num, den) for pr in programs])
        gm.append(fmt % g if g else "—")
    lines.append("| " + " | ".join(gm) + " |")
    lines.append("")
    lines.append("Cells: median wall seconds of the whole process (start-up, parsing, JIT compilation "
                 "included); `tessera` = tessera-vm with its trace JIT (the default, host tier `auto`: "
                 "asmjit T1 code first, LLVM T2 code compiled in the background for the traces that stay "
                 "hot), `tessera-t1` = `tessera-vm run --jit-param tier=1` (asmjit T1 only), `tessera-t2` = "
                 "`tessera-vm run --jit-param tier=2` (LLVM T2 only), `tessera-interp` = "
                 "`tessera-vm run --jit=off` (interpreter only). MISMATCH = checksum differs from "
                 "tessera-vm's; CRASH / TIMEOUT = the run failed. "
                 "JIT speed-up = tessera-interp time / tessera time, a plain ratio (2.00x: the JIT takes "
                 "half the interpreter's time; below 1: the JIT run is slower). The other ratio columns are time "
                 "ratios, runtime / peer (below 1: Tessera is faster than the peer). Geometric means "
                 "over the programs each runtime (or pair of runtimes) completed.")

    def ms(v, fmt="%.1f"):
        return "-" if v is None else fmt % v

    def num(v):
        return "-" if v is None else str(v)

    if warmup:
        lines += ["", "## JIT warm-up (one extra run of `tessera --stats`)", ""]
        wh = ["program", "traces recorded", "compiled", "of which side traces", "aborted", "blacklisted loops / functions",
              "recording ms",
              "compiling ms", "first trace ms", "last trace ms", "compiling % of wall", "wall s",
              "median wall s (above)"]
        lines.append("| " + " | ".join(wh) + " |")
        lines.append("|" + "---|" * len(wh))
        for prog in programs:
            w = warmup.get(prog)
            if w is None:
                continue
            wall = w["seconds"]
            share = ("%.0f%%" % (100.0 * w["compiling_ms"] / 1000.0 / wall)
                     if wall and w["compiling_ms"] is not None else "-")
            status = "" if w["status"] == "ok" else " " + w["status"].upper()
            lines.append("| " + " | ".join([
                prog, num(w["traces_recorded"]), num(w["traces_compiled"]), num(w["side_traces"]),
                num(w["traces_aborted"]),
                num(w["loops_blacklisted"]) + " / " + num(w["functions_blacklisted"]),
                ms(w["recording_ms"], "%.3f"), ms(w["compiling_ms"]),
                ms(w["first_trace_ms"]), ms(w["last_trace_ms"]), share,
                ("%.3f" % wall if wall else "-") + status, cell(prog, "tessera")]) + " |")
        lines.append("")
        lines.append("From the `--stats` report (stderr) of one more run of `tessera` per program, not "
                     "counted in the wall-time table: traces recorded, compiled and aborted, loops and "
                     "functions blacklisted; total milliseconds spent recording and compiling traces; first / "
                     "last trace ms = milliseconds from JIT start (right before the program runs) to "
                     "the first and to the last compiled trace — after the last one the JIT has "
                     "settled (steady state, as far as the JIT is concerned). compiling % of wall = "
                     "compiling time / wall s. wall s = wall seconds of this run (whole process, "
                     "`--stats` on); median wall s = the JIT's cell in the table above. "
                     "`-` = line missing from the report (e.g. no trace compiled).")
    # Compile latency per tier: T1 figures from the tier=1 run when tessera-t1 is selected, else
    # from the default (auto) run; T2 figures from the tier=2 run when tessera-t2 is selected,
    # else from the default run (only the traces that tiered up).
    tier_src = {t: (t if any(t == tr for tr, _ in tier_runs) else "default") for t in ("1", "2")}

    def tier_data(prog, t):
        d = tiers.get((prog, tier_src[t]))
        return d["T" + t] if d else None

    def tier_row(prog):
        n1, m1, c1 = tier_summary(tier_data(prog, "1"))
        n2, m2, c2 = tier_summary(tier_data(prog, "2"))
        return dict(zip(TIER_FIELDS, [n1, None if m1 is None else round(m1 * 1000.0, 3), c1,
                                      n2, None if m2 is None else round(m2, 3), c2]))

    def dash(v, fmt="%s"):
        return "—" if v is None else fmt % v

    if tiers:
        src_text = {"default": "the default run (`tessera --stats`, tier `auto`)",
                    "1": "the `--jit-param tier=1` run", "2": "the `--jit-param tier=2` run"}
        lines += ["", "## Compile latency per tier", ""]
        th = ["program", "T1 traces", "T1 median µs / trace", "T1 code bytes",
              "T2 traces", "T2 median ms / trace", "T2 code bytes"]
        lines.append("| " + " | ".join(th) + " |")
        lines.append("|" + "---|" * len(th))
        all_ms = {"1": [], "2": []}
        all_n = {"1": [], "2": []}
        all_code = {"1": [], "2": []}
        for prog in programs:
            if (prog, "default") not in tiers:
                continue
            r = tier_row(prog)
            name = prog
            for src in sorted(set(tier_src.values())):
                st = warmup[prog]["status"] if src == "default" else tier_status.get((prog, src))
                if st and st != "ok":
                    name += " (%s run %s)" % ("default" if src == "default" else "tier=" + src, st.upper())
            for t in ("1", "2"):
                d = tier_data(prog, t)
                if d:
                    all_ms[t] += d["ms"]
                n, _, c = tier_summary(d)
                all_n[t].append(n)
                all_code[t].append(c)
            lines.append("| " + " | ".join([
                name, dash(r["t1_traces"]), dash(r["t1_median_compile_us"], "%.0f"), dash(r["t1_code_bytes"]),
                dash(r["t2_traces"]), dash(r["t2_median_compile_ms"], "%.1f"), dash(r["t2_code_bytes"])]) + " |")

        def total(xs):
            xs = [x for x in xs if x is not None]
            return sum(xs) if xs else None

        def med(xs, scale):
            return statistics.median(xs) * scale if xs else None
        lines.append("| " + " | ".join([
            "all programs", dash(total(all_n["1"])), dash(med(all_ms["1"], 1000.0), "%.0f"),
            dash(total(all_code["1"])), dash(total(all_n["2"])), dash(med(all_ms["2"], 1.0), "%.1f"),
            dash(total(all_code["2"])), ]) + " |")
        lines.append("")
        lines.append("Per-trace host compile times from the `--stats` report (the `(T1 X ms N bytes, T2 Y ms "
                     "M bytes; runs ...)` part of each `trace` line): T1 columns from %s, T2 columns from %s. "
                     "Median µs / ms = median compile time of one trace (T1 asmjit in microseconds, T2 LLVM "
                     "in milliseconds); traces and code bytes = the tier's summary line (`T1 (asmjit): N "
                     "traces compiled ..., B bytes of code`). all programs = median over every trace of "
                     "every program, totals of traces and bytes. `—` = no such line in the report (e.g. "
                     "no trace reached T2)." % (src_text[tier_src["1"]], src_text[tier_src["2"]]))
    if iters:
        lines += ["", "## Warm-up plot (experiments/bench/warmup/warmup.tsb)", "",
                  "![time per iteration of warmup.tsb under each mode](%s-warmup-{RUN}.svg)" % results_name, ""]
        ih = ["mode", "options", "iterations", "iteration 0 µs", "median µs of iterations 1-9",
              "median µs of the last half", "total ms", "checksum"]
        lines.append("| " + " | ".join(ih) + " |")
        lines.append("|" + "---|" * len(ih))
        half = WARMUP_ITERS[a.size] // 2
        for mode, opts in WARMUP_MODES:
            it = iters[mode]
            early = [u for i, u in it["times"] if 1 <= i <= 9]
            late = [u for i, u in it["times"] if i >= half]
            status = "" if it["status"] == "ok" else " " + it["status"].upper()
            lines.append("| " + " | ".join([
                mode, "`%s`" % " ".join(opts) if opts else "(none)", "%d%s" % (len(it["times"]), status),
                dash(dict(it["times"]).get(0), "%.1f"),
                dash(statistics.median(early) if early else None, "%.1f"),
                dash(statistics.median(late) if late else None, "%.1f"),
                dash(sum(u for _, u in it["times"]) / 1000.0 if it["times"] else None, "%.1f"),
                it["output"].replace("checksum", "", 1).strip() or "—"]) + " |")
        lines.append("")
        lines.append("One run per mode of `tessera-vm run experiments/bench/warmup/warmup.tsb OPTIONS -- %d`: "
                     "the same piece of scalar work (steps of a small n-body-like float update with a "
                     "call per pair) %d times, each iteration timed with `clock()` inside the program "
                     "(microseconds; the plot's y axis is logarithmic). jit=off: interpreter only; "
                     "tier=1: asmjit only; tier=2: LLVM only, compiled before going on (`async=0`), so "
                     "its compile time lands in the iterations that trigger it; auto: the default. "
                     "The per-iteration times are in `%s-warmup-iterations-{RUN}.csv`. "
                     "The checksum must agree across the modes."
                     % (WARMUP_ITERS[a.size], WARMUP_ITERS[a.size], results_name))
    if mismatches:
        lines.append("")
        lines.append("**%d checksum mismatch(es)** — see the log of the run." % mismatches)
    report = "\n".join(lines) + "\n"

    dated = results_index.dated_run(a.dated, a.tag)
    written = results_index.save(a.out_dir, results_name, "md", report, dated)
    written += results_index.save(a.out_dir, results_name, "csv", results_index.csv_text(
        [["program", "runtime", "status", "median_seconds", "output"]]
        + [[prog, p, r.status, "%.6f" % r.seconds if r.seconds else "", r.output]
           for prog in programs for p in peers for r in [results.get((prog, p))] if r]), dated)
    if warmup:
        rows = [["program", "status"] + WARMUP_FIELDS + TIER_FIELDS + ["wall_seconds", "output"]]
        for prog in programs:
            wr = warmup.get(prog)
            if wr:
                tr = tier_row(prog)
                rows.append([prog, wr["status"]]
                            + ["" if wr[k] is None else wr[k] for k in WARMUP_FIELDS]
                            + ["" if tr[k] is None else tr[k] for k in TIER_FIELDS]
                            + ["%.6f" % wr["seconds"] if wr["seconds"] else "", wr["output"]])
        written += results_index.save(a.out_dir, results_name + "-warmup", "csv", results_index.csv_text(rows), dated)
    if iters:
        written += results_index.save(a.out_dir, results_name + "-warmup-iterations", "csv", results_index.csv_text(
            [["mode", "iteration", "microseconds"]]
            + [[mode, i, us] for mode, _ in WARMUP_MODES for i, us in iters[mode]["times"]]), dated)
        svg = svg_line_plot(
            [(mode + ("" if iters[mode]["status"] == "ok" else " (" + iters[mode]["status"] + ")"),
              iters[mode]["times"]) for mode, _ in WARMUP_MODES],
            "warmup.tsb: time per iteration (%s, %d iterations)" % (today, WARMUP_ITERS[a.size]),
            "iteration", "time per iteration (µs, log scale)")
        written += results_index.save(a.out_dir, results_name + "-warmup", "svg", svg, dated)
    log("wrote " + ", ".join(os.path.basename(x) for x in written) + " in " + a.out_dir)
    results_index.refresh(a.out_dir)
    print(report.replace("{RUN}", "latest"))
    if missing_vm:
        failures += 1
    if mismatches or failures:
        log("%d mismatch(es), %d failed run(s)" % (mismatches, failures))
        if a.check_only or mismatches:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
