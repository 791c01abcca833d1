#!/usr/bin/env python3
"""All-reduce of tensors the GPU holds: Tessera's all_reduce (NCCL underneath) against plain
ncclAllReduce calls made as nccl-tests makes them, the same sizes on the same GPUs, in one run
(a benchmark, never a test; the issue's "NCCL's figures against nccl-tests-style plain calls").

  python3 experiments/harness/run_nccl_bench.py [--build build] [--np 1] [--sizes 1024,...]
      [--calls 20] [--reps 10] [--warmup 5] [--out FILE] [--dated] [--raw-dir DIR]

  (a) plain: experiments/micro/nccl_allreduce_bench (its header says how it measures): per size,
      REPS repetitions of CALLS ncclAllReduce calls back to back on one stream, then one wait;
  (b) Tessera: experiments/bench/collectives/allreduce_gpu.tsb under
      `mpirun -np N tessera-vm run --device=gpu`: per repetition CALLS all_reduce(x) of a tensor
      the GPU holds, each left in flight, then a one-element read of the last result.
Both f32 sum, out of place, results checked; a call's time is a repetition's over CALLS, the
slowest rank's; per size the median over the repetitions. Algorithm bandwidth = bytes / time; bus
bandwidth = algbw * 2(n-1)/n (0 for one rank, where the table compares algorithm bandwidth).
One GPU per rank: a one-GPU machine runs -np 1, where NCCL's all-reduce is a copy on the device
and the comparison shows what Tessera's call costs over NCCL's.

Tessera's side needs mpirun (a world; without one a script's collectives are local copies and NCCL
is not used): where there is none, only the plain side runs and the table says why.
--emulation runs both on the host emulation of a GPU with the NCCL test double
(--nccl-library, tests/runtime/comm/nccl_double.cpp): the figures mean nothing there; CI runs it
so that the benchmark is known to work before a GPU session spends its time on it.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "evaluation"))
from run_bench import REPO  # noqa: E402
from run_collectives_bench import size_text  # noqa: E402
from run_kernel_tiers import built_from, log, write_report  # noqa: E402

SCRIPT = os.path.join(REPO, "experiments", "bench", "collectives", "allreduce_gpu.tsb")
DEFAULT_SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 16 << 20, 64 << 20, 256 << 20]
# What tessera-vm runs the script with: compiled synchronously, hot after 4 iterations, so that
# the timed loops are traces whose collectives NCCL carries from the first repetition on.
VM_ARGS = ["--device=gpu", "--stats", "--jit-param", "async=0", "--jit-param", "hotloop=4"]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
TAG = re.compile(r"^\[\d+,(\d+)\]<(stdout|stderr)>:\s?(.*)$")


def launch(a, cmd):
    """The command under mpirun -np N (tagged output), or as it is without mpirun."""
    return [a.mpirun, "--oversubscribe", "--tag-output", "-np", str(a.np)] + cmd if a.mpirun else cmd


def run_plain(a, bench, env):
    with tempfile.TemporaryDirectory(prefix="tessera-nccl-") as tmp:
        out = os.path.join(tmp, "plain.json")
        args = ["--sizes", ",".join(map(str, a.sizes)), "--calls", str(a.calls), "--reps", str(a.reps),
                "--warmup", str(a.warmup)]
        cmd = launch(a, [bench] + args + ["--json", out])
        log("plain: " + " ".join(cmd))
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
        if p.returncode != 0 or not os.path.exists(out):
            sys.exit(f"nccl_allreduce_bench failed (exit status {p.returncode}):\n{p.stderr[-3000:]}{p.stdout[-2000:]}")
        with open(out) as f:
            return json.load(f)


def carried_by_nccl(stats_line):
    m = re.search(r" carried (\d+) of them", stats_line)
    return int(m.group(1)) if m else None


def run_tessera(a, vm, bytes_, env):
    """One size: per repetition the slowest rank's time of a call (µs), and what --stats said."""
    cmd = launch(a, [vm, "run", *VM_ARGS, SCRIPT, "--", str(bytes_), str(a.calls), str(a.reps), str(a.warmup)])
    log("tessera: " + " ".join(cmd))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
    if p.returncode != 0:
        sys.exit(f"tessera-vm failed at {bytes_} bytes (exit status {p.returncode}):\n{p.stderr[-3000:]}"
                 f"{p.stdout[-2000:]}")
    per_rank, world = {}, {}
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        m = TAG.match(line)
        rank, text = (int(m.group(1)), m.group(3)) if m else (0, line)
        if text.startswith("call_us "):
            _, rep, us = text.split()
            per_rank.setdefault(rank, {})[int(rep)] = float(us)
        elif "world: rank" in text:
            world[rank] = text.strip()
    if len(per_rank) != a.np or any(len(v) != a.reps for v in per_rank.values()):
        sys.exit(f"tessera-vm at {bytes_} bytes printed {[len(v) for v in per_rank.values()]} call_us lines per "
                 f"rank, expected {a.reps} from each of {a.np} ranks:\n{p.stdout[-2000:]}")
    times = [max(per_rank[r][rep] for r in per_rank) for rep in range(a.reps)]
    carried = carried_by_nccl(world.get(0, ""))
    need = (a.warmup + a.reps) * a.calls
    if carried is None or carried < need:
        sys.exit(f"tessera-vm at {bytes_} bytes: NCCL carried {carried} collectives, at least {need} expected "
                 f"(--stats: {world.get(0)!r}); the tensor was not on the GPU or NCCL was not used")
    return times, world.get(0, "")


