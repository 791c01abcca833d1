#!/usr/bin/env python3
"""Tensor benchmark harness: the programs of experiments/bench/tensor/ under Tessera VM (trace JIT
and interpreter) and under their NumPy, PyTorch (eager), numexpr and Numba twins, side by side.

Every program prints `iter_us X` for each of its N timed iterations, in order (after W warm-up
iterations), then `time_per_iter_us X` (its own timing of the N iterations together) and
`checksum C`. Each program and peer runs --runs times; the table shows the median time per
iteration, the checksums are compared with the NumPy peer's (the interpreter's when NumPy is
missing) within --rtol, and the speed-ups of tessera over numpy, torch, numexpr and numba, with
their geometric mean over the suite. A run must print exactly N `iter_us` lines (else it fails);
their values are kept with the run (run_program's result; `iter_us` in the per-program results,
one list per run) and summed up (min, median, max) in the log, not in the tables. The machine's
memory bandwidth is measured first with a STREAM triad (stream_triad.c, compiled here with
cc -O3 -march=native -fopenmp), so that the memory-bound programs' achieved GB/s can be given as a
share of it. Writes tensor-latest.md / .csv (with --dated or --tag, also
tensor-YYYY-MM-DD[-TAG].md / .csv) in --out-dir; progress goes to stderr.
"""

import argparse
import collections
import datetime
import json
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

# Shared with the scalar harness: where the repository is, the machine and the binary's commit.
from run_bench import REPO, cpu_model, git_out, source_commit, version_of
import results_index

BENCH = os.path.join(REPO, "experiments", "bench", "tensor")
HERE = os.path.dirname(os.path.abspath(__file__))

# How a peer runs program NAME. how "tsb": `tessera-vm run NAME.tsb OPTS [--tessera-args] -- N W`
# (arg = OPTS); how "py": `PYTHON NAME{arg}.py N W` (arg = file suffix), available when the Python
# modules `needs` import. Adding a peer is one line.
Peer = collections.namedtuple("Peer", "name how arg needs")
PEERS = [
    Peer("tessera", "tsb", [], ()),
    Peer("tessera-interp", "tsb", ["--jit=off"], ()),
    Peer("tessera-k2", "tsb", ["--jit-param", "specialize=0"], ()),
    Peer("numpy", "py", "_numpy", ("numpy", "scipy")),
    Peer("torch", "py", "_torch", ("torch",)),
    # The numexpr and Numba twins run the NumPy twin's inputs and loop (they import it, and so scipy).
    Peer("numexpr", "py", "_numexpr", ("numpy", "scipy", "numexpr")),
    Peer("numba", "py", "_numba", ("numpy", "scipy", "numba")),
]
PEER = {p.name: p for p in PEERS}
# Checksums are compared with the first of these that ran.
REFERENCE_ORDER = ["numpy", "tessera-interp", "tessera", "torch", "numexpr", "numba"]


