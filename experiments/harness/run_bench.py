#!/usr/bin/env python3
"""Benchmark harness: Tessera VM against Lua 5.4, LuaJIT (-joff and JIT), CPython, PyPy and C.

Runs every program of the scalar suite under each runtime, takes the median of --runs wall
times, checks that every runtime prints the same checksum as tessera-vm, and writes
experiments/results/interp-YYYY-MM-DD.md (+ .csv) and experiments/results/latest.md (+ .csv).

Programs: experiments/bench/tsb/*.tsb (ours); the twins live in the shared folder
(../shared/bench/{lua,py,c} relative to the repository root, or --shared PATH).
"""

import argparse
import csv
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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = ["fib", "loop_sum", "mandelbrot", "nbody", "sieve", "spectral_norm",
            "matmul_scalar", "fannkuch"]
# Sizes for CI smoke runs: each finishes in well under 0.5 s on the interpreter.
SMALL_ARGS = {
    "fib": ["20"], "loop_sum": ["100000", "1"], "mandelbrot": ["60", "50"],
    "nbody": ["2000"], "sieve": ["200000"], "spectral_norm": ["60"],
    "matmul_scalar": ["40"], "fannkuch": ["7"],
}
# Checksums of the small sizes (computed with the Python twins), so that a run with tessera-vm
# alone still verifies its output.
EXPECTED_SMALL = {
    "fib": "6765", "loop_sum": "199999", "mandelbrot": "1428",
    "nbody": "-0.169075164 -0.169071607", "sieve": "17984", "spectral_norm": "1.274206094",
    "matmul_scalar": "-22.500000", "fannkuch": "228 16",
}
PEERS = ["tessera", "lua5.4", "luajit-joff", "luajit", "python3", "pypy3", "c"]


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


