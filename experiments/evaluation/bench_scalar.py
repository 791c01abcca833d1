"""The scalar suite: the corpus of real programs (tests/conformance/corpus/, twins in
experiments/bench/corpus/) and, where the shared folder has them, the benchmark programs
(experiments/bench/tsb/, twins in ../shared/bench/), under Tessera's tiers and under Lua 5.4,
LuaJIT, CPython and PyPy. A cell is one program under one runtime; its samples are wall seconds of
the whole process (process_runs.py). Every runtime's output must equal Tessera's (the JIT's)."""
import os
import shutil
import sys

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")
sys.path.insert(0, HARNESS)
import run_corpus  # noqa: E402

import process_runs  # noqa: E402

NAME = "scalar"
TITLE = "The scalar suite against Lua, LuaJIT, CPython and PyPy"
# Runtimes: (name, how): how = ("vm", tessera-vm options) or ("twin", command, twin kind).
RUNTIMES = [
    ("tessera", ("vm", [])),
    ("tessera-t1", ("vm", ["--jit-param", "tier=1"])),
    ("tessera-t2", ("vm", ["--jit-param", "tier=2"])),
    ("tessera-interp", ("vm", ["--jit=off"])),
    ("luajit", ("twin", ["luajit"], "lua")),
    ("lua5.4", ("twin", ["lua5.4"], "lua")),
    ("pypy3", ("twin", ["pypy3"], "py")),
    ("python3", ("twin", ["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"], "py")),
]
# The benchmark programs with twins in the shared folder, and their default arguments there.
SUITE = ["fib", "loop_sum", "mandelbrot", "nbody", "sieve", "spectral_norm", "matmul_scalar", "fannkuch"]


def programs(ctx):
    """(name, tsb path, {kind: twin path}, args) of every program this machine can run."""
    out = []
    corpus = run_corpus.CORPUS
    for f in sorted(os.listdir(corpus)):
        if not f.endswith(".tsb"):
            continue
        p = f[:-4]
        twins = {k: os.path.join(run_corpus.TWINS, k, f"{p}.{ext}") for k, ext in (("lua", "lua"), ("py", "py"))}
        out.append((p, os.path.join(corpus, f), {k: v for k, v in twins.items() if os.path.exists(v)}, []))
    shared = ctx.shared_bench
    if ctx.profile.scalar_suite and shared and os.path.isdir(shared):
        for p in SUITE:
            tsb = os.path.join(ctx.repo, "experiments", "bench", "tsb", p + ".tsb")
            twins = {"lua": os.path.join(shared, "lua", p + ".lua"), "py": os.path.join(shared, "py", p + ".py")}
            out.append(("suite/" + p, tsb, {k: v for k, v in twins.items() if os.path.exists(v)}, []))
    if ctx.programs:
        out = [x for x in out if x[0] in ctx.programs or x[0].split("/")[-1] in ctx.programs]
    return out


def command(ctx, runtime, tsb, twins, args):
    how = dict(RUNTIMES)[runtime]
    if how[0] == "vm":
        return [ctx.vm, "run", tsb, *how[1]] + (["--"] + args if args else [])
    exe, kind = how[1], how[2]
    if kind not in twins or not shutil.which(exe[0]):
        return None
    return exe + [twins[kind]] + args


def run(ctx, writer):
    p = ctx.profile
    env_pypy = dict(os.environ, PYPY_GC_NURSERY="4M")
    runtimes = [r for r, _ in RUNTIMES if r in ctx.runtimes(NAME, [r for r, _ in RUNTIMES])]
    for prog, tsb, twins, args in programs(ctx):
        ref = None
        for rt in runtimes:
            cmd = command(ctx, rt, tsb, twins, args)
            cell_id = f"{prog}/{rt}"
            if cmd is None:
                writer.cell(cell_id, [], status="missing", detail="no twin or runtime", program=prog, runtime=rt)
                continue
            ctx.progress(f"{prog:24} {rt:15}")
            r = process_runs.measure(cmd, p.process_warmup, p.process_min_runs, p.process_max_runs, p.process_budget_s,
                                     p.timeout_s, env=env_pypy if rt == "pypy3" else None)
            status = r.status
            if status == "ok" and rt == "tessera":
                ref = r.output
            elif status == "ok" and ref is not None and r.output != ref:
                status = "mismatch"
            writer.cell(cell_id, r.samples, status=status, detail=r.detail or ("" if status == "ok" else "output differs from tessera-vm's"),
                        program=prog, runtime=rt, max_rss_bytes=r.max_rss)
            ctx.progress_done(r)
