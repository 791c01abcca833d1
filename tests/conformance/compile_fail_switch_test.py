#!/usr/bin/env python3
"""The --expect-jit check of run_conformance.py bites: with a host tier broken on purpose
(TESSERA_TEST_FAIL_T1=1 / TESSERA_TEST_FAIL_T2=1: every compile of that tier throws,
codegen/host/test_compile_failure.h), the conformance modes that pin that tier fail programs
with hot loops, naming the abort reason, although every output is still right (the
interpreter runs what did not compile). The same programs pass in the same modes without
the switch, so the failure is the switch's.

Usage: compile_fail_switch_test.py --vm build/tessera-vm --mode 'T2:--jit-param tier=2' ...
  (--mode TIER:ARGS, as many as there are modes to check; TIER is T1 or T2)
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
# Programs whose hot loops run long after their first traces are recorded, so that even an
# LLVM compile on the worker thread (async=1) fails before the program ends.
PROGRAMS = ["corpus/sort_lists.tsb", "corpus/rle.tsb", "corpus/visitor_fn.tsb"]


def run_modes(vm, mode_args, env_extra):
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, os.path.join(ROOT, "run_conformance.py"), "--vm", vm,
           "--vm-args=" + mode_args, "--expect-jit"] + PROGRAMS
    return subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=600)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    ap.add_argument("--mode", action="append", required=True, help="TIER:ARGS, e.g. 'T2:--jit-param tier=2'")
    a = ap.parse_args()
    vm = os.path.abspath(a.vm)
    failures = []
    for mode in a.mode:
        tier, _, args = mode.partition(":")
        if tier not in ("T1", "T2"):
            sys.exit(f"--mode {mode!r}: TIER must be T1 or T2")
        clean = run_modes(vm, args, {})
        if clean.returncode != 0:
            failures.append(f"{args}: the programs fail without the switch:\n{clean.stdout}")
            continue
        broken = run_modes(vm, args, {f"TESSERA_TEST_FAIL_{tier}": "1"})
        reason = f"CompileFailed{tier}"
        failed = [p for p in PROGRAMS if f"FAIL {p}" in broken.stdout]
        if broken.returncode == 0 or reason not in broken.stdout or failed != PROGRAMS:
            failures.append(f"{args} with TESSERA_TEST_FAIL_{tier}=1: expected every program to fail "
                            f"naming {reason}; exit {broken.returncode}, failed {failed}:\n{broken.stdout}")
        else:
            print(f"ok: {args}: with TESSERA_TEST_FAIL_{tier}=1 all {len(PROGRAMS)} programs fail ({reason})")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
