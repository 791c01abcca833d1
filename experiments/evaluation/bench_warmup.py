"""Warm-up and compile latency. The warm-up program (experiments/bench/warmup/warmup.tsb: one
fixed piece of scalar work per iteration, each timed) under the interpreter, T1 only, T2 only and
the default (T1 then T2): its per-iteration times are the warm-up curves. Compile latency per
tier: every corpus program run once with --stats under tier=1 and under tier=2 (async=0, so that
T2 compiles every trace), each trace's compile time read from the report. Tracing overhead: the
share of a T1 run's wall time its thread spends recording traces and compiling them
(--stats' `time: recording X ms, compiling Y ms`), per corpus program."""
import os
import statistics
import sys

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")
sys.path.insert(0, HARNESS)
import run_bench  # noqa: E402
import run_corpus  # noqa: E402
from stats_report import parse_stats, parse_tiers, run_stats  # noqa: E402

NAME = "warmup"
TITLE = "Warm-up curves, compile latency per tier and tracing overhead"
MODES = [("interp", ["--jit=off"]), ("t1", ["--jit-param", "tier=1"]),
         ("t2", ["--jit-param", "tier=2", "--jit-param", "async=0"]), ("auto", [])]


def run(ctx, writer):
    p = ctx.profile
    prog = os.path.join(ctx.repo, "experiments", "bench", "warmup", "warmup.tsb")
    for mode, opts in MODES:
        ctx.progress(f"warm-up curve       {mode:15}")
        status, secs, out, err, detail = run_stats([ctx.vm, "run", prog, *opts, "--stats", "--",
                                                    str(p.warmup_iterations)], p.timeout_s)
        times = [us for _, us in run_bench.parse_iterations(out)[0]] if status == "ok" else []
        c = writer.cell(f"curve/{mode}", times, unit="us", status=status, detail=detail, mode=mode,
                        wall_s=secs, series=True, first_trace_ms=parse_stats(err)["first_trace_ms"])
        ctx.progress_done_cell(c)
    t1, t2, shares = [], [], []
    corpus = sorted(f[:-4] for f in os.listdir(run_corpus.CORPUS) if f.endswith(".tsb"))
    if ctx.programs:
        corpus = [x for x in corpus if x in ctx.programs]
    for prog_name in corpus:
        tsb = os.path.join(run_corpus.CORPUS, prog_name + ".tsb")
        for tier, opts, into in (("1", ["--jit-param", "tier=1"], t1), ("2", ["--jit-param", "tier=2", "--jit-param", "async=0"], t2)):
            ctx.progress(f"{prog_name:24} tier={tier} --stats")
            status, secs, out, err, detail = run_stats([ctx.vm, "run", tsb, *opts, "--stats"], p.timeout_s)
            if status != "ok":
                writer.cell(f"compile/{prog_name}/T{tier}", [], unit="ms", status=status, detail=detail)
                ctx.progress_line(status)
                continue
            ms = parse_tiers(err)["T" + tier]["ms"]
            into.extend(ms)
            st = parse_stats(err)
            if tier == "1" and st["recording_ms"] is not None and st["vm_wall_ms"]:
                shares.append((st["recording_ms"] + (st["compiling_ms"] or 0)) / st["vm_wall_ms"])
            writer.cell(f"compile/{prog_name}/T{tier}", ms, unit="ms", program=prog_name, tier="T" + tier,
                        recording_ms=st["recording_ms"], wall_ms=st["vm_wall_ms"],
                        traces_compiled=st["traces_compiled"])
            ctx.progress_line(f"{len(ms)} traces")
    writer.cell("compile/all/T1", t1, unit="ms", tier="T1", pooled=True)
    writer.cell("compile/all/T2", t2, unit="ms", tier="T2", pooled=True)
    writer.cell("tracing/share", shares, unit="fraction", pooled=True)
    writer.doc["derived"]["t1_median_ms"] = statistics.median(t1) if t1 else None
    writer.doc["derived"]["t2_median_ms"] = statistics.median(t2) if t2 else None
