#!/usr/bin/env python3
"""examples/distributed/mlp_data_parallel.tsb trains the same model under
mpirun -np 2 and -np 4 as one process does with the same global batch: rank
0 prints the losses, which equal the single process's up to the order of
floating-point sums (relative 1e-5); the other ranks print nothing.

Usage: example_mlp_test.py --vm build/tessera-vm --source-dir .
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cli_checks import check, finish  # noqa: E402
from mpi_run import mpirun, run_ranks  # noqa: E402


def losses(text):
    """{step: loss} from the example's "step N loss X" lines."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "step" and f[2] == "loss":
            out[int(f[1])] = float(f[3])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    vm = os.path.abspath(args.vm)
    example = os.path.join(args.source_dir, "examples", "distributed", "mlp_data_parallel.tsb")
    one = subprocess.run([vm, "run", example, "--", "120", "64"], capture_output=True, text=True, timeout=300)
    check(one.returncode == 0, "one process trains", one.stderr[-1500:])
    ref = losses(one.stdout)
    check(len(ref) == 4 and ref[119] < ref[0], "one process prints 4 losses that go down", one.stdout)
    if not mpirun():
        print("skipped: mpirun not found (Debian: openmpi-bin)")
        return finish()
    for n in (2, 4):
        r = run_ranks(n, vm, example, "--", "120", "64", timeout=300)
        check(r.rc == 0, f"-np {n}: every rank ends with status 0", r.launcher + "".join(r.err))
        got = losses(r.out[0])
        check(got.keys() == ref.keys(), f"-np {n}: rank 0 prints the losses of the same steps", r.out[0])
        far = {s: (ref[s], got.get(s)) for s in ref if got.get(s) is None or abs(got[s] - ref[s]) > 1e-5 * abs(ref[s]) + 1e-6}
        check(not far, f"-np {n}: the losses are one process's (relative 1e-5)", str(far))
        check(all(not r.out[k].strip() for k in range(1, n)), f"-np {n}: the other ranks print nothing",
              " | ".join(r.out[1:]))
    # The training loop (compute, fused kernels and 5 all_reduces a step) runs as one trace that
    # leaves for the interpreter only where rank 0 prints (steps 50, 100 and 119, and the end).
    r = run_ranks(2, vm, example, "--stats", "--", "120", "64", timeout=300)
    loop = [m for m in re.finditer(r"mlp_data_parallel.tsb:(\d+) in <main>, root trace.*entered (\d+) times, (\d+) exits",
                                   r.err[0])]
    check(len(loop) == 1, "-np 2: the training loop is compiled to one root trace", r.err[0][-3000:])
    if loop:
        exits = int(loop[0].group(3))
        check(exits <= 5, f"-np 2: the loop's trace runs its collectives without returning to the interpreter "
                          f"({exits} exits in 120 steps)", loop[0].group(0))
    fused = re.search(r"fusion: (\d+) kernel calls in the traces", r.err[0])
    check(fused and int(fused.group(1)) > 0, "-np 2: the loop's tensor work is fused into kernels", r.err[0][-3000:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
