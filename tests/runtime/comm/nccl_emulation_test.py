#!/usr/bin/env python3
"""Collectives of tensors on the GPU through NCCL, on the host emulation of
a GPU (TESSERA_GPU_EMULATION=1, --device=gpu) under mpirun -np 2, with the
NCCL test double (nccl_double.cpp, named by TESSERA_NCCL_LIBRARY) standing in
for libnccl: a hot loop whose collectives' inputs are fused kernels' outputs
and whose outputs feed fused kernels (all_reduce, broadcast, reduce_scatter,
all_gather, then send and recv in a ring), and a loop whose all_reduces' outputs
are never read before they are freed (their blocks reused by the next kernels). Checks:
  - each rank's results equal the host path's (the same run with no NCCL to
    load, its collectives on MPI), bit for bit, and the CPU's closely;
  - --stats says NCCL carried the collectives (the double's name in it);
  - the double saw every operation, each on the transport's own stream,
    ordered after the kernels before it (its log), the communicator
    bootstrapped from rank 0's unique id; the emulation faults a kernel or
    copy that touches a collective's memory before the kernels' stream
    waited for it (a reader of its output, a reuse of its freed blocks);
  - collectives are left in flight: kernels of independent work launch
    while one is (the double's log counts them); one that never completes
    (the double's stall) fails the run at its deadline, naming it;
  - NCCL_DEBUG=INFO: the library reports its choice of algorithm;
  - without NCCL, --stats says why tensors on the GPU took the host's path.
With --real (a GPU session, tools/run-gpu-checks.sh): the same program on
the real libnccl and GPU, under mpirun -np NP where there is mpirun (one GPU:
one rank), else as one process (no collective then reaches NCCL).

Usage: nccl_emulation_test.py --vm build/tessera-vm --nccl-double build/.../libtessera_nccl_double.so
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cli_checks import check as _check, finish  # noqa: E402
from mpi_run import mpirun, run_ranks  # noqa: E402

PROGRAM = """\
let r = world_rank()
let n = world_size()
let x = arange(256, dtype=f32) * 0.01 + r
let y = x * 1.0
for i in range(60) {
  let g = all_reduce(tanh(y * 0.9 + x) * 0.5 + 0.1)
  let b = broadcast(y * 0.5 + 1.0, root=n - 1)
  let h = reduce_scatter(g * 0.5 - b * 0.25, op="max")
  let a = all_gather(h * 2.0 + 1.0)
  y = g * 0.25 + a * 0.125 + x * 0.5
}
let u = all_reduce(y * 1.0)
for i in range(40) {
  u = all_reduce(y * 0.5 + i)
}
y = y * 0.5 + u * 0.001
if n > 1 {
  let to = (r + 1) % n
  let from = (r + n - 1) % n
  for i in range(60) {
    let z = y * 0.5 + 0.25
    let got = z
    if r % 2 == 0 {
      send(z, to)
      got = recv(z, from)
    } else {
      got = recv(z, from)
      send(z, to)
    }
    y = got * 0.75 + y * 0.25
  }
}
for i in range(256) { print(y[i]) }
"""
ARGS = ["--jit-param", "hotloop=4", "--jit-param", "async=0", "--jit-param", "kcache=0", "--jit-param", "specialize=0", "--comm-timeout", "60"]
OPS = ("ncclAllReduce", "ncclBroadcast", "ncclReduceScatter", "ncclAllGather", "ncclSend", "ncclRecv")


def check(cond, what, detail=""):
    _check(cond, what, detail if isinstance(detail, str) else repr(detail))


def results(text):
    return [l for l in text.splitlines() if "NCCL INFO" not in l]


def carried(err):
    """The number of collectives --stats says NCCL carried, or None."""
    for line in err.splitlines():
        if "carried" in line and "NCCL" in line:
            return int(line.split(" carried ")[1].split(" ")[0])
    return None


def emulation(vm, double, script, d, n):
    emu = {"TESSERA_GPU_EMULATION": "1", "TESSERA_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}
    log = os.path.join(d, "double.log")
    nccl = run_ranks(n, vm, script, "--device=gpu", *ARGS, "--stats", timeout=600,
                     env=dict(emu, TESSERA_NCCL_LIBRARY=double, TESSERA_NCCL_DOUBLE_LOG=log, NCCL_DEBUG="INFO"))
    check(nccl.rc == 0, f"-np {n}, NCCL double: every rank ends with status 0",
          f"rc={nccl.rc}\n{nccl.err[0][-3000:]}\n{nccl.err[-1][-3000:]}\n{nccl.launcher[-2000:]}")
    host = run_ranks(n, vm, script, "--device=gpu", *ARGS, "--stats", timeout=600,
                     env=dict(emu, TESSERA_NCCL_LIBRARY=os.path.join(d, "no-libnccl.so.2")))
    check(host.rc == 0, f"-np {n}, no NCCL: every rank ends with status 0", f"rc={host.rc}\n{host.err[0][-3000:]}")
    cpu = run_ranks(n, vm, script, "--device=cpu", *ARGS, timeout=600)
    check(cpu.rc == 0, f"-np {n}, the CPU: every rank ends with status 0", f"rc={cpu.rc}\n{cpu.err[0][-3000:]}")
    for r in range(n):
        got, want = results(nccl.out[r]), results(host.out[r])
        check(len(got) == 256 and got == want, f"rank {r}: the NCCL path's results are the MPI path's, bit for bit",
              f"{len(got)} lines; first differences: {[(a, b) for a, b in zip(got, want) if a != b][:4]}")
        close = [abs(float(a) - float(b)) <= 1e-4 * max(1.0, abs(float(b))) for a, b in zip(got, results(cpu.out[r]))]
        check(len(close) == 256 and all(close), f"rank {r}: ... and the CPU's, to 1e-4")
        k = carried(nccl.err[r])
        check(k is not None and k >= 100 and os.path.basename(double) in nccl.err[r],
              f"rank {r}: --stats: NCCL (the double) carried the collectives ({k})",
              [l for l in nccl.err[r].splitlines() if "world:" in l])
        check(carried(host.err[r]) is None and "tensors on the GPU took the host's path: no NCCL: " in host.err[r],
              f"rank {r}: without NCCL, --stats says why tensors on the GPU took the host's path",
              [l for l in host.err[r].splitlines() if "world:" in l])
    with open(log) as f:
        lines = f.read().splitlines()
    for op in OPS:
        check(any(f" {op} " in l for l in lines), f"the double carried {op}")
    check(lines and all(l.endswith("stream=own ordered=1") for l in lines),
          f"every one of the double's {len(lines)} calls was on the transport's own stream, after the kernels before it",
          [l for l in lines if not l.endswith("ordered=1")][:4])
    check(sum(1 for l in lines if l.startswith("rank 0 ")) == carried(nccl.err[0]),
          "rank 0: the double's calls are the collectives --stats counts")
    # Collectives left in flight: kernels of independent work (broadcast's
    # input, computed after all_reduce was enqueued) launched before the
    # kernels' stream waited for the collective before them.
    for r in range(n):
        over = [int(l.split(" overlapped=")[1].split(" ")[0]) for l in lines if l.startswith(f"rank {r} ")]
        check(over and over[-1] >= 30, f"rank {r}: kernels ran while a collective was in flight (the double counts "
              f"{over[-1] if over else None}; one per compiled iteration expected, after the loop's warm-up)")
    info = [l for l in nccl.out[0].splitlines() if "NCCL INFO ncclAllReduce" in l]
    check(info and "algorithm" in info[0], "NCCL_DEBUG=INFO: NCCL reports the algorithm it chose", info[:1])
    # A collective left in flight that never completes (the double stalls
    # rank 0's 9th): its deadline ends the wait, with an error naming it.
    short = [a if a != "60" else "3" for a in ARGS]
    stalled = run_ranks(n, vm, script, "--device=gpu", *short, timeout=300,
                        env=dict(emu, TESSERA_NCCL_LIBRARY=double, TESSERA_NCCL_DOUBLE_STALL="0:9"))
    check(stalled.rc != 0, "a collective on the GPU that never completes fails the run", f"rc={stalled.rc}")
    check("(this rank's NCCL call 9) did not complete on the GPU within the collectives' timeout (JIT parameter "
          "commtimeout); the NCCL communicator was aborted" in stalled.err[0],
          "rank 0's error names the NCCL call and the timeout",
          stalled.err[0][-2000:])
    check(3 <= stalled.seconds < 60, "it fails once the deadline passes, not before and not much later",
          f"{stalled.seconds:.1f} s")


def real(vm, script, np_):
    """A GPU session's check: the real libnccl (no TESSERA_NCCL_LIBRARY)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERA_GPU_EMULATION", "TESSERA_NCCL_LIBRARY")}
    if mpirun():
        ranks = run_ranks(np_, vm, script, "--device=gpu", *ARGS, "--stats", timeout=600,
                          env={"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,TUNING"})
        check(ranks.rc == 0, f"the GPU, -np {np_}: every rank ends with status 0",
              f"rc={ranks.rc}\n{ranks.err[0][-3000:]}\n{ranks.launcher[-2000:]}")
        k = carried(ranks.err[0])
        check(k is not None and k > 0, f"the GPU, -np {np_}: --stats: NCCL carried the collectives ({k})",
              [l for l in ranks.err[0].splitlines() if "world:" in l or "NCCL" in l][:6])
        print("\n".join(l for l in ranks.out[0].splitlines() if "NCCL INFO" in l and ("Algo" in l or "NCCL version" in l))[:2000])
    else:
        p = subprocess.run([vm, "run", script, "--device=gpu", *ARGS, "--stats"], capture_output=True, text=True,
                           env=env, timeout=600)
        check(p.returncode == 0 and len(results(p.stdout)) == 256, "the GPU, one process (no mpirun): the program runs",
              p.stderr[-3000:])
        print("note: no mpirun on this machine: one process, its collectives local (NCCL not used)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--nccl-double", default="")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--real", action="store_true", help="the real libnccl on a GPU (a GPU session)")
    a = ap.parse_args()
    vm = os.path.abspath(a.vm)
    with tempfile.TemporaryDirectory(prefix="tessera-nccl-") as d:
        script = os.path.join(d, "nccl.tsb")
        with open(script, "w") as f:
            f.write(PROGRAM)
        if a.real:
            real(vm, script, a.np)
            return finish()
        if not mpirun():
            print("skipped: mpirun not found (Debian: openmpi-bin)")
            return 0
        if not a.nccl_double or not os.path.exists(a.nccl_double):
            print("skipped: built without the CUDA toolkit's nccl.h (no NCCL transport, no NCCL double)")
            return 0
        cxx = os.environ.get("TESSERA_EMULATION_CXX", "c++")
        if not shutil.which(cxx):
            print(f"skipped: the GPU emulation's compiler {cxx} is not installed")
            return 0
        emulation(vm, os.path.abspath(a.nccl_double), script, d, a.np)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
