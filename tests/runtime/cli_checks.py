"""What the end-to-end tests of tessera-vm share: running the VM and
recording checks, each printed as it is made ("ok:" or "FAIL:"), and the
exit status the failures give the test."""
import argparse
import os
import subprocess

FAILS = []


def check(cond, what, detail=""):
    if not cond:
        FAILS.append(f"{what}: {detail}"[:2000])
        print("FAIL:", what, detail[:500])
    else:
        print("ok:", what)


def run(vm, *args, stdout=subprocess.PIPE, timeout=120, env=None):
    """Runs `vm args`; returns (exit status, stdout, stderr) as text."""
    p = subprocess.run([vm, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=timeout,
                       env=None if env is None else {**os.environ, **env})
    return p.returncode, (p.stdout or b"").decode(errors="replace"), p.stderr.decode(errors="replace")


def finish():
    """Prints the tally; returns the test's exit status (1: some check failed)."""
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def vm_args(sanitized=False):
    """The command line of a test: --vm (made absolute) and, if asked for, --sanitized."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    if sanitized:
        ap.add_argument("--sanitized", action="store_true")
    args = ap.parse_args()
    args.vm = os.path.abspath(args.vm)
    return args
