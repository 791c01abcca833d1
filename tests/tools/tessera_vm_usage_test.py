#!/usr/bin/env python3
"""tessera-vm's usage errors and help (tools/tessera-vm/main.cpp):

  - `tessera-vm --help` lists the commands, a line each, and points at
    `tessera-vm run --help` for run's options;
  - an unknown option, before or after the command, is named with the
    nearest known one (`--jit-params` -> `--jit-param`), or without a
    suggestion when nothing is near; exit 2, nothing run;
  - `--dump` into a path that cannot be made says which part is in the way.

Usage: tessera_vm_usage_test.py --vm build/tessera-vm
"""
import argparse
import os
import subprocess
import sys
import tempfile

failures = []


def run(vm, *args):
    p = subprocess.run([vm, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("  " + detail.replace("\n", "\n  "))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    vm = ap.parse_args().vm

    rc, out, err = run(vm, "--help")
    lines = out.splitlines()
    check(rc == 0 and any(l.split()[:1] == ["run"] and "Run a script" in l for l in lines)
          and any(l.split()[:1] == ["dis"] and "bytecode" in l for l in lines),
          "--help lists run and dis with a line each", out)
    check("tessera-vm run --help" in out, "--help says where run's options are", out)

    with tempfile.TemporaryDirectory() as work:
        hello = os.path.join(work, "hello.tsb")
        with open(hello, "w") as f:
            f.write('print("ran")\n')

        cases = [
            (["run", "--jit-params", "tier=1", hello], "tessera-vm run: unknown option '--jit-params' "
             "(did you mean '--jit-param'?); see tessera-vm run --help"),
            (["run", hello, "--stat"], "tessera-vm run: unknown option '--stat' (did you mean '--stats'?); "
             "see tessera-vm run --help"),
            (["run", hello, "--dumpp=x"], "tessera-vm run: unknown option '--dumpp' (did you mean '--dump'?); "
             "see tessera-vm run --help"),
            (["run", hello, "--zzzzzzzz"], "tessera-vm run: unknown option '--zzzzzzzz'; see tessera-vm run --help"),
            (["dis", "--jit=off", hello], "tessera-vm dis: unknown option '--jit'; see tessera-vm dis --help"),
            (["--verison"], "tessera-vm: unknown option '--verison' (did you mean '--version'?); "
             "options of a command go after it: tessera-vm run --help"),
        ]
        for args, want in cases:
            rc, out, err = run(vm, *args)
            check(rc == 2 and out == "" and err.strip() == want, "tessera-vm " + " ".join(
                os.path.basename(a) for a in args) + ": " + want, f"rc={rc}\nstdout={out!r}\nstderr={err!r}")

        blocker = os.path.join(work, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        target = os.path.join(blocker, "dump")
        rc, out, err = run(vm, "run", "--dump", target, hello)
        check(rc == 2 and out == "" and err.strip() == f"tessera-vm: --dump {target}: cannot make this directory: "
              f"{blocker} is a file, not a directory", "--dump under a file names the file in the way", err)
        if os.geteuid() != 0:
            locked = os.path.join(work, "locked")
            os.mkdir(locked, 0o555)
            rc, out, err = run(vm, "run", "--dump", os.path.join(locked, "d"), hello)
            check(rc == 2 and f"no permission to make a directory in {locked}" in err,
                  "--dump in a directory without write permission says so", err)
        else:
            print("skip: the permission case (root may write anywhere)")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
