#!/usr/bin/env python3
"""The corpus of real programs (tests/conformance/corpus/, twins in experiments/bench/corpus/)
under tessera-vm (JIT on, and --jit=off) beside its Lua and Python twins: lua5.4, luajit,
python3 and pypy3 (with PYPY_GC_NURSERY=4M, as the scalar suite's harness runs it).

Each program runs --runs times per runtime at its default size (no arguments; --size small: the
size its `# @args:` line gives the conformance suite); a cell is the median wall time of the
whole process. Every runtime's output must equal tessera-vm's (the JIT's), line for line, or the
cell says MISMATCH. Below the table, issue 17's targets are computed from it: the geometric mean
of tessera / luajit over the programs with twins and its largest ratio, tessera / pypy3, and the
programs the JIT runs slower than the interpreter. With --warmup, one more run per program of
`tessera-vm run --stats` (the tessera column's options) gives a warm-up breakdown of where the
time of the run went: its wall time, the traces recorded and aborted, the milliseconds spent
recording, optimizing and compiling them (T1 on the program's thread, T2 in the background), the
share of the wall time the JIT took on the program's thread, and the CPU time in T1 code, T2 code
and elsewhere. Writes experiments/results/corpus-latest.md (and, with --dated, corpus-DATE.md).

  python3 experiments/harness/run_corpus.py [--vm build/tessera-vm] [--runs 3] [--dated] [--warmup]
"""
import argparse
import datetime
import math
import os
import re
import shlex
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model, measure_interleaved, version_of  # noqa: E402
from run_kernel_tiers import REPO, built_from, write_report  # noqa: E402
from stats_report import main_thread_jit_ms, parse_stats, parse_tiers, run_stats  # noqa: E402

CORPUS = os.path.join(REPO, "tests", "conformance", "corpus")
TWINS = os.path.join(REPO, "experiments", "bench", "corpus")
PEERS = ["tessera", "tessera-interp", "lua5.4", "luajit", "python3", "pypy3"]


def small_args(path):
    with open(path) as f:
        for line in f.read(4096).splitlines():
            m = re.match(r"\s*#\s*@args:\s*(.*)$", line)
            if m:
                return m.group(1).split()
    return []


def program_args(prog, size):
    """A program's arguments at --size: none for its default size, its `# @args:` line for small."""
    return small_args(os.path.join(CORPUS, prog + ".tsb")) if size == "small" else []


def command(peer, vm, prog, args, vm_args=()):
    """The command line of `prog` under `peer`, or None where the peer or the twin is missing.
    `vm_args` go to both tessera-vm runs (after the script, before its arguments)."""
    tsb = os.path.join(CORPUS, prog + ".tsb")
    lua = os.path.join(TWINS, "lua", prog + ".lua")
    py = os.path.join(TWINS, "py", prog + ".py")
    table = {
        "tessera": ([vm, "run", tsb], vm),
        "tessera-interp": ([vm, "run", tsb, "--jit=off"], vm),
        "lua5.4": (["lua5.4", lua], lua),
        "luajit": (["luajit", lua], lua),
        "python3": (["python3", py], py),
        "pypy3": (["pypy3", py], py),
    }
    cmd, needs = table[peer]
    if not os.path.exists(needs) or not (os.path.exists(cmd[0]) or shutil.which(cmd[0])):
        return None
    if not peer.startswith("tessera"):
        return cmd + args
    return cmd + list(vm_args) + (["--"] + args if args else [])


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def md_row(cells):
    return "| " + " | ".join(cells) + " |"


