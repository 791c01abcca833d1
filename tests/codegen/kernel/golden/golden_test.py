#!/usr/bin/env python3
"""One golden-text test: runs kernel_golden for each `// RUN:` line of FILE and checks what it
prints against FILE's check lines (filecheck.py).

  // RUN: STAGE [OPTION...] [--check-prefix=PREFIX]

STAGE and OPTIONs are kernel_golden's (kir, cuda, llvm; tile=N, flat, k3=..., lanes=N,
threads=N); PREFIX (default CHECK) names the check lines for this RUN, so that one file's
IR is checked through several stages.

Usage: golden_test.py --tool build/tests/codegen/kernel_golden FILE
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from filecheck import CheckError, check, read_checks  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("file")
    a = ap.parse_args()
    with open(a.file, encoding="utf-8") as f:
        text = f.read()
    name = os.path.basename(a.file)
    runs = [shlex.split(m.group(1)) for m in re.finditer(r"^//\s*RUN:(.*)$", text, re.M)]
    if not runs:
        print(f"FAIL: {name} has no RUN: line")
        return 1
    failed = 0
    for args in runs:
        prefix = "CHECK"
        for arg in [x for x in args if x.startswith("--check-prefix=")]:
            prefix = arg.split("=", 1)[1]
            args.remove(arg)
        cmd = [a.tool] + args + [a.file]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            print(f"FAIL: {shlex.join(cmd)}: exit {p.returncode}\n{p.stderr}")
            failed += 1
            continue
        try:
            check(p.stdout, read_checks(text, name, prefix))
            print(f"ok: {' '.join(args)} ({prefix})")
        except CheckError as e:
            print(f"FAIL: {shlex.join(cmd)} ({prefix}): {e}\n--- output ---\n{p.stdout[:20000]}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
