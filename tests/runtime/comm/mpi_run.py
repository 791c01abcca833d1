"""What the multi-process tests share: finding mpirun, running tessera-vm
under it with each rank's output in a file of its own, and reading those.

mpirun refuses to start as root unless told twice (OMPI_ALLOW_RUN_AS_ROOT and
its confirmation), as in a container; the tests set both. --oversubscribe
lets 4 ranks run on 2 cores."""
import argparse
import glob
import os
import shutil
import subprocess
import tempfile
import time

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

# Under the sanitizers: Open MPI's own allocations at init that finalize keeps
# (openmpi.lsan.supp says which and why); appended to the caller's options.
SUPPRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "openmpi.lsan.supp")


def mpi_env(extra=None):
    env = {**os.environ, **MPI_ENV, **(extra or {})}
    lsan = env.get("LSAN_OPTIONS", "")
    env["LSAN_OPTIONS"] = (lsan + ":" if lsan else "") + "suppressions=" + SUPPRESSIONS
    # Open MPI is built without frame pointers: only the slow unwinder gets a
    # leak's stack through it to the library names the suppressions match.
    asan = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "fast_unwind_on_malloc=0"
    return env


def mpirun():
    """The path of mpirun, or None."""
    return shutil.which("mpirun")


def test_args(*extra):
    """A multi-process test's command line (--vm, made absolute, and `extra`, add_argument's
    arguments as tuples); None, after printing why, where mpirun is missing (the test skips)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    for names, kwargs in extra:
        ap.add_argument(*names, **kwargs)
    args = ap.parse_args()
    args.vm = os.path.abspath(args.vm)
    if not mpirun():
        print("skipped: mpirun not found (Debian: openmpi-bin)")
        return None
    return args


class Ranks:
    """One mpirun: its exit status, wall time, each rank's stdout and stderr, and mpirun's own output."""

    def __init__(self, rc, seconds, out, err, launcher):
        self.rc, self.seconds, self.out, self.err, self.launcher = rc, seconds, out, err, launcher


def run_ranks(np, vm, script, *vm_args, timeout=120, env=None, popen_hook=None):
    """Runs `mpirun -np NP VM run SCRIPT VM_ARGS...`; returns Ranks. popen_hook(proc) is called once the
    launcher runs (e.g. to kill a rank), before waiting for it."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [mpirun(), "-np", str(np), "--oversubscribe", "--output-filename", d, vm, "run", script, *vm_args]
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=mpi_env(env))
        if popen_hook:
            popen_hook(p)
        try:
            lout, lerr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            lout, lerr = p.communicate()
            raise
        seconds = time.monotonic() - start
        out, err = [""] * np, [""] * np
        for r in range(np):
            for kind, dest in (("stdout", out), ("stderr", err)):
                files = glob.glob(os.path.join(d, "*", f"rank.{r}", kind))
                if files:
                    with open(files[0], errors="replace") as f:
                        dest[r] = f.read()
        return Ranks(p.returncode, seconds, out, err, (lout + lerr).decode(errors="replace"))


def rank_pids(launcher_pid, np, deadline=30):
    """The pids of the launcher's ranks, by rank (read from their environment), once all have started."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        found = {}
        for env_file in glob.glob("/proc/[0-9]*/environ"):
            pid = int(env_file.split("/")[2])
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid != launcher_pid:
                    continue
                with open(env_file, "rb") as f:
                    for kv in f.read().split(b"\0"):
                        if kv.startswith(b"OMPI_COMM_WORLD_RANK="):
                            found[int(kv.split(b"=")[1])] = pid
            except (OSError, ValueError, IndexError):
                continue
        if len(found) == np:
            return found
        time.sleep(0.05)
    return {}
