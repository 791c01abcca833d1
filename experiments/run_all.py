#!/usr/bin/env python3
"""The whole evaluation of the paper in one command: runs every benchmark this machine can run
under one profile, writes one raw result per benchmark (experiments/raw/<run id>/<benchmark>.json:
every sample, the machine, the commit, the versions, the parameters and the protocol), compares
the run with the previous stored one (regressions), and regenerates the paper's tables, figures
and numbers (papers/tessera-vm/generated/). `make -C papers/tessera-vm` then builds the PDF from
the stored results without running anything.

  /usr/bin/python3 experiments/run_all.py --profile quick      # under 30 minutes on 2 cores
  /usr/bin/python3 experiments/run_all.py --profile full       # the protocol in full (hours)
  /usr/bin/python3 experiments/run_all.py --only tensor --programs elementwise_chain

Run it with a Python that has NumPy, SciPy and matplotlib (Debian's /usr/bin/python3 after
tools/install-deps.sh), from a Release build (build/tessera-vm, and build/experiments/micro/
kernel_tier_bench for the kernel tiers). Progress goes to stderr, one line per cell."""
import argparse
import collections
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "evaluation"))
import bench_acceptance  # noqa: E402
import bench_kernels  # noqa: E402
import bench_scalar  # noqa: E402
import bench_tensor  # noqa: E402
import bench_warmup  # noqa: E402
import paper_outputs  # noqa: E402
import raw_results  # noqa: E402

BENCHMARKS = [bench_scalar, bench_tensor, bench_warmup, bench_kernels, bench_acceptance]

# The protocol per profile. Whole-process cells: `process_warmup` untimed runs, then timed runs
# until `process_min_runs` and `process_budget_s` are reached (at most `process_max_runs`).
# In-process cells (the tensor programs, the kernels): the loop's warm-up and timed iterations.
Profile = collections.namedtuple("Profile", "name process_warmup process_min_runs process_max_runs process_budget_s "
                                 "tensor_iterations warmup_iterations kernel_repetitions kernel_min_time timeout_s "
                                 "scalar_suite scalar_runtimes")
PROFILES = {
    "quick": Profile("quick", 1, 3, 20, 1.0, 30, 400, 3, 0.05, 300, False,
                     ["tessera", "tessera-interp", "luajit", "lua5.4", "pypy3", "python3"]),
    "full": Profile("full", 1, 10, 100, 20.0, 100, 5000, 10, 0.2, 1800, True, None),
}


class Context:
    def __init__(self, args, profile):
        self.repo = raw_results.REPO
        self.build = os.path.abspath(args.build)
        self.vm = os.path.join(self.build, "tessera-vm")
        self.python = args.python
        self.profile = profile
        self.programs = set(args.programs.split(",")) if args.programs else None
        self.shared_bench = os.path.abspath(args.shared) if args.shared else None
        self.started = time.monotonic()
        self._cell_start = None

    def runtimes(self, bench, all_runtimes):
        if bench == "scalar" and self.profile.scalar_runtimes:
            return [r for r in all_runtimes if r in self.profile.scalar_runtimes]
        return all_runtimes

    def _clock(self):
        s = int(time.monotonic() - self.started)
        return f"[{s // 60:3d}:{s % 60:02d}]"

    def progress(self, what):
        self._cell_start = time.monotonic()
        print(f"{self._clock()} {what}", end=" ", file=sys.stderr, flush=True)

    def progress_line(self, text):
        dt = time.monotonic() - (self._cell_start or time.monotonic())
        print(f"{text} ({dt:.1f} s)", file=sys.stderr, flush=True)

    def progress_done(self, runs):
        if runs.status != "ok":
            self.progress_line(f"{runs.status.upper()} {runs.detail}")
        else:
            mean = sum(runs.samples) / len(runs.samples)
            self.progress_line(f"{mean:.3f} s x{len(runs.samples)}")

    def progress_done_cell(self, cell):
        if cell["status"] != "ok":
            self.progress_line(f"{cell['status'].upper()} {cell.get('detail', '')}")
        else:
            s = cell["summary"]
            self.progress_line(f"{s['mean']:.1f} {cell['unit']} x{s['n']}")


def versions(python):
    v = raw_results.tool_version
    out = {"luajit": v(["luajit", "-v"]), "lua5.4": v(["lua5.4", "-v"]), "pypy3": v(["pypy3", "--version"]),
           "cpython": v(["/usr/bin/python3", "--version"]), "cc": v(["cc", "--version"]),
           "mpirun": v(["mpirun", "--version"])}
    for m in ("numpy", "torch", "numexpr", "numba", "scipy", "matplotlib"):
        out[m] = raw_results.python_module_version(python, m)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick",
                    help="quick: few runs per cell, the corpus only (under 30 min on 2 cores); full: the "
                         "protocol in full and the benchmark programs of ../shared/bench too")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(b.NAME for b in BENCHMARKS))
    ap.add_argument("--programs", help="only these programs (any benchmark's), comma-separated")
    ap.add_argument("--build", default=os.path.join(raw_results.REPO, "build"), help="the Release build folder")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python of the NumPy/PyTorch/numexpr/Numba twins")
    ap.add_argument("--shared", default=os.path.join(raw_results.REPO, "..", "shared", "bench"),
                    help="the scalar benchmark programs' twins (full profile; skipped where missing)")
    ap.add_argument("--raw-dir", default=raw_results.RAW_DIR, help="where raw results go (default experiments/raw)")
    ap.add_argument("--no-paper", action="store_true", help="do not regenerate papers/tessera-vm/generated/")
    a = ap.parse_args()
    profile = PROFILES[a.profile]
    ctx = Context(a, profile)
    if not os.path.exists(ctx.vm):
        sys.exit(f"{ctx.vm} not found: build it first (cmake --build build --target tessera-vm)")
    chosen = [b for b in BENCHMARKS if not a.only or b.NAME in a.only.split(",")]
    if a.only and len(chosen) != len(set(a.only.split(","))):
        ap.error("--only takes some of: " + ",".join(b.NAME for b in BENCHMARKS))
    run_id = raw_results.new_run_id(profile.name)
    vers = versions(a.python)
    print(f"run {run_id}: {', '.join(b.NAME for b in chosen)} (profile {profile.name})", file=sys.stderr)
    params = {k: v for k, v in profile._asdict().items() if k != "name"}
    for b in chosen:
        print(f"== {b.NAME}: {b.TITLE}", file=sys.stderr)
        w = raw_results.RawWriter(run_id, profile.name, b.NAME, b.TITLE, dict(params, vm=ctx.vm), {
            "confidence": 0.95, "process": {"warmup_runs": profile.process_warmup, "min_runs": profile.process_min_runs,
                                            "max_runs": profile.process_max_runs,
                                            "budget_s": profile.process_budget_s},
            "tensor": {"timed_iterations": profile.tensor_iterations},
            "kernels": {"repetitions": profile.kernel_repetitions}}, vers)
        b.run(ctx, w)
        print(f"wrote {w.write(a.raw_dir)}", file=sys.stderr)
    if not a.no_paper:
        paper_outputs.generate(a.raw_dir, log=lambda m: print(m, file=sys.stderr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
