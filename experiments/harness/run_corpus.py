#!/usr/bin/env python3
"""The corpus of real programs (tests/conformance/corpus/, twins in experiments/bench/corpus/)
under tessera-vm (JIT on, and --jit=off) beside its Lua and Python twins: lua5.4, luajit,
python3 and pypy3 (with PYPY_GC_NURSERY=4M, as the scalar suite's harness runs it).

Each program runs --runs times per runtime at its default size (no arguments; --size small: the
size its `# @args:` line gives the conformance suite); a cell is the median wall time of the
whole process. Every runtime's output must equal tessera-vm's (the JIT's), line for line, or the
cell says MISMATCH. Below the table, issue 17's targets are computed from it: the geometric mean
of tessera / luajit over the programs with twins and its largest ratio, tessera / pypy3, and the
programs the JIT runs slower than the interpreter. Writes experiments/results/corpus-latest.md
(and, with --dated, corpus-DATE.md).

  python3 experiments/harness/run_corpus.py [--vm build/tessera-vm] [--runs 3] [--dated]
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
from run_bench import cpu_model, measure, version_of  # noqa: E402
from run_kernel_tiers import REPO, built_from, write_report  # noqa: E402

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
    secs, cells, mismatches = {}, {}, 0
    for prog in programs:
        args = small_args(os.path.join(CORPUS, prog + ".tsb")) if a.size == "small" else []
        ref = None
        for peer in peers:
            cmd = command(peer, vm, prog, args, shlex.split(a.vm_args))
            if cmd is None:
                cells[(prog, peer)] = "—"
                continue
            print(f"{prog:18} {peer:15}", end=" ", file=sys.stderr, flush=True)
            r = measure(cmd, a.runs, a.timeout, env_pypy if peer == "pypy3" else None)
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
             f"{' --vm-args ' + shlex.quote(a.vm_args) if a.vm_args else ''}`",
             f"- tessera-vm built from {built_from()}",
             f"- size: {a.size}; cells: median wall seconds of the whole process over {a.runs} run(s)",
             "- versions: " + "; ".join(f"{p}: {version_of([p, '-v'] if p.startswith('lua') else [p, '--version'])}"
                                         for p in peers if not p.startswith("tessera") and shutil.which(p)),
             "", "| program | " + " | ".join(peers + [c[0] for c in ratio_cols]) + " |",
             "|" + "---|" * (1 + len(peers) + len(ratio_cols))]
    for prog in programs:
        row = [prog] + [cells.get((prog, p), "—") for p in peers]
        for _, num, den in ratio_cols:
            r = ratio(prog, num, den)
            row.append(f"{r:.2f}x" if r else "—")
        lines.append("| " + " | ".join(row) + " |")
    gm = ["geomean"] + ["—"] * len(peers)
    for _, num, den in ratio_cols:
        g = geomean([r for r in (ratio(p, num, den) for p in programs) if r])
        gm.append(f"{g:.2f}x" if g else "—")
    lines.append("| " + " | ".join(gm) + " |")
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
    write_report("\n".join(lines) + "\n", a.out, f"corpus-{today}.md" if a.dated else None)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
