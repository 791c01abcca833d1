#!/usr/bin/env python3
"""Every collective on every dtype under mpirun -np N, against NumPy: the
ranks' inputs of programs_collectives.tsb rebuilt here, each collective
computed on them, and each rank's printed result compared exactly (the
inputs are small integers and halves, so every dtype holds every sum,
product and mean exactly). Results every rank shares are also compared
across the ranks, bit for bit as printed. Run with the JIT off, on, and
with hot loops at once (hotloop=2, so that the collectives run from traces).

Usage: collectives_mpi_test.py --vm build/tessera-vm --np 2
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cli_checks import check, finish  # noqa: E402
from mpi_run import run_ranks, test_args  # noqa: E402

DTYPES = ["f32", "f16", "bf16", "i32", "i64", "bool"]
SHARED = ("all_reduce.", "all_gather.", "broadcast", "loop")  # the same on every rank


def inputs(dt, r):
    base = np.arange(16, dtype=np.float32).reshape(4, 4) * 0.5 - 3.0 + r
    if dt == "bool":
        return (((base * 2.0).astype(np.int64) + r) % 3) == 0
    if dt in ("i32", "i64"):
        return (base * 2.0).astype(np.int64) - 7 * r
    return base.astype(np.float64)


def small(dt, r):
    base = np.arange(16, dtype=np.float32).reshape(4, 4) % 3.0 + 1.0 + r % 2
    return base > 1.5 if dt == "bool" else base.astype(np.float64)


def reduce(xs, op, dt):
    s = np.stack(xs)
    if dt == "bool":
        return s.any(0) if op in ("sum", "max") else s.all(0)
    if op == "avg":
        return np.floor_divide(s.sum(0), len(xs)) if dt in ("i32", "i64") else s.sum(0) / len(xs)
    return {"sum": s.sum, "max": s.max, "min": s.min, "prod": s.prod}[op](0)


def expected(n, r):
    """Rank r's lines: (name, dtype, shape, values) in the script's order."""
    out = []
    for dt in DTYPES:
        xs = [inputs(dt, k) for k in range(n)]
        for op in ("sum", "max", "min", "avg"):
            if not (dt == "bool" and op == "avg"):
                out.append((f"all_reduce.{op}", dt, reduce(xs, op, dt)))
        out.append(("all_reduce.prod", dt, reduce([small(dt, k) for k in range(n)], "prod", dt)))
        out.append(("all_gather.0", dt, np.concatenate(xs, 0)))
        out.append(("all_gather.1", dt, np.concatenate(xs, 1)))
        out.append(("reduce_scatter.0", dt, np.split(reduce(xs, "sum", dt), n, 0)[r]))
        out.append(("reduce_scatter.1", dt, np.split(reduce(xs, "max", dt), n, 1)[r]))
        out.append(("broadcast", dt, xs[n - 1]))
        out.append(("recv", dt, xs[(r + n - 1) % n]))
    w = [inputs("f32", k) for k in range(n)]
    out.append(("loop", "f32", 300 * 0.5 * sum(2.0 * x + 1.0 for x in w)))
    return out


def text(dt, v):
    if dt == "bool":
        return "true" if v else "false"
    if dt in ("i32", "i64"):
        return str(int(v))
    return repr(float(v))


def main():
    args = test_args((("--np",), {"type": int, "default": 2}))
    if args is None:
        return 0
    vm = args.vm
    script = os.path.join(HERE, "programs_collectives.tsb")
    n = args.np
    for mode in (["--jit=off"], [], ["--jit-param", "hotloop=2", "--jit-param", "hotcall=2"]):
        label = " ".join(mode) or "the JIT on"
        ranks = run_ranks(n, vm, script, *mode, "--comm-timeout", "60", timeout=240)
        check(ranks.rc == 0, f"-np {n}, {label}: every rank ends with status 0", f"rc={ranks.rc}\n{ranks.err}\n{ranks.launcher}")
        for r in range(n):
            lines = ranks.out[r].splitlines()
            want = expected(n, r)
            check(len(lines) == len(want), f"-np {n}, {label}: rank {r} prints {len(want)} results",
                  f"{len(lines)} lines\n{ranks.err[r][-1500:]}")
            bad = []
            for line, (name, dt, value) in zip(lines, want):
                fields = line.split(" ")
                shape = "[" + ", ".join(str(d) for d in value.shape) + "]"
                head = f"{name} {dt} {shape}"
                got_head = " ".join(fields[:2]) + " " + line[len(fields[0]) + len(fields[1]) + 2:].split("]")[0] + "]"
                values = line.split("] ", 1)[1].split(" ") if "] " in line else []
                want_values = [text(dt, v) for v in value.reshape(-1)]
                if got_head != head or values != want_values:
                    bad.append(f"{head}: want {' '.join(want_values)}\n  got  {line}")
            check(not bad, f"-np {n}, {label}: rank {r}'s results equal NumPy's", "\n".join(bad[:4]))
        for r in range(1, n):
            same = [a == b for a, b in zip(ranks.out[0].splitlines(), ranks.out[r].splitlines())
                    if a.startswith(SHARED)]
            check(same and all(same), f"-np {n}, {label}: rank {r}'s shared results are rank 0's, bit for bit")
    # The hot loop compiled, its collectives in the trace: --stats counts them.
    ranks = run_ranks(n, vm, script, "--stats", timeout=240)
    err = ranks.err[0]
    traces = [l for l in err.splitlines() if l.strip().startswith("traces:")]
    check(traces and not traces[0].strip().startswith("traces: 0 recorded"), f"-np {n}: the loops were compiled", err[-2000:])
    check(f"world: rank 0 of {n} (Open MPI" in err, f"-np {n}: --stats names the rank and the world", err[-2000:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