def attention_flops(s, b=2, h=8, d=64):
    """Causal attention counted as its useful work: q.k and p.v (2 * D FLOPs each) over the
    S (S + 1) / 2 query-key pairs that the mask keeps (the twins compute all S^2 and mask)."""
    return 4 * d * (s * (s + 1) // 2) * b * h


F32 = 4
MIB = 1 << 20
# bound: what limits the program ("memory": report GB/s and % of STREAM; "compute": GFLOP/s;
# "overhead": per-operation dispatch, time only). bytes: the fewest bytes an iteration must move
# (inputs read once, output written once, f32). flops: arithmetic per iteration (matmuls only).
# args: [N, W] per --size, passed to every peer so that all run the same iterations; W = 60 where
# an iteration is cheap, so that Tessera's loop trace (hot after 56 iterations) is compiled before
# the timing starts (the programs run one loop of W + N iterations, timed from iteration W on).
Program = collections.namedtuple("Program", "bound bytes flops args")
PROGRAMS = {
    "elementwise_chain": Program("memory", 3 * F32 * MIB, None, {"default": [100, 60], "small": [3, 1]}),
    "softmax_rmsnorm": Program("memory", 2 * F32 * MIB + F32 * 1024, None,
                               {"default": [100, 60], "small": [3, 1]}),
    "attention_s256": Program("compute", 4 * F32 * 16 * 256 * 64, attention_flops(256),
                              {"default": [200, 20], "small": [2, 1]}),
    "attention_s1024": Program("compute", 4 * F32 * 16 * 1024 * 64, attention_flops(1024),
                               {"default": [20, 3], "small": [1, 1]}),
    "mlp_block": Program("compute", F32 * (2 * 128 * 256 + 2 * 256 * 1024 + 1024 + 256),
                         2 * (2 * 128 * 256 * 1024), {"default": [200, 60], "small": [10, 1]}),
    "small_tensor_loop": Program("overhead", None, None, {"default": [100000, 60], "small": [2000, 60]}),
    # Rows 256..512 in turn (384 on average), 512 columns: x, y read, the output written.
    "varying_shapes": Program("memory", 3 * F32 * 384 * 512, None, {"default": [200, 60], "small": [5, 1]}),
}
STREAM_ELEMENTS = {"default": 32 << 20, "small": 8 << 20}  # doubles per array: 768 / 192 MiB in all


def log(msg):
    print("[tensor] " + msg, file=sys.stderr, flush=True)


def parse_program_output(text):
    """(time_per_iter_us, checksum) from a program's output; ValueError if either line is missing."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("time_per_iter_us", "checksum"):
            found[parts[0]] = float(parts[1])
    if len(found) != 2:
        raise ValueError("no %s line" % " and no ".join(
            k for k in ("time_per_iter_us", "checksum") if k not in found))
    return found["time_per_iter_us"], found["checksum"]


def parse_iter_us(text):
    """The `iter_us X` lines of a program's output, in order: the microseconds of each timed
    iteration (an empty list when it prints none)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "iter_us":
            out.append(float(parts[1]))
    return out


def iter_summary(iters):
    """`min A, median B, max C` of a run's per-iteration µs, for the log."""
    if not iters:
        return "none"
    return "min %.1f, median %.1f, max %.1f" % (min(iters), statistics.median(iters), max(iters))


def parse_stream_output(text):
    """{threads: GB/s} from stream_triad's `triad threads T elements N best_s S gb_s G` lines."""
    return {int(m.group(1)): float(m.group(2))
            for m in re.finditer(r"^triad threads (\d+) elements \d+ best_s \S+ gb_s (\S+)$", text, re.M)}


def rel_diff(a, b):
    """|a - b| relative to the larger; inf when either is not finite (a nan never agrees)."""
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def fmt(v, f):
    return "" if v is None else f % v


def first_lines(text, n=3):
    return " / ".join(l.strip()[:200] for l in text.strip().splitlines()[:n])


def run_program(cmd, timeout, iterations=None):
    """(status, time_per_iter_us, checksum, detail, iter_us); status ok | failed | timeout; iter_us:
    the per-iteration µs of the `iter_us` lines (empty unless ok). With `iterations` (N), a run
    whose `iter_us` lines are not N fails."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, None, "timed out after %gs" % timeout, []
    except OSError as e:
        return "failed", None, None, str(e), []
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        return "failed", None, None, "exit %d: %s" % (p.returncode, first_lines(err or out)), []
    try:
        us, chk = parse_program_output(out)
    except ValueError as e:
        return "failed", None, None, "%s in output: %s" % (e, first_lines(out + err)), []
    iters = parse_iter_us(out)
    if iterations is not None and len(iters) != iterations:
        return "failed", None, None, "%d iter_us lines, expected %d (N)" % (len(iters), iterations), []
    return "ok", us, chk, "", iters


def measure_stream(elements, timeout):
    """Compiles and runs stream_triad.c: (dict threads -> GB/s, note); ({}, reason) when it cannot."""
    cc = shutil.which("cc")
    if not cc:
        return {}, "no C compiler (cc)"
    with tempfile.TemporaryDirectory(prefix="tessera-stream-") as d:
        exe = os.path.join(d, "stream_triad")
        cmd = [cc, "-O3", "-march=native", "-fopenmp", "-o", exe, os.path.join(HERE, "stream_triad.c")]
        log("compiling " + shlex.join(cmd))
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return {}, "cc failed: " + first_lines(p.stdout.decode("utf-8", "replace"))
        log("running stream_triad %d 10" % elements)
        try:
            p = subprocess.run([exe, str(elements), "10"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return {}, "stream_triad timed out after %gs" % timeout
        text = p.stdout.decode("utf-8", "replace")
        gbs = parse_stream_output(text) if p.returncode == 0 else {}
        return gbs, ("" if gbs else "stream_triad failed: " + first_lines(text))


# Run by --python: the versions of the modules the Python peers need, or why they do not import.
PROBE = """
import json, sys
out = {"python": sys.version.split()[0]}
for m in sys.argv[1:]:
    try:
        mod = __import__(m)
        out[m] = mod.__version__
        if m == "torch":
            out["torch_threads"] = mod.get_num_threads()
        if m == "numexpr":
            out["numexpr_threads"] = mod.nthreads
        if m == "numba":
            out["numba_threads"] = mod.config.NUMBA_NUM_THREADS
    except Exception as e:
        out[m + "_error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
"""


def probe_python(python, modules):
    try:
        p = subprocess.run([python, "-c", PROBE] + sorted(modules), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        return json.loads(p.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        return {"error": "%s does not run: %s" % (python, e)}


def llc_size():
    """The last-level cache's size as sysfs gives it (e.g. `32768K`), or None."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    caches = []
    try:
        for d in sorted(os.listdir(base)):
            if d.startswith("index"):
                with open(os.path.join(base, d, "level")) as fl, open(os.path.join(base, d, "size")) as fs:
                    caches.append((int(fl.read()), fs.read().strip()))
    except (OSError, ValueError):
        return None
    return max(caches)[1] if caches else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"), help="tessera-vm binary")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the Python that runs the NumPy, torch, numexpr and Numba twins "
                         "(Debian's has numpy, scipy, torch, numexpr, numba)")
    ap.add_argument("--runs", type=int, default=3, help="runs per program and peer (median)")
    ap.add_argument("--programs", help="comma-separated subset of: " + ",".join(PROGRAMS))
    ap.add_argument("--peers", help="comma-separated subset of: " + ",".join(PEER))
    ap.add_argument("--size", choices=["small", "default"], default="default",
                    help="small: a few iterations per program (a quick check); "
                         "default: ~0.3-2 s per run under NumPy")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance of the checksum comparison")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"))
    results_index.dated_arguments(ap, "tensor")
    ap.add_argument("--tessera-args", default="",
                    help="extra tessera-vm run options for every tessera peer, e.g. '--jit-param tier=1'")
    ap.add_argument("--stream-elements", type=int,
                    help="doubles per STREAM array (default %d, %d at --size small; 0: skip STREAM)"
                    % (STREAM_ELEMENTS["default"], STREAM_ELEMENTS["small"]))
    a = ap.parse_args()

    programs = a.programs.split(",") if a.programs else list(PROGRAMS)
    peers = a.peers.split(",") if a.peers else list(PEER)
    for p in programs:
        if p not in PROGRAMS:
            ap.error("unknown program %s" % p)
    for p in peers:
        if p not in PEER:
            ap.error("unknown peer %s" % p)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    vm = os.path.abspath(a.vm)
    extra = shlex.split(a.tessera_args)

    # Which peers can run, and why not.
    unavailable = {}   # peer -> reason
    modules = {m for p in peers for m in PEER[p].needs}
    info = probe_python(a.python, modules) if modules else {}
    for p in peers:
        peer = PEER[p]
        if peer.how == "tsb" and not os.path.exists(vm):
            unavailable[p] = "tessera-vm not found at %s" % vm
        elif peer.needs and "error" in info:
            unavailable[p] = info["error"]
        elif peer.needs:
            errors = [info[m + "_error"] for m in peer.needs if m + "_error" in info]
            if errors:
                unavailable[p] = "with %s: %s" % (a.python, "; ".join(errors))
    for p, why in unavailable.items():
        log("!!! peer %s unavailable: %s" % (p, why))

    def command(prog, p):
        peer, args = PEER[p], [str(x) for x in PROGRAMS[prog].args[a.size]]
        if peer.how == "tsb":
            return [vm, "run", os.path.join(BENCH, prog + ".tsb")] + peer.arg + extra + ["--"] + args
        return [a.python, os.path.join(BENCH, prog + peer.arg + ".py")] + args

    elements = a.stream_elements if a.stream_elements is not None else STREAM_ELEMENTS[a.size]
    stream, stream_note = measure_stream(elements, a.timeout) if elements > 0 else ({}, "--stream-elements 0")
    if stream:
        log("STREAM triad: " + ", ".join("%d thread(s) %.1f GB/s" % kv for kv in sorted(stream.items())))
    else:
        log("!!! STREAM triad: " + stream_note)
    stream_all = stream[max(stream)] if stream else None

    # Runs: interleaved (run 1 of every peer, then run 2, ...) so that a slow spell of a shared
    # machine does not land on one peer only.
    runs = {}   # (prog, peer) -> list of (status, us, checksum, detail, iter_us)
    for prog in programs:
        for r in range(a.runs):
            for p in peers:
                if p in unavailable or (runs.get((prog, p)) and runs[(prog, p)][-1][0] != "ok"):
                    continue   # a peer that failed once is not run again
                cmd = command(prog, p)
                log("%-18s %-15s run %d/%d: %s" % (prog, p, r + 1, a.runs, shlex.join(cmd)))
                res = run_program(cmd, a.timeout, PROGRAMS[prog].args[a.size][0])
                log("    " + ("%.1f us/iter (iter_us: %s), checksum %r" % (res[1], iter_summary(res[4]), res[2])
                              if res[0] == "ok" else "!!! %s: %s" % (res[0].upper(), res[3])))
                runs.setdefault((prog, p), []).append(res)

    # Per program and peer: status, median µs, checksum, the reference's checksum and the difference.
    results = {}
    refs = {}   # prog -> the peer whose checksum the others are compared with
    mismatches = failures = 0
    for prog in programs:
        for p in peers:
            rs = runs.get((prog, p))
            if p in unavailable:
                results[(prog, p)] = {"status": "n/a", "detail": unavailable[p]}
            elif rs[-1][0] != "ok":
                results[(prog, p)] = {"status": rs[-1][0], "detail": rs[-1][3]}
                failures += 1
            else:
                chks = [x[2] for x in rs]
                results[(prog, p)] = {"status": "ok", "us": statistics.median(x[1] for x in rs),
                                      "checksum": chks[0], "detail": "",
                                      "iter_us": [x[4] for x in rs]}  # per run, per iteration
                if max(rel_diff(c, chks[0]) for c in chks) > a.rtol:
                    results[(prog, p)].update(status="mismatch",
                                              detail="checksum changed between runs: %r" % chks)
        ok = [p for p in REFERENCE_ORDER if p in peers and results[(prog, p)]["status"] == "ok"]
        ref = refs[prog] = ok[0] if ok else None
        for p in peers:
            r = results[(prog, p)]
            if ref and "checksum" in r:
                r["diff"] = rel_diff(r["checksum"], results[(prog, ref)]["checksum"])
                if r["diff"] > a.rtol and r["status"] == "ok":
                    r["status"] = "mismatch"
                    r["detail"] = "checksum %r, %s's %r (relative difference %.2g)" % (
                        r["checksum"], ref, results[(prog, ref)]["checksum"], r["diff"])
            if r["status"] == "mismatch":
                mismatches += 1
                log("!!! CHECKSUM MISMATCH %s %s: %s" % (prog, p, r["detail"]))

    def us(prog, p):
        r = results.get((prog, p))
        return r["us"] if r and r["status"] == "ok" else None

    def ratio(prog, num, den):
        x, y = us(prog, num), us(prog, den)
        return x / y if x and y else None

    def geomean(xs):
        xs = [x for x in xs if x]
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None

    def throughput(prog, p):
        """(GB/s, % of the all-threads STREAM triad) for memory-bound programs, (GFLOP/s, None) for
        compute-bound ones, (None, None) otherwise."""
        t, pr = us(prog, p), PROGRAMS[prog]
        if t is None or pr.bound == "overhead":
            return None, None
        if pr.bound == "memory":
            gbs = pr.bytes / (t * 1e-6) / 1e9
            return gbs, (100.0 * gbs / stream_all if stream_all else None)
        return pr.flops / (t * 1e-6) / 1e9, None

    # Speed-up columns: (header, slower peer, faster peer): the first's time over the second's.
    speedups = [("tessera vs numpy (numpy / tessera)", "numpy", "tessera"),
                ("tessera vs torch (torch / tessera)", "torch", "tessera"),
                ("JIT speed-up (tessera-interp / tessera)", "tessera-interp", "tessera"),
                ("K3 vs K2 (tessera-k2 / tessera)", "tessera-k2", "tessera"),
                ("tessera vs numexpr (numexpr / tessera)", "numexpr", "tessera"),
                ("tessera vs numba (numba / tessera)", "numba", "tessera")]
    speedups = [s for s in speedups if s[1] in peers and s[2] in peers]

    def cell(prog, p):
        r = results[(prog, p)]
        if r["status"] == "ok":
            return "%.1f" % r["us"]
        if r["status"] == "mismatch":
            return ("%.1f " % r["us"] if "us" in r else "") + "MISMATCH"
        return r["status"].upper() if r["status"] != "n/a" else "n/a"

    today = datetime.date.today().isoformat()
    commit, dirty = source_commit(vm)
    head = git_out(REPO, "rev-parse", "--short=12", "HEAD")
    lines = ["# Tessera VM tensor benchmarks against NumPy, PyTorch (eager), numexpr and Numba, %s" % today, "",
             "- machine: %s, %d CPUs (nproc), last-level cache %s, %s" % (
                 cpu_model(), os.cpu_count() or 0, llc_size() or "unknown", platform.platform()),
             "- size: %s; runs per cell: %d (median of the programs' own time per iteration)"
             % (a.size, a.runs),
             "- command: `%s`" % shlex.join([sys.executable] + sys.argv)]
    if commit:
        lines.append("- tessera-vm built from commit %s (the newest that changed its sources)%s; programs "
                     "at %s" % (commit[:12], " plus uncommitted changes" if dirty else "", head or "?"))
    lines.append("- versions: tessera-vm %s; %s Python %s, numpy %s, scipy %s, torch %s, numexpr %s, numba %s "
                 "(threads: torch %s, numexpr %s, numba %s%s)" % (
        (version_of([vm, "--version"]) or "not found").replace("tessera-vm ", ""), a.python,
        info.get("python", "?"), info.get("numpy", "n/a"), info.get("scipy", "n/a"), info.get("torch", "n/a"),
        info.get("numexpr", "n/a"), info.get("numba", "n/a"),
        info.get("torch_threads", "?"), info.get("numexpr_threads", "?"), info.get("numba_threads", "?"),
        ", OMP_NUM_THREADS=" + os.environ["OMP_NUM_THREADS"] if "OMP_NUM_THREADS" in os.environ else ""))
    if extra:
        lines.append("- tessera peers run with `%s`" % shlex.join(extra))
    if stream:
        lines.append("- STREAM triad (3 arrays of %d doubles, best of 10, 3 x 8 bytes per element): "
                     "%s GB/s on 1 thread, %.1f GB/s on all %d threads" % (
                         elements, "%.1f" % stream[1] if 1 in stream else "?", stream_all, max(stream)))
    else:
        lines.append("- STREAM triad: not measured (%s)" % stream_note)
    for p in peers:
        if p in unavailable:
            lines.append("- %s: n/a, %s" % (p, unavailable[p]))

    lines += ["", "## Time per iteration (µs)", ""]
    header = ["program", "N, W"] + peers + [s[0] for s in speedups]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for prog in programs:
        row = [prog, "%d, %d" % tuple(PROGRAMS[prog].args[a.size])] + [cell(prog, p) for p in peers]
        for _, num, den in speedups:
            x = ratio(prog, num, den)
            row.append("%.2fx" % x if x else "—")
        lines.append("| " + " | ".join(row) + " |")
    gm = ["geomean", ""] + [""] * len(peers)
    for _, num, den in speedups:
        rs = [ratio(prog, num, den) for prog in programs]
        g = geomean(rs)
        gm.append("%.2fx (%d programs)" % (g, len([x for x in rs if x])) if g else "—")
    lines.append("| " + " | ".join(gm) + " |")
    lines += ["", "Cells: median over the runs of the program's own `time_per_iter_us` (N timed "
              "iterations after W warm-up ones, timed inside the program, so start-up and warm-up are "
              "not in it). `tessera` = `tessera-vm run` (trace JIT, default tier), `tessera-interp` = "
              "`--jit=off`, `tessera-k2` = `--jit-param specialize=0` (fused kernels stay K2: no "
              "specialized, tuned K3 kernels), `numpy` / `torch` / `numexpr` / `numba` = the twins `NAME_numpy.py` / "
              "`NAME_torch.py` / `NAME_numexpr.py` / `NAME_numba.py` under %s (Numba compiles in the warm-up). "
              "Speed-ups are the peer's time over tessera's (above 1: tessera is faster); geomean over the "
              "programs where both ran and agreed. MISMATCH: checksum differs from the reference's by more "
              "than %g (relative); FAILED / TIMEOUT: see below; n/a: the peer cannot run here."
              % (a.python, a.rtol)]

    lines += ["", "## Throughput", ""]
    header = ["program", "bound", "bytes / iter", "FLOPs / iter"] + peers
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for prog in programs:
        pr = PROGRAMS[prog]
        row = [prog, pr.bound, "%.2f MB" % (pr.bytes / 1e6) if pr.bytes else "—",
               "%.1f M" % (pr.flops / 1e6) if pr.flops else "—"]
        for p in peers:
            x, pct = throughput(prog, p)
            if x is None:
                row.append("—")
            elif pr.bound == "memory":
                row.append("%.1f GB/s" % x + (" (%.0f%%)" % pct if pct is not None else ""))
            else:
                row.append("%.1f GFLOP/s" % x)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "bytes / iter: the fewest bytes an iteration must move (f32 inputs read once, the output "
              "written once; temporaries not counted), so GB/s is a lower bound of the traffic. Memory-bound "
              "programs: GB/s and, in brackets, its share of the all-threads STREAM triad; a working set "
              "that fits in the last-level cache can exceed 100%. Compute-bound: GFLOP/s of the matmuls "
              "(causal attention: the S(S+1)/2 kept query-key pairs only). `overhead`: tiny tensors, time "
              "per iteration only."]

    lines += ["", "## Checksums", ""]
    header = ["program", "reference"] + peers
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for prog in programs:
        ref = refs[prog]
        row = [prog, "%s %r" % (ref, results[(prog, ref)]["checksum"]) if ref else "—"]
        for p in peers:
            r = results[(prog, p)]
            flag = " MISMATCH" if r["status"] == "mismatch" else ""
            row.append("%.1e%s" % (r["diff"], flag) if "diff" in r else "—")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Relative difference of each peer's checksum from the reference's (NumPy's; the "
              "interpreter's if NumPy did not run); tolerance %g." % a.rtol]
    problems = [(prog, p, results[(prog, p)]) for prog in programs for p in peers
                if results[(prog, p)]["status"] in ("failed", "timeout", "mismatch")]
    if problems:
        lines += ["", "## Failures and mismatches", ""]
        lines += ["- %s, %s: %s: %s" % (prog, p, r["status"].upper(), r["detail"]) for prog, p, r in problems]
    report = "\n".join(lines) + "\n"

    dated = results_index.dated_run(a.dated, a.tag)
    rows = [["program", "peer", "status", "runs", "median_us_per_iter", "checksum", "reference",
             "checksum_rel_diff", "gb_per_s", "percent_of_stream", "gflop_per_s", "detail"]]
    for prog in programs:
        for p in peers:
            r = results[(prog, p)]
            x, pct = throughput(prog, p)
            mem = PROGRAMS[prog].bound == "memory"
            rows.append([prog, p, r["status"], len(runs.get((prog, p), [])), fmt(r.get("us"), "%.3f"),
                         fmt(r.get("checksum"), "%r"), refs[prog] or "", fmt(r.get("diff"), "%.3g"),
                         fmt(x if mem else None, "%.3f"), fmt(pct, "%.1f"),
                         fmt(None if mem else x, "%.3f"), r["detail"]])
    written = results_index.save(a.out_dir, "tensor", "md", report, dated)
    written += results_index.save(a.out_dir, "tensor", "csv", results_index.csv_text(rows), dated)
    log("wrote " + ", ".join(os.path.basename(x) for x in written) + " in " + a.out_dir)
    results_index.refresh(a.out_dir)
    print(report)
    if mismatches or failures:
        log("%d checksum mismatch(es), %d failed or timed-out program/peer pair(s)" % (mismatches, failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
