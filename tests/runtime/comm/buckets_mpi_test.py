#!/usr/bin/env python3
"""All_reduces in buckets under mpirun -np 2 and 4 (programs_buckets.tsb):
every result is the reduction of the inputs as they were at the call, whether
a rank reads it at once, later, or never; buckets mix with other element types
and collectives in program order; --stats counts the buckets; with buckets off
(bucket=0) the results are the same.

Usage: buckets_mpi_test.py --vm build/tessera-vm
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cli_checks import check, finish  # noqa: E402
from mpi_run import run_ranks, test_args  # noqa: E402


def expected(n):
    lines = []
    for i in range(40):
        s = float(sum(i + r for r in range(n)))
        m = max(i * (r + 1) for r in range(n))
        h = sum(0.5 + r for r in range(n)) / n
        lines.append(f"s {i} {s!r} {s!r} {s!r} m {m} h {h!r}")
    total = sum(float(sum(i + r for r in range(n))) for i in range(40))
    return lines, f"total {total!r}"


def main():
    args = test_args()
    if args is None:
        return 0
    vm = args.vm
    script = os.path.join(HERE, "programs_buckets.tsb")
    for n in (2, 4):
        lines, total = expected(n)
        for mode in (["--stats"], ["--stats", "--jit-param", "bucket=0"], ["--jit=off"]):
            label = f"-np {n} {' '.join(mode)}"
            r = run_ranks(n, vm, script, *mode, "--comm-timeout", "60", timeout=300)
            check(r.rc == 0, f"{label}: every rank ends with status 0", r.launcher + "".join(r.err)[-2000:])
            out0 = r.out[0].splitlines()
            check(out0[:40] == lines, f"{label}: rank 0's results, read at once, are the inputs' at the call",
                  "\n".join(f"want {a}\n got {b}" for a, b in zip(lines, out0) if a != b)[:1500])
            for k in range(n):
                check(r.out[k].splitlines()[-1:] == [total], f"{label}: rank {k}'s results read at the end are right",
                      r.out[k][-300:])
            if mode == ["--stats"]:
                stats = [l for l in r.err[0].splitlines() if "world:" in l]
                check(stats and "all_reduce 160" in stats[0] and "all_reduces packed in" in stats[0],
                      f"{label}: --stats counts 160 all_reduces and the buckets they went in", str(stats))
            if "bucket=0" in mode:
                stats = [l for l in r.err[0].splitlines() if "world:" in l]
                check(stats and "all_reduce 160" in stats[0] and "packed in" not in stats[0],
                      f"{label}: --stats counts 160 all_reduces and no buckets", str(stats))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