# The warm-up table's columns: (header, field of warmup_record() or warmup_fields(), cell format).
WARMUP_COLUMNS = [
    ("wall ms", "vm_wall_ms", "%.1f"), ("process ms", "process_ms", "%.1f"), ("interp ms", "interp_ms", "%.1f"),
    ("traces recorded", "traces_recorded", "%d"), ("of which side traces", "side_traces", "%d"),
    ("aborted", "traces_aborted", "%d"), ("recording ms", "recording_ms", "%.2f"),
    ("optimizer ms", "optimizer_ms", "%.2f"), ("T1 compile ms", "t1_compile_ms", "%.2f"),
    ("T2 compile ms (background)", "t2_compile_ms", "%.2f"), ("JIT main thread % of wall", "jit_share", "%.1f%%"),
    ("samples", "samples", "%d"), ("T1 code ms", "t1_code_ms", "%.0f"), ("T2 code ms", "t2_code_ms", "%.0f"),
    ("elsewhere ms", "elsewhere_ms", "%.0f"),
]
WARMUP_TEXT = (
    "One more run per program of `tessera-vm run PROGRAM --stats [--vm-args] -- ARGS`, not counted in the table "
    "above; the columns are read from its `--stats` report (stderr). wall ms: its `wall time:` line (the VM's "
    "clock from the script's compile to the end of its run); process ms: the whole process of that run, start-up "
    "and exit included; interp ms: the tessera-interp cell above (median wall of the whole process; `-` where "
    "that peer did not run). traces recorded, of which side traces, aborted: the `traces:` line. recording ms, "
    "optimizer ms: the `time:` line (the optimizer's share of its compiling time); T1 / T2 compile ms: the "
    "`T1 (asmjit)` / `T2 (llvm)` lines. T1 compiles on the program's thread; T2 compiles on a background "
    "thread (async=1, the default), and its line counts the compiles whose code the run took in before it "
    "ended; `*`: a T2 compile was still running when the script ended, not waited for and not counted. "
    "JIT main thread % of wall = (recording + compiling - T2 compile) / wall: the `time:` line's compiling "
    "time counts the optimizer, T1 and T2, so taking T2 away leaves the JIT's work on the program's thread "
    "(recording + optimizer + T1 compile); with `--jit-param async=0` or `tier=2` T2 compiles on that thread "
    "too and the share is too low. samples, T1 / T2 code ms, elsewhere ms: the `time in code` line, the "
    "process's CPU time (start-up and the background compiler included, under elsewhere: the interpreter, "
    "recorder, compilers and runtime) split by where that many profiling samples fell: with a few samples the "
    "split is coarse. total: sums over the programs that have the value; the share column: the geometric mean "
    "of the programs' shares. `-`: the line is missing from the report (e.g. no trace compiled, or no T2 code).")


def warmup_run(vm, prog, args, vm_args, timeout, ref):
    """One `tessera-vm run --stats` of `prog`: warmup_record() of it, its status `mismatch` where it
    printed other than `ref` (the tessera run's output)."""
    status, secs, out, err, detail = run_stats(command("tessera", vm, prog, args, ["--stats"] + list(vm_args)),
                                               timeout)
    if status == "ok" and ref is not None and out != ref:
        status, detail = "mismatch", "printed other than the tessera run"
    return warmup_record(err, status, secs, detail)


def warmup_record(err, status="ok", secs=None, detail=""):
    """What the warm-up table reads of a --stats report `err`: parse_stats() with the run's status,
    detail and process_ms (from `secs`), the T1 and T2 compile ms, t2_unfinished and jit_main_ms
    (main_thread_jit_ms)."""
    w, tiers = parse_stats(err), parse_tiers(err)
    w.update(status=status, detail=detail, process_ms=secs * 1000.0 if secs else None,
             t1_compile_ms=tiers["T1"]["total_ms"], t2_compile_ms=tiers["T2"]["total_ms"],
             t2_unfinished=tiers["T2"]["unfinished"], jit_main_ms=main_thread_jit_ms(w, tiers))
    return w


def warmup_log(w):
    if w["status"] != "ok":
        return f"{w['status'].upper()} {w['detail']}"
    wall, jit = cell_text(w["vm_wall_ms"], "%.1f"), cell_text(w["jit_main_ms"], "%.2f")
    return f"wall {wall} ms, JIT on the main thread {jit} ms"


def warmup_fields(w, interp):
    """The derived fields of a warmup_run() row: interp_ms (seconds, a cell's text, or None) and
    jit_share (% of the report's wall time)."""
    wall, jit = w["vm_wall_ms"], w["jit_main_ms"]
    share = 100.0 * jit / wall if wall and jit is not None else None
    return dict(w, interp_ms=interp * 1000.0 if isinstance(interp, float) else interp, jit_share=share)


def cell_text(v, fmt):
    return "-" if v is None else v if isinstance(v, str) else fmt % v


def warmup_cells(prog, w):
    name = prog if w["status"] == "ok" else f"{prog} ({w['status'].upper()})"
    cells = [cell_text(w[key], fmt) for _, key, fmt in WARMUP_COLUMNS]
    if w["t2_unfinished"]:
        cells[[key for _, key, _ in WARMUP_COLUMNS].index("t2_compile_ms")] += " *"
    return [name] + cells


