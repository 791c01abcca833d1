#!/usr/bin/env python3
"""Faults across ranks end the run, never hang it (mpirun -np 2):
  - a rank that raises: it reports the error under its rank, mpirun ends
    the other rank and names the failed one;
  - a rank killed with SIGKILL while the other waits in a collective:
    mpirun ends the job and names it;
  - a rank that never calls the collective: the waiting rank fails once
    --comm-timeout passes, naming the rank that never came;
  - shapes that differ across ranks, and ranks that call different
    collectives: a runtime error on every rank naming both sides.
Every case must end well within its timeout (the test's own limit is far
above it, so a hang fails the test instead of CI).

Usage: collectives_fault_test.py --vm build/tessera-vm
"""
import os
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cli_checks import check, finish  # noqa: E402
from mpi_run import rank_pids, run_ranks, test_args  # noqa: E402

CASES = {
    "raises": 'if world_rank() == 1 { assert(false, "rank one gives up") }\nprint(all_reduce(ones([4])))\n',
    "killed": ('if world_rank() == 1 {\n  let t0 = clock()\n  while clock() - t0 < 100.0 { }\n}\n'
               'print(all_reduce(ones([4])))\n'),
    "absent": 'if world_rank() == 0 { print(all_reduce(ones([4]))) }\n',
    "shapes": 'print(all_reduce(zeros([4 + world_rank(), 3])))\n',
    "kinds": 'if world_rank() == 0 { print(all_reduce(ones([4]))) } else { barrier() }\n',
}


def main():
    args = test_args()
    if args is None:
        return 0
    vm = args.vm
    with tempfile.TemporaryDirectory() as d:
        scripts = {}
        for name, text in CASES.items():
            scripts[name] = os.path.join(d, name + ".tsb")
            with open(scripts[name], "w") as f:
                f.write(text)

        r = run_ranks(2, vm, scripts["raises"], "--comm-timeout", "60", timeout=120)
        check(r.rc != 0, "a rank raising ends the job with a non-zero status", f"rc={r.rc}")
        check("[rank 1]" in r.err[1] and "rank one gives up" in r.err[1], "the failed rank reports its error under its rank",
              r.err[1])
        check("Exit code" in r.launcher and ",1]" in r.launcher, "mpirun names the rank that failed", r.launcher)
        check(r.seconds < 30, "the other rank is ended well before the timeout", f"{r.seconds:.1f} s")

        def kill_rank_1(proc):
            pids = rank_pids(proc.pid, 2)
            check(1 in pids, "the ranks' processes are found")
            if 1 in pids:
                time.sleep(1.0)  # rank 0 is in the collective by now
                os.kill(pids[1], signal.SIGKILL)

        r = run_ranks(2, vm, scripts["killed"], "--comm-timeout", "60", timeout=120, popen_hook=kill_rank_1)
        check(r.rc != 0, "a rank killed with SIGKILL ends the job with a non-zero status", f"rc={r.rc}")
        check("rank 1" in r.launcher and "signal 9" in r.launcher, "mpirun names the killed rank and its signal",
              r.launcher)
        check(r.seconds < 30, "the waiting rank is ended well before the timeout", f"{r.seconds:.1f} s")

        r = run_ranks(2, vm, scripts["absent"], "--comm-timeout", "3", timeout=120)
        check(r.rc != 0, "a collective one rank never calls fails the run", f"rc={r.rc}")
        check("all_reduce: did not complete within 3 s (JIT parameter commtimeout): rank 1 never called it" in r.err[0],
              "the waiting rank's error names the operation, the timeout and the missing rank", r.err[0])
        check(3 <= r.seconds < 30, "it fails once the timeout passes, not before and not much later", f"{r.seconds:.1f} s")

        r = run_ranks(2, vm, scripts["shapes"], timeout=120)
        check(r.rc != 0, "shapes that differ across ranks fail the run", f"rc={r.rc}")
        for k in range(2):
            check("all_reduce: shapes or dtypes differ across ranks: rank 0 has f32[4, 3], rank 1 has f32[5, 3]" in r.err[k],
                  f"rank {k} reports both shapes", r.err[k])

        r = run_ranks(2, vm, scripts["kinds"], timeout=120)
        check(r.rc != 0, "ranks calling different collectives fail the run", f"rc={r.rc}")
        for k in range(2):
            check("the ranks disagree on the collective: rank 0 called all_reduce (its collective 0), rank 1 called "
                  "barrier" in r.err[k], f"rank {k} says which collective each called", r.err[k])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
