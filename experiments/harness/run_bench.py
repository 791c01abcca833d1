#!/usr/bin/env python3
"""Benchmark harness: Tessera VM (trace JIT and interpreter) against Lua 5.4, LuaJIT (-joff and
JIT), CPython, PyPy and C.

Runs every program of the scalar suite under each runtime, takes the median of --runs wall
times, and checks that every runtime prints the same checksum as tessera-vm. Two Tessera
runtimes: `tessera` (JIT on, the default) and `tessera-interp` (`--jit=off`). Then, unless
--no-warmup, one extra run of `tessera --stats` per program gives the warm-up table (traces
recorded / compiled / aborted, recording and compiling time, time to the first and to the last
compiled trace). Writes experiments/results/jit-YYYY-MM-DD.md (both tables) + .csv, the warm-up
CSV jit-warmup-YYYY-MM-DD.csv, and latest.md / latest.csv / latest-warmup.csv. Older results
files (interp-*.md, the interpreter-only runs) are never touched.

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
PEERS = ["tessera", "tessera-interp", "lua5.4", "luajit-joff", "luajit", "python3", "pypy3", "c"]


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


TESSERA = ("tessera", "tessera-interp")

# Lines of `tessera-vm run --stats` (stderr) read for the warm-up table.
STATS_PATTERNS = {
    "traces": re.compile(r"traces:\s*(\d+) recorded,\s*(\d+) compiled(?: \((\d+) side traces?\))?,"
                         r"\s*(\d+) aborted,\s*(\d+) loops? blacklisted"),
    "time": re.compile(r"time: recording ([\d.]+) ms, compiling ([\d.]+) ms(?:; (\d+) IR instructions)?"),
    "warmup": re.compile(r"warm-up: first trace compiled at ([\d.]+) ms, last at ([\d.]+) ms"),
    "wall": re.compile(r"wall time: ([\d.]+) ms"),
}
WARMUP_FIELDS = ["traces_recorded", "traces_compiled", "side_traces", "traces_aborted", "loops_blacklisted",
                 "recording_ms", "compiling_ms", "ir_instructions", "first_trace_ms",
                 "last_trace_ms", "vm_wall_ms"]


def parse_stats(text):
    """The warm-up fields of a --stats report; a field whose line is missing is None."""
    f = dict.fromkeys(WARMUP_FIELDS)
    m = STATS_PATTERNS["traces"].search(text)
    if m:
        (f["traces_recorded"], f["traces_compiled"], f["side_traces"], f["traces_aborted"],
         f["loops_blacklisted"]) = (int(g) if g is not None else None for g in m.groups())
    m = STATS_PATTERNS["time"].search(text)
    if m:
        f["recording_ms"], f["compiling_ms"] = float(m.group(1)), float(m.group(2))
        f["ir_instructions"] = int(m.group(3)) if m.group(3) else None
    m = STATS_PATTERNS["warmup"].search(text)
    if m:
        f["first_trace_ms"], f["last_trace_ms"] = float(m.group(1)), float(m.group(2))
    m = STATS_PATTERNS["wall"].search(text)
    if m:
        f["vm_wall_ms"] = float(m.group(1))
    return f


def run_stats(cmd, timeout):
    """One run with --stats: (status, wall seconds, stdout, stderr, detail)."""
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, "", "", "timed out after %gs" % timeout
    except OSError as e:
        return "crash", None, "", "", str(e)
    elapsed = time.perf_counter() - start
    out = p.stdout.decode("utf-8", "replace").strip()
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        first = err.strip().splitlines()
        return "crash", elapsed, out, err, "exit %d: %s" % (p.returncode, first[0] if first else "")
    return "ok", elapsed, out, err, ""


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
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the extra `tessera --stats` run per program (warm-up table)")
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
    peers = list(dict.fromkeys(peers))
    bench = os.path.join(a.shared, "bench")
    tsb_dir = os.path.join(REPO, "experiments", "bench", "tsb")
    vm = os.path.abspath(a.vm)

    notes = []
    versions = {}
    # How each peer runs a program: (command prefix or None when unavailable, source folder, ext)
    runners = {}
    if os.path.exists(vm):
        versions["tessera"] = versions["tessera-interp"] = version_of([vm, "--version"])

        def tessera_cmd(prog, args, opts=()):
            return ([vm, "run", os.path.join(tsb_dir, prog + ".tsb")] + list(opts)
                    + (["--"] + args if args else []))
        runners["tessera"] = lambda prog, args: tessera_cmd(prog, args)
        runners["tessera-interp"] = lambda prog, args: tessera_cmd(prog, args, ["--jit=off"])
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
    mismatches = 0
    failures = 0
    for prog in programs:
        args = SMALL_ARGS[prog] if a.size == "small" else []
        want = EXPECTED_SMALL[prog] if a.size == "small" else None
        ref, ref_name = None, None
        for peer in peers:
            cmd = runners[peer](prog, args)
            if cmd is None:
                results[(prog, peer)] = Result("missing", detail="not built")
                continue
            log("%-14s %-12s %s" % (prog, peer, shlex.join(cmd)))
            r = measure(cmd, a.runs, a.timeout, env_pypy if peer == "pypy3" else None)
            if r.status == "ok":
                mismatch = None
                if peer in TESSERA and want is not None and not same_checksum(want, r.output):
                    mismatch = "printed %r, expected %r" % (r.output, want)
                elif ref is not None and not same_checksum(ref, r.output):
                    mismatch = "printed %r, %s printed %r" % (r.output, ref_name, ref)
                if mismatch:
                    r.status, r.detail = "mismatch", mismatch
                elif peer in TESSERA and ref is None:
                    # The reference is the JIT's checksum; the interpreter's if the JIT failed.
                    ref, ref_name = r.output, "tessera-vm" if peer == "tessera" else "tessera-vm --jit=off"
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
        # Warm-up: one more run of the JIT with --stats (stderr), not counted in the timings.
        cmd = tessera_cmd(prog, args, ["--stats"])
        log("%-14s %-12s %s" % (prog, "warm-up", shlex.join(cmd)))
        status, t, out, err, detail = run_stats(cmd, a.timeout)
        w = {"status": status, "seconds": t, "output": out, "detail": detail}
        w.update(parse_stats(err))
        if status == "ok":
            if want is not None and not same_checksum(want, out):
                w["status"], w["detail"] = "mismatch", "printed %r, expected %r" % (out, want)
            elif ref is not None and not same_checksum(ref, out):
                w["status"], w["detail"] = "mismatch", "printed %r, %s printed %r" % (out, ref_name, ref)
        if w["status"] == "mismatch":
            mismatches += 1
            log("!!! CHECKSUM MISMATCH %s tessera --stats: %s" % (prog, w["detail"]))
        elif w["status"] != "ok":
            failures += 1
            log("!!! %s tessera --stats: %s %s" % (prog, w["status"].upper(), w["detail"]))
        else:
            log("    %.3f s, traces %s compiled, first at %s ms, last at %s ms" % (
                t, w["traces_compiled"], w["first_trace_ms"], w["last_trace_ms"]))
        warmup[prog] = w
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
        ("tessera / luajit -joff", "tessera", "luajit-joff", "%.2fx"),
        ("tessera-interp / luajit -joff", "tessera-interp", "luajit-joff", "%.2fx"),
    ]
    ratio_cols = [c for c in ratio_cols if c[1] in peers and c[2] in peers]

    today = datetime.date.today().isoformat()
    command = shlex.join([sys.executable] + sys.argv)
    lines = ["# Tessera VM benchmarks (trace JIT and interpreter), %s" % today, "",
             "- machine: %d CPUs (nproc), %s, %s" % (os.cpu_count() or 0, cpu_model(), platform.platform()),
             "- size: %s; runs per cell: %d (median wall seconds)" % (a.size, a.runs),
             "- command: `%s`" % command, "- versions:"]
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
                 "included); `tessera` = tessera-vm with its trace JIT (the default), `tessera-interp` = "
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
        wh = ["program", "traces recorded", "compiled", "of which side traces", "aborted", "blacklisted", "recording ms",
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
                num(w["loops_blacklisted"]), ms(w["recording_ms"], "%.3f"), ms(w["compiling_ms"]),
                ms(w["first_trace_ms"]), ms(w["last_trace_ms"]), share,
                ("%.3f" % wall if wall else "-") + status, cell(prog, "tessera")]) + " |")
        lines.append("")
        lines.append("From the `--stats` report (stderr) of one more run of `tessera` per program, not "
                     "counted in the wall-time table: traces recorded, compiled and aborted, loops "
                     "blacklisted; total milliseconds spent recording and compiling traces; first / "
                     "last trace ms = milliseconds from JIT start (right before the program runs) to "
                     "the first and to the last compiled trace — after the last one the JIT has "
                     "settled (steady state, as far as the JIT is concerned). compiling % of wall = "
                     "compiling time / wall s. wall s = wall seconds of this run (whole process, "
                     "`--stats` on); median wall s = the JIT's cell in the table above. "
                     "`-` = line missing from the report (e.g. no trace compiled).")
    if mismatches:
        lines.append("")
        lines.append("**%d checksum mismatch(es)** — see the log of the run." % mismatches)
    report = "\n".join(lines) + "\n"

    os.makedirs(a.out_dir, exist_ok=True)
    stem = os.path.join(a.out_dir, "jit-%s" % today)
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
    written = [stem + ".md", stem + ".csv", "latest.md", "latest.csv"]
    if warmup:
        wstem = os.path.join(a.out_dir, "jit-warmup-%s" % today)
        for path in (wstem + ".csv", os.path.join(a.out_dir, "latest-warmup.csv")):
            with open(path, "w", newline="") as f:
                cw = csv.writer(f)
                cw.writerow(["program", "status"] + WARMUP_FIELDS + ["wall_seconds", "output"])
                for prog in programs:
                    wr = warmup.get(prog)
                    if wr:
                        cw.writerow([prog, wr["status"]]
                                    + ["" if wr[k] is None else wr[k] for k in WARMUP_FIELDS]
                                    + ["%.6f" % wr["seconds"] if wr["seconds"] else "", wr["output"]])
        written += [wstem + ".csv", "latest-warmup.csv"]
    log("wrote " + ", ".join(os.path.relpath(x, a.out_dir) if os.path.isabs(x) else x for x in written)
        + " in " + a.out_dir)
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