def warmup_total(rows):
    """The total row: sums of each column over the rows that have a number, the geometric mean of
    the shares."""
    cells = ["total (share: geomean)"]
    for _, key, fmt in WARMUP_COLUMNS:
        xs = [w[key] for w in rows if isinstance(w[key], (int, float))]
        cells.append(cell_text(geomean([x for x in xs if x > 0]) if key == "jit_share" else sum(xs) if xs else None,
                               fmt))
    return cells


def warmup_section(programs, warm, interp):
    """The warm-up breakdown's lines: its table (a row per program of `warm`, from warmup_record())
    and its text; `interp` maps a program to its tessera-interp seconds or cell."""
    rows = [warmup_fields(warm[p], interp.get(p)) for p in programs]
    header = ["program"] + [h for h, _, _ in WARMUP_COLUMNS]
    return (["", "## Warm-up breakdown: where the time of a run goes (`--warmup`)", "", md_row(header),
             "|" + "---|" * len(header)]
            + [md_row(warmup_cells(p, w)) for p, w in zip(programs, rows)]
            + [md_row(warmup_total(rows)), "", WARMUP_TEXT])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", default=os.path.join(REPO, "build", "tessera-vm"))
    ap.add_argument("--runs", type=int, default=3, help="runs per program and runtime (median; default 3)")
    ap.add_argument("--size", choices=["small", "default"], default="default")
    ap.add_argument("--programs", help="comma-separated subset of the corpus")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of: " + ",".join(PEERS))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
    ap.add_argument("--out", default=os.path.join(REPO, "experiments", "results", "corpus-latest.md"))
    ap.add_argument("--dated", action="store_true", help="also write corpus-DATE.md beside it")
    ap.add_argument("--vm-args", default="",
                    help="extra options for both tessera-vm columns, e.g. '--jit-param passregs=0' (named in the "
                         "results' command line)")
    ap.add_argument("--warmup", action="store_true",
                    help="after the timed runs, one more run per program of `tessera-vm run --stats` (with "
                         "--vm-args): a table of where its time went (traces, recording, optimizer, T1 and T2 "
                         "compile ms, the JIT's share of the wall time on the program's thread, CPU time in T1 / "
                         "T2 code and elsewhere)")
    a = ap.parse_args()
    vm = os.path.abspath(a.vm)
    if not os.path.exists(vm):
        sys.exit(f"{vm} not found: cmake --build build --target tessera-vm")
    programs = sorted(f[:-4] for f in os.listdir(CORPUS) if f.endswith(".tsb"))
    if a.programs:
        unknown = set(a.programs.split(",")) - set(programs)
        if unknown:
            ap.error("not in the corpus: " + ", ".join(sorted(unknown)))
        programs = a.programs.split(",")
    peers = [p for p in a.peers.split(",") if p]
    if any(p not in PEERS for p in peers):
        ap.error("peers are some of: " + ",".join(PEERS))
    if "tessera" not in peers:
        peers.insert(0, "tessera")  # its output is the reference

    env_pypy = dict(os.environ, PYPY_GC_NURSERY="4M")  # see shared/bench/README.md
    secs, cells, refs, mismatches = {}, {}, {}, 0
    for prog in programs:
        args = program_args(prog, a.size)
        ref = None
        cmds = {}
        for peer in peers:
            cmd = command(peer, vm, prog, args, shlex.split(a.vm_args))
            if cmd is None:
                cells[(prog, peer)] = "—"
                continue
            cmds[peer] = (cmd, env_pypy if peer == "pypy3" else None)
        measured = measure_interleaved(cmds, a.runs, a.timeout)
        for peer in cmds:
            print(f"{prog:18} {peer:15}", end=" ", file=sys.stderr, flush=True)
            r = measured[peer]
            if r.status != "ok":
                cells[(prog, peer)] = r.status.upper()
                print(r.status.upper(), r.detail, file=sys.stderr)
                continue
            t, out = r.seconds, r.output
            if ref is None and peer == "tessera":
                ref = out
            if out != ref:
                mismatches += 1
                cells[(prog, peer)] = f"{t:.3f} MISMATCH"
                print(f"{t:.3f} s MISMATCH", file=sys.stderr)
                continue
            secs[(prog, peer)] = t
            cells[(prog, peer)] = f"{t:.3f}"
            print(f"{t:.3f} s", file=sys.stderr)
        refs[prog] = ref

    warm = {}
    for prog in programs if a.warmup else []:
        print(f"{prog:18} {'--stats':15}", end=" ", file=sys.stderr, flush=True)
        w = warm[prog] = warmup_run(vm, prog, program_args(prog, a.size), shlex.split(a.vm_args), a.timeout,
                                    refs.get(prog))
        mismatches += w["status"] == "mismatch"
        print(warmup_log(w), file=sys.stderr)

    def ratio(prog, num, den):
        n, d = secs.get((prog, num)), secs.get((prog, den))
        return n / d if n and d else None

    ratio_cols = [("JIT speed-up (interp / tessera)", "tessera-interp", "tessera"),
                  ("tessera / luajit", "tessera", "luajit"), ("tessera / pypy3", "tessera", "pypy3")]
    ratio_cols = [c for c in ratio_cols if c[1] in peers and c[2] in peers]
    today = datetime.date.today().isoformat()
    lines = [f"# The corpus of real programs, {today}", "",
             f"- machine: {cpu_model()}, {os.cpu_count()} CPUs",
             f"- command: `python3 experiments/harness/run_corpus.py --runs {a.runs} --size {a.size}"
             f"{' --programs ' + a.programs if a.programs else ''}"
             f"{' --peers ' + ','.join(peers) if peers != PEERS else ''}"
             f"{' --vm-args ' + shlex.quote(a.vm_args) if a.vm_args else ''}{' --warmup' if a.warmup else ''}`",
             f"- tessera-vm built from {built_from()}",
             f"- size: {a.size}; cells: median wall seconds of the whole process over {a.runs} run(s), the "
             "runtimes' runs interleaved (each round runs every runtime once)",
             "- versions: " + "; ".join(f"{p}: {version_of([p, '-v'] if p.startswith('lua') else [p, '--version'])}"
                                         for p in peers if not p.startswith("tessera") and shutil.which(p)),
             "", md_row(["program"] + peers + [c[0] for c in ratio_cols]),
             "|" + "---|" * (1 + len(peers) + len(ratio_cols))]
    for prog in programs:
        row = [prog] + [cells.get((prog, p), "—") for p in peers]
        for _, num, den in ratio_cols:
            r = ratio(prog, num, den)
            row.append(f"{r:.2f}x" if r else "—")
        lines.append(md_row(row))
    gm = ["geomean"] + ["—"] * len(peers)
    for _, num, den in ratio_cols:
        g = geomean([r for r in (ratio(p, num, den) for p in programs) if r])
        gm.append(f"{g:.2f}x" if g else "—")
    lines.append(md_row(gm))
    lines += ["", "Ratios: the JIT speed-up is the interpreter's time over the JIT's (below 1: the JIT run is "
              "slower); the others are tessera's time over the peer's (above 1: tessera is slower). "
              "MISMATCH: the output differs from tessera-vm's; — : no twin, or the runtime is not installed.",
              "", "## Issue 17's targets, from this table", ""]
    lj = [(p, ratio(p, "tessera", "luajit")) for p in programs if ratio(p, "tessera", "luajit")]
    if lj:
        g = geomean([r for _, r in lj])
        worst = max(lj, key=lambda x: x[1])
        over = [p for p, r in lj if r > 3]
        lines.append(f"- geometric mean of tessera / luajit over {len(lj)} programs: {g:.2f}x (target: within 1.5x: "
                     f"{'met' if g <= 1.5 else 'not met'})")
        lines.append(f"- largest tessera / luajit: {worst[1]:.2f}x ({worst[0]}); more than 3x behind: "
                     f"{', '.join(over) if over else 'none'} (target: none)")
    pp = [(p, ratio(p, "tessera", "pypy3")) for p in programs if ratio(p, "tessera", "pypy3")]
    if pp:
        over = [f"{p} ({r:.2f}x)" for p, r in pp if r > 2]
        lines.append(f"- slower than pypy3 by more than 2x: {', '.join(over) if over else 'none'} (target: none)")
    slow = [f"{p} ({r:.2f}x)" for p in programs if (r := ratio(p, "tessera-interp", "tessera")) and r < 1]
    if "tessera-interp" in peers:
        lines.append(f"- slower under the JIT than under --jit=off: {', '.join(slow) if slow else 'none'} "
                     f"({len(slow)} of {len(programs)}; target: none)")
    if mismatches:
        lines.append(f"- {mismatches} cells printed something else than tessera-vm")
    if warm:
        interp = {p: secs.get((p, "tessera-interp"), cells.get((p, "tessera-interp"))) for p in programs}
        lines += warmup_section(programs, warm, interp)
    write_report("\n".join(lines) + "\n", a.out, f"corpus-{today}.md" if a.dated else None)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
