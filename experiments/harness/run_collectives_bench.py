#!/usr/bin/env python3
"""All-reduce bus bandwidth of Tessera's collectives against plain MPI_Allreduce: runs
experiments/micro/collectives_bench under `mpirun -np N` (it builds nothing) and writes
experiments/results/collectives-latest.md (the table, generated from the benchmark's JSON: per
size MPI's and Tessera's bus bandwidth and their ratio, and whether Tessera holds 0.9x of MPI from
1 MB up, with the worst ratio there) and collectives-latest.json (the benchmark's JSON with the
machine, the commit, Open MPI's version, np and the command); with --dated or --tag, dated copies
beside them.

  cmake --build build --target collectives_bench
  python3 experiments/harness/run_collectives_bench.py [--build build] [--np 2] [--budget-s 3]

The benchmark (experiments/micro/collectives_bench.cpp says how it measures): f32 sum, 1 KB to
256 MB (powers of 4), per size warm-up calls and timed iterations within --budget-s, each
iteration one call of each side in alternating order; a call's time is its slowest rank's, the
table shows the median; bus bandwidth = bytes / time * 2(n-1)/n.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import REPO, cpu_model  # noqa: E402
from run_kernel_tiers import built_from, log  # noqa: E402
import results_index  # noqa: E402

# The target: Tessera's bus bandwidth at least this share of MPI's from this size up.
TARGET_RATIO = 0.9
TARGET_FROM_BYTES = 1 << 20


def size_text(n):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def load_text():
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def mpirun_version(mpirun):
    try:
        p = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return p.stdout.splitlines()[0].strip() if p.returncode == 0 and p.stdout else None


def run_bench(a, bench):
    """Runs the benchmark under mpirun: (its JSON document, the command line as the report shows it)."""
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without both
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    with tempfile.TemporaryDirectory(prefix="tessera-collectives-") as tmp:
        out = os.path.join(tmp, "collectives.json")
        args = ["--budget-s", f"{a.budget_s:g}"] + (["--max-bytes", str(a.max_bytes)] if a.max_bytes else [])
        cmd = [a.mpirun, "--oversubscribe", "-np", str(a.np), bench] + args + ["--json", out]
        log("running: " + " ".join(cmd))
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, timeout=a.timeout)
        if p.returncode != 0 or not os.path.exists(out):
            sys.exit(f"collectives_bench failed under mpirun (exit status {p.returncode})")
        with open(out) as f:
            doc = json.load(f)
    shown = [a.mpirun, "--oversubscribe", "-np", str(a.np), os.path.relpath(bench, REPO)] + args
    return doc, " ".join(shown)


def verdict(rows):
    """(holds, worst ratio, its size) over the sizes from TARGET_FROM_BYTES up; None without any."""
    big = [r for r in rows if r["bytes"] >= TARGET_FROM_BYTES]
    if not big:
        return None
    worst = min(big, key=lambda r: r["ratio"])
    return worst["ratio"] >= TARGET_RATIO, worst["ratio"], worst["bytes"]


def report(doc, meta):
    rows = doc["sizes"]
    p = doc["protocol"]
    lines = [
        f"# All-reduce bus bandwidth: Tessera's collectives against MPI_Allreduce, {meta['date']}",
        "",
        f"- machine: {meta['machine']}; load average {meta['load_average_start']} at start, "
        f"{meta['load_average_end']} at end",
        f"- command: `python3 experiments/harness/run_collectives_bench.py --np {meta['np']}` "
        f"(ran `{meta['command']}`)",
        f"- built from {meta['commit']}",
        f"- {meta['open_mpi']}; {doc['np']} ranks on this machine; {doc['operation']}",
        "- (a) Tessera: `process_collectives().all_reduce(in, ReduceOp::Sum, out)` on f32 tensors, what a "
        "script's `all_reduce(t)` runs (the step's description exchange, then the MPI transport; buckets off); "
        "(b) `MPI_Allreduce` of the same buffers on `MPI_COMM_WORLD`",
        f"- per size: warm-up ({p['warmup']}; both results checked), then timed iterations within "
        f"{p['budget_s_per_size']:g} s per size ({p['min_iters']} to {p['max_iters']}); {p['order']}; "
        f"{p['time']}; bus bandwidth = {p['busbw']}; 1 KB = 1024 bytes",
        "",
        "| size | iterations | MPI µs | Tessera µs | MPI busbw GB/s | Tessera busbw GB/s | Tessera / MPI |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {size_text(r['bytes'])} | {r['iterations']} | {r['mpi']['median_us']:.1f} | "
                     f"{r['tessera']['median_us']:.1f} | {r['mpi']['busbw_gb_s']:.3f} | "
                     f"{r['tessera']['busbw_gb_s']:.3f} | {r['ratio']:.2f} |")
    v = verdict(rows)
    lines.append("")
    if v is None:
        lines.append(f"No size from {size_text(TARGET_FROM_BYTES)} up was measured.")
    else:
        holds, worst, at = v
        lines.append(f"From {size_text(TARGET_FROM_BYTES)} up, Tessera's bus bandwidth is at least "
                     f"{TARGET_RATIO:g}x MPI's: **{'yes' if holds else 'no'}** "
                     f"(worst ratio {worst:.2f}, at {size_text(at)}).")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build folder (default build, under the repository "
                                                      "where it is not a folder here)")
    ap.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    ap.add_argument("--budget-s", type=float, default=3, help="timed iterations' seconds per size (default 3)")
    ap.add_argument("--max-bytes", type=int, help="the largest size (default the benchmark's, 256 MB)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds for the whole run (default 1800)")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "experiments", "results"))
    results_index.dated_arguments(ap, "collectives")
    a = ap.parse_args()
    build = os.path.abspath(a.build) if os.path.isdir(a.build) else os.path.join(REPO, a.build)
    bench = os.path.join(build, "experiments", "micro", "collectives_bench")
    if not os.path.exists(bench):
        sys.exit(f"{bench} not found: cmake --build {a.build} --target collectives_bench "
                 "(it is built where CMake finds MPI)")
    version = mpirun_version(a.mpirun)
    if version is None:
        sys.exit(f"{a.mpirun} not found or failed: install Open MPI (Debian: openmpi-bin libopenmpi-dev)")
    start_load = load_text()
    doc, command = run_bench(a, bench)
    meta = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{cpu_model()}, {os.cpu_count()} CPUs",
        "commit": built_from(),
        "open_mpi": doc.get("mpi_library", "").split(",")[0] + f" ({version})",
        "np": a.np,
        "command": command,
        "load_average_start": start_load,
        "load_average_end": load_text(),
    }
    raw = dict(meta)
    raw["open_mpi_library"] = doc.get("mpi_library")
    raw["target"] = {"ratio": TARGET_RATIO, "from_bytes": TARGET_FROM_BYTES, "holds": (verdict(doc["sizes"]) or [None])[0]}
    raw["benchmark"] = doc
    dated = results_index.dated_run(a.dated, a.tag)
    for path in results_index.save(a.out_dir, "collectives", "md", report(doc, meta), dated) + \
            results_index.save(a.out_dir, "collectives", "json", json.dumps(raw, indent=2) + "\n", dated):
        log(f"wrote {path}")
    results_index.refresh(a.out_dir)


if __name__ == "__main__":
    main()
