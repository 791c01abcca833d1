#!/usr/bin/env python3
"""tessera-vm run ends without waiting for a background LLVM compile (runtime/
compile_worker.h, CompileWorker::abandon) and still ends well:

  - a script that ends while LLVM compiles its loop's trace (tier=2: every
    trace goes to the compile thread; t2delay=3000: the thread waits 3 s
    before each compile, so that it is still at it when the script ends)
    prints all its output and exits 0, run after run, and --stats says the
    compile was not waited for (sanitizer builds wait, and say nothing);
  - with --dump (events to finish) the compile is waited for, and the dump
    is whole.

Usage: exit_cli_test.py --vm build/tessera-vm [--sanitized]
"""
import os
import shutil
import sys
import tempfile

from cli_checks import check, finish, run, vm_args

SCRIPT = """fn work(n) {
  let s = 0
  for i in range(n) { s += i * i % 7 + i // 3 }
  return s
}
print(work(4000))
let words = []
for i in range(300) { push(words, str(i % 17)) }
print(len(words), words[299])
# A while for the compile thread to take the first trace up (its 3 s wait).
let t = clock()
let spins = 0
while clock() - t < 0.3 { spins += 1 }
print("done")
"""


def main():
    args = vm_args(sanitized=True)
    vm = args.vm
    work = tempfile.mkdtemp(prefix="tessera-exit-")
    try:
        prog = os.path.join(work, "ends_while_compiling.tsb")
        with open(prog, "w") as f:
            f.write(SCRIPT)
        rc, want, err = run(vm, "run", "--jit=off", prog)
        check(rc == 0 and want.endswith("done\n"), "the interpreter's output", err)
        slow = ["--jit-param", "tier=2", "--jit-param", "t2delay=3000"]
        for k in range(3):
            rc, out, err = run(vm, "run", "--stats", *slow, prog)
            check(rc == 0, f"run {k}: exit status 0", f"rc={rc} {err[-800:]}")
            check(out == want, f"run {k}: the whole output", out[-400:])
            check("traces:" in err, f"run {k}: the stats", err[-400:])
            said = "was not waited for" in err
            if args.sanitized:
                check(not said, f"run {k}: a sanitizer build waits for the compile", err[-400:])
            else:
                check(said, f"run {k}: the compile in progress was not waited for", err[-400:])
        dump = os.path.join(work, "dump")
        rc, out, err = run(vm, "run", "--jit-param", "tier=2", "--dump", dump, prog)
        check(rc == 0 and out == want, "--dump: exit 0 and the whole output", err[-400:])
        check(os.path.isfile(os.path.join(dump, "index.html")) and os.path.isfile(os.path.join(dump, "events.jsonl")),
              "--dump: the page and the events are written", str(os.listdir(dump) if os.path.isdir(dump) else []))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
