"""experiments/harness/run_nccl_bench.py --emulation: the NCCL all-reduce benchmark at tiny sizes
under mpirun -np 2 on the host emulation of a GPU with the NCCL test double, so that both sides
(plain ncclAllReduce calls, and a script's all_reduce of tensors the GPU holds) and the report run
on every machine before a GPU session spends its time on them. Checks that every size has both
sides' times (finite, positive, one per repetition), that NCCL (the double) carried Tessera's
collectives (the harness refuses a run where it did not), that the report says it is the
emulation, and that the raw result names its cells. Nothing about the times themselves.

  python3 tests/experiments/nccl_bench_emulation_test.py --vm build/tessera-vm \
      --bench build/experiments/micro/nccl_allreduce_bench --nccl-double .../libtessera_nccl_double.so
"""
import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "runtime", "comm"))
from mpi_run import mpi_env, mpirun  # noqa: E402  (Open MPI's own leaks suppressed under the sanitizers)
SIZES = [1024, 65536]
REPS = 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--nccl-double", required=True)
    a = ap.parse_args()
    if not mpirun():
        print("skipped: mpirun not found (Debian: openmpi-bin)")
        return 0
    cxx = os.environ.get("TESSERA_EMULATION_CXX", "c++")
    if not shutil.which(cxx):
        print(f"skipped: the GPU emulation's compiler {cxx} is not installed")
        return 0
    problems = []
    with tempfile.TemporaryDirectory(prefix="tessera-nccl-bench-") as tmp:
        out = os.path.join(tmp, "nccl-allreduce-latest.md")
        cmd = [sys.executable, os.path.join(REPO, "experiments", "harness", "run_nccl_bench.py"),
               "--vm", a.vm, "--bench", a.bench, "--emulation", "--nccl-library", a.nccl_double, "--np", "2",
               "--sizes", ",".join(map(str, SIZES)), "--calls", "4", "--reps", str(REPS), "--warmup", "2",
               "--timeout", "600", "--out", out, "--raw-dir", os.path.join(tmp, "raw")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=mpi_env())
        if p.returncode != 0:
            print(f"FAIL: the harness failed (exit status {p.returncode}):\n{p.stderr[-4000:]}\n{p.stdout[-2000:]}")
            return 1
        with open(out) as f:
            report = f.read()
        if "the host emulation with the NCCL test double: these figures mean nothing" not in report:
            problems.append("the report does not say it ran on the emulation")
        rows = [l for l in report.splitlines() if l.startswith("| ") and "KB" in l]
        if [r.split(" | ")[0] for r in rows] != ["| 1 KB", "| 64 KB"]:
            problems.append(f"the table's rows are not one per size: {rows}")
        for r in rows:
            cells = [c.strip() for c in r.strip("|").split("|")]
            if "—" in cells or not all(float(c) > 0 for c in cells[1:]):
                problems.append(f"a row lacks a side's figures: {r}")
        raws = glob.glob(os.path.join(tmp, "raw", "*", "gpu_collectives.json"))
        if len(raws) != 1:
            problems.append(f"expected one raw gpu_collectives.json, found {raws}")
        else:
            with open(raws[0]) as f:
                doc = json.load(f)
            ids = sorted(c["id"] for c in doc["cells"])
            want = sorted(f"{side}/{s}" for side in ("plain", "tessera") for s in SIZES)
            if ids != want:
                problems.append(f"the raw result's cells are {ids}, expected {want}")
            for c in doc["cells"]:
                if len(c["samples"]) != REPS or not all(math.isfinite(x) and x > 0 for x in c["samples"]):
                    problems.append(f"cell {c['id']}: {c['samples']} is not {REPS} positive times")
            if not doc["parameters"].get("emulation"):
                problems.append("the raw result does not say it ran on the emulation")
    for pr in problems:
        print("FAIL: " + pr)
    if not problems:
        print(f"ok: both sides measured at {len(SIZES)} sizes under mpirun -np 2 on the emulation")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