def measure(cmd, runs, timeout, env=None):
    times, output = [], ""
    for _ in range(runs):
        status, t, out, detail = run_once(cmd, timeout, env)
        if status != "ok":
            return Result(status, None, out, detail)
        if output and out != output:
            return Result("crash", None, out, "output changed between runs")
        output = out
        times.append(t)
    return Result("ok", statistics.median(times), output)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"), help="tessera-vm binary")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"),
                    help="the shared folder holding bench/{lua,py,c} (default: ../shared)")
    ap.add_argument("--runs", type=int, default=3, help="runs per program and runtime (median)")
    ap.add_argument("--size", choices=["small", "default"], default="default",
                    help="small: CI smoke sizes; default: the programs' own sizes (~1 s under a JIT)")
    ap.add_argument("--programs", help="comma-separated subset of: " + ",".join(PROGRAMS))
    ap.add_argument("--peers", help="comma-separated subset of: " + ",".join(PEERS))
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"))
    ap.add_argument("--check-only", action="store_true",
                    help="exit non-zero on any checksum mismatch, crash or timeout (for CI)")
    a = ap.parse_args()

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
    bench = os.path.join(a.shared, "bench")
    tsb_dir = os.path.join(REPO, "experiments", "bench", "tsb")
    vm = os.path.abspath(a.vm)

    notes = []
    versions = {}
    # How each peer runs a program: (command prefix or None when unavailable, source folder, ext)
    runners = {}
    if os.path.exists(vm):
        versions["tessera"] = version_of([vm, "--version"])
        runners["tessera"] = lambda prog, args: ([vm, "run", os.path.join(tsb_dir, prog + ".tsb")]
                                                + (["--"] + args if args else []))
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
    mismatches = 0
    failures = 0
    for prog in programs:
        args = SMALL_ARGS[prog] if a.size == "small" else []
        ref = None
        for peer in peers:
            cmd = runners[peer](prog, args)
            if cmd is None:
                results[(prog, peer)] = Result("missing", detail="not built")
                continue
            log("%-14s %-12s %s" % (prog, peer, shlex.join(cmd)))
            r = measure(cmd, a.runs, a.timeout, env_pypy if peer == "pypy3" else None)
            if r.status == "ok":
                if peer == "tessera":
                    ref = r.output
                    want = EXPECTED_SMALL[prog] if a.size == "small" else None
                    if want is not None and not same_checksum(want, r.output):
                        r.status = "mismatch"
                        r.detail = "printed %r, expected %r" % (r.output, want)
                elif ref is not None and not same_checksum(ref, r.output):
                    r.status = "mismatch"
                    r.detail = "printed %r, tessera-vm printed %r" % (r.output, ref)
            if r.status == "mismatch":
                mismatches += 1
                log("!!! CHECKSUM MISMATCH %s %s: %s" % (prog, peer, r.detail))
            elif r.status != "ok":
                failures += 1
                log("!!! %s %s: %s %s" % (prog, peer, r.status.upper(), r.detail))
            else:
                log("    %.3f s  -> %s" % (r.seconds, r.output))
            results[(prog, peer)] = r
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)

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

    def ratio(prog, base):
        t, b = secs(prog, "tessera"), secs(prog, base)
        return t / b if t and b else None

    def geomean(xs):
        xs = [x for x in xs if x]
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None

    today = datetime.date.today().isoformat()
    command = shlex.join([sys.executable] + sys.argv)
    lines = ["# Tessera VM interpreter benchmarks, %s" % today, "",
             "- machine: %d CPUs (nproc), %s, %s" % (os.cpu_count() or 0, cpu_model(), platform.platform()),
             "- size: %s; runs per cell: %d (median wall seconds)" % (a.size, a.runs),
             "- command: `%s`" % command, "- versions:"]
    for p in peers:
        lines.append("  - %s: %s" % (p, versions.get(p) or "unknown"))
    for n in notes:
        lines.append("- note: %s" % n)
    lines.append("")
    header = ["program"] + peers + ["tessera / luajit", "tessera / luajit -joff"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for prog in programs:
        row = [prog] + [cell(prog, p) for p in peers]
        for base in ("luajit", "luajit-joff"):
            r = ratio(prog, base)
            row.append("%.2fx" % r if r else "—")
        lines.append("| " + " | ".join(row) + " |")
    gm = ["geomean"] + [("%.3f" % geomean([secs(pr, p) for pr in programs]))
                        if geomean([secs(pr, p) for pr in programs]) else "—" for p in peers]
    for base in ("luajit", "luajit-joff"):
        g = geomean([ratio(pr, base) for pr in programs])
        gm.append("%.2fx" % g if g else "—")
    lines.append("| " + " | ".join(gm) + " |")
    lines.append("")
    lines.append("Cells: median seconds; MISMATCH = checksum differs from tessera-vm's; CRASH / TIMEOUT = "
                 "the run failed. Geometric means over the programs each runtime completed.")
    if mismatches:
        lines.append("")
        lines.append("**%d checksum mismatch(es)** — see the log of the run." % mismatches)
    report = "\n".join(lines) + "\n"

    os.makedirs(a.out_dir, exist_ok=True)
    stem = os.path.join(a.out_dir, "interp-%s" % today)
    for path in (stem + ".md", os.path.join(a.out_dir, "latest.md")):
        with open(path, "w") as f:
            f.write(report)
    for path in (stem + ".csv", os.path.join(a.out_dir, "latest.csv")):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["program", "runtime", "status", "median_seconds", "output"])
            for prog in programs:
                for p in peers:
                    r = results.get((prog, p))
                    if r:
                        w.writerow([prog, p, r.status, "%.6f" % r.seconds if r.seconds else "", r.output])
    log("wrote %s.md, %s.csv and latest.md" % (stem, stem))
    print(report)
    if missing_vm:
        failures += 1
    if mismatches or failures:
        log("%d mismatch(es), %d failed run(s)" % (mismatches, failures))
        if a.check_only or mismatches:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