def figures(times_us, bytes_, ranks):
    med = statistics.median(times_us)
    algbw = bytes_ / (med * 1e-6) / 1e9
    return {"median_us": med, "min_us": min(times_us), "max_us": max(times_us), "algbw_gb_s": algbw,
            "busbw_gb_s": algbw * 2.0 * (ranks - 1) / ranks, "per_call_us": list(times_us)}


def report(rows, meta):
    bw = "busbw" if meta["np"] > 1 else "algbw"
    lines = [
        f"# All-reduce of tensors on the GPU: Tessera against plain NCCL calls, {meta['date']}",
        "",
        f"- device: {meta['device']}; {meta['nccl']}; {meta['np']} rank(s), one GPU each"
        + ("; **the host emulation with the NCCL test double: these figures mean nothing**" if meta["emulation"] else ""),
        f"- built from {meta['commit']}; command: `{meta['command']}`",
        "- (a) plain: `experiments/micro/nccl_allreduce_bench`, nccl-tests' way: per repetition "
        f"{meta['calls']} `ncclAllReduce` calls back to back on one stream, then one wait; "
        "(b) Tessera: `experiments/bench/collectives/allreduce_gpu.tsb` under mpirun with `--device=gpu`: "
        f"per repetition {meta['calls']} `all_reduce(x)` of a tensor the GPU holds, each left in flight, then a "
        "one-element read of the last result (each call's description exchange over MPI included)",
        f"- f32 sum, out of place; {meta['warmup']} warm-up repetitions (results checked), then {meta['reps']}; "
        "a call's time is a repetition's over its calls, the slowest rank's; medians; "
        + ("bus bandwidth = algbw * 2(n-1)/n" if meta["np"] > 1 else
           "one rank: NCCL's all-reduce is a copy on the device, so the table gives algorithm bandwidth "
           "(bytes / time); bus bandwidth is 0 by definition"),
        "",
    ]
    if meta.get("tessera_skipped"):
        lines += [f"Tessera's side was not run: {meta['tessera_skipped']}.", ""]
    lines += [f"| size | plain µs | Tessera µs | plain {bw} GB/s | Tessera {bw} GB/s | Tessera / plain |",
              "|---:|---:|---:|---:|---:|---:|"]
    key = bw + "_gb_s"
    for r in rows:
        t = r.get("tessera")
        cells = [size_text(r["bytes"]), f"{r['plain']['median_us']:.1f}",
                 f"{t['median_us']:.1f}" if t else "—", f"{r['plain'][key]:.2f}",
                 f"{t[key]:.2f}" if t else "—", f"{r['plain']['median_us'] / t['median_us']:.2f}" if t else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Tessera / plain is the plain call's time over Tessera's (above 1: Tessera is faster)."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build folder (default build)")
    ap.add_argument("--vm", help="tessera-vm (default BUILD/tessera-vm)")
    ap.add_argument("--bench", help="nccl_allreduce_bench (default BUILD/experiments/micro/nccl_allreduce_bench)")
    ap.add_argument("--np", type=int, default=1, help="ranks, one GPU each (default 1)")
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                    help="bytes, comma-separated, multiples of 4 (default 1 KB to 256 MB)")
    ap.add_argument("--calls", type=int, default=20, help="calls per repetition (default 20)")
    ap.add_argument("--reps", type=int, default=10, help="repetitions per size (default 10)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up repetitions per size (default 5)")
    ap.add_argument("--mpirun", default=shutil.which("mpirun"), help="mpirun (default: the one on PATH)")
    ap.add_argument("--emulation", action="store_true", help="the host emulation with the NCCL test double")
    ap.add_argument("--nccl-library", help="the libnccl to load (TESSERA_NCCL_LIBRARY); the double with --emulation")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per command (default 900)")
    ap.add_argument("--out", default=os.path.join(REPO, "experiments", "results", "nccl-allreduce-latest.md"))
    ap.add_argument("--dated", action="store_true", help="also write nccl-allreduce-DATE-DEVICE.md beside --out")
    ap.add_argument("--raw-dir", help="also write the evaluation's raw result (gpu_collectives.json) under this folder")
    a = ap.parse_args()
    a.sizes = [int(s) for s in a.sizes.split(",")]
    if any(s < 4 or s % 4 for s in a.sizes):
        sys.exit("--sizes: every size must be a positive multiple of 4 bytes (f32 elements)")
    build = os.path.abspath(a.build)
    vm = os.path.abspath(a.vm or os.path.join(build, "tessera-vm"))
    bench = os.path.abspath(a.bench or os.path.join(build, "experiments", "micro", "nccl_allreduce_bench"))
    for path, what in ((vm, "tessera-vm"), (bench, "nccl_allreduce_bench (built where the CUDA toolkit's nccl.h is)")):
        if not os.path.exists(path):
            sys.exit(f"{path} not found: build {what}")
    env = dict(os.environ, **MPI_ENV)
    if a.nccl_library:
        env["TESSERA_NCCL_LIBRARY"] = os.path.abspath(a.nccl_library)
    if a.emulation:
        if not a.nccl_library:
            sys.exit("--emulation needs --nccl-library (the NCCL test double)")
        env.update(TESSERA_GPU_EMULATION="1", TESSERA_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    if not a.mpirun and a.np != 1:
        sys.exit(f"-np {a.np} needs mpirun (Debian: openmpi-bin)")

    plain = run_plain(a, bench, env)
    rows = [{"bytes": s["bytes"], "plain": figures(s["per_call_us"], s["bytes"], a.np)} for s in plain["sizes"]]
    skipped, stats = None, ""
    if not a.mpirun:
        skipped = ("no mpirun on this machine: a script run without it is one process whose collectives are "
                   "local copies, not NCCL's")
    else:
        for r in rows:
            times, stats = run_tessera(a, vm, r["bytes"], env)
            r["tessera"] = figures(times, r["bytes"], a.np)
    device = plain["device"].split(" (")[0] if not a.emulation else "host emulation"
    meta = {"date": datetime.date.today().isoformat(), "device": plain["device"], "nccl": plain["nccl"],
            "np": a.np, "commit": built_from(), "emulation": a.emulation, "calls": a.calls, "reps": a.reps,
            "warmup": a.warmup, "tessera_skipped": skipped, "tessera_stats": stats,
            "command": "python3 experiments/harness/run_nccl_bench.py " + " ".join(sys.argv[1:])}
    text = report(rows, meta)
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")
    write_report(text, os.path.abspath(a.out), f"nccl-allreduce-{meta['date']}-{slug}.md" if a.dated else None)
    if a.raw_dir:
        import raw_results
        # An emulation run is no GPU session's: its run id lacks "-gpu-", so the paper never reads it.
        profile = "emulation" if a.emulation else "gpu"
        w = raw_results.RawWriter(raw_results.new_run_id(profile if a.emulation else "gpu-" + slug), profile,
                                  "gpu_collectives",
                                  "All-reduce of tensors on the GPU: Tessera against plain NCCL calls",
                                  {"command": meta["command"], "np": a.np, "sizes": a.sizes, "calls": a.calls,
                                   "reps": a.reps, "warmup": a.warmup, "emulation": a.emulation},
                                  {"repetitions": a.reps, "timer": "host clock around CALLS calls and one wait",
                                   "combine": "slowest rank per repetition"},
                                  {"nccl": plain["nccl"]})
        for r in rows:
            for side in ("plain", "tessera"):
                if side in r:
                    w.cell(f"{side}/{r['bytes']}", r[side]["per_call_us"], unit="us", bytes=r["bytes"])
        w.doc["derived"].update(device=plain["device"], tessera_skipped=skipped)
        log(f"wrote {w.write(a.raw_dir)}")
    print(text)


if __name__ == "__main__":
    main()
