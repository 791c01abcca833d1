#!/usr/bin/env python3
"""tessera-vm against what a hostile (or unlucky) user gives it, end to end:

  - a source that cannot be read (/proc/self/mem) is an error, exit 2; one
    past the size limit (/dev/zero) too, after reading no more than the
    limit; a FIFO is read like a file;
  - a syntax error at the end of a 10 MB line echoes a window around the
    caret, not the line;
  - output that cannot be written (/dev/full, a closed stdout) is reported,
    exit 1;
  - --dump into /proc/sys, a regular file or a path under a file is an error
    before the run (exit 2); a 240-character script name still gets every
    dump file;
  - an unknown command and a bad --max-depth say what is wrong;
  - 300 000 lists that contain themselves are freed by the cycle collector
    while the loop runs (--stats counts them);
  - OpenBLAS is loaded by the first matrix product, not at start, and one
    that cannot be loaded is an error naming it;
  - a runaway allocation (a string doubled, list(n, x) within its size
    limit) ends in "out of memory" naming the --max-memory
    limit (not in sanitizer builds, where no limit is set).

Usage: hostile_input_test.py --vm build/tessera-vm [--sanitized]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from cli_checks import check, finish, run, vm_args

def main():
    args = vm_args(sanitized=True)
    vm = args.vm
    work = tempfile.mkdtemp(prefix="tessera-hostile-")
    try:
        hello = os.path.join(work, "hello.tsb")
        with open(hello, "w") as f:
            f.write('print("hello")\n')

        rc, _, err = run(vm, "run", "/proc/self/mem")
        check(rc == 2 and "cannot read '/proc/self/mem'" in err, "an unreadable source is exit 2", f"rc={rc} {err}")

        rc, _, err = run(vm, "run", "/dev/zero")
        check(rc == 2 and "more than the limit of 64 MiB" in err and len(err) < 500,
              "/dev/zero is refused at the size limit", f"rc={rc} {err[:300]}")

        fifo = os.path.join(work, "fifo.tsb")
        os.mkfifo(fifo)

        def feed():
            with open(fifo, "w") as f:
                f.write('print(6 * 7)\n')
        writer = threading.Thread(target=feed)
        writer.start()
        rc, out, err = run(vm, "run", fifo, timeout=60)
        writer.join()
        check(rc == 0 and out == "42\n", "a FIFO is read like a file", f"rc={rc} {out} {err}")

        long_line = os.path.join(work, "long_line.tsb")
        with open(long_line, "w") as f:
            f.write("let x = " + "1 + " * 2_500_000 + "\n")
        rc, _, err = run(vm, "run", long_line)
        check(rc == 2 and "syntax error" in err and len(err) < 1000,
              "a syntax error at the end of a 10 MB line echoes a window", f"rc={rc} {len(err)} bytes: {err[:400]}")
        check("..." in err and err.rstrip().endswith("^"), "the window is marked and the caret still points", err[:400])

        with open("/dev/full", "w") as full:
            rc, _, err = run(vm, "run", hello, stdout=full)
        check(rc == 1 and "error writing to standard output" in err, "output to /dev/full is exit 1", f"rc={rc} {err}")
        p = subprocess.run(f"'{vm}' run '{hello}' >&-", shell=True, stderr=subprocess.PIPE)
        err = p.stderr.decode()
        check(p.returncode == 1 and "error writing to standard output: it is closed" in err,
              "a closed stdout is exit 1", f"rc={p.returncode} {err}")

        for bad in ["/proc/sys", hello, os.path.join(hello, "sub")]:
            rc, out, err = run(vm, "run", hello, "--dump", bad)
            check(rc == 2 and out == "" and "--dump" in err, f"--dump {bad} is an error before the run", f"rc={rc} {out} {err}")

        long_name = os.path.join(work, "x" * 236 + ".tsb")
        with open(long_name, "w") as f:
            f.write("let s = 0\nfor i in range(2000) { s += i }\nprint(s)\n")
        dump = os.path.join(work, "dump")
        rc, out, err = run(vm, "run", long_name, "--dump", dump, "--jit-param", "hotloop=5", "--jit-param", "async=0")
        names = sorted(os.listdir(dump)) if os.path.isdir(dump) else []
        irs = [n for n in names if n.endswith(".ir")]
        check(rc == 0 and out == "1999000\n" and len(irs) >= 2 and "events.jsonl" in names and "index.html" in names,
              "a 240-character script name gets every dump file", f"rc={rc} {err} {names}")
        check(all(len(n) < 255 for n in names), "dump file names stay under NAME_MAX", str([len(n) for n in names]))

        rc, _, err = run(vm, "frobnicate", hello)
        check(rc == 2 and "unknown command 'frobnicate'" in err, "an unknown command is named", err)
        rc, _, err = run(vm, "run", "--max-depth", "abc", hello)
        check(rc == 2 and "'abc' is not an integer" in err, "--max-depth abc says it is not an integer", err)
        rc, _, err = run(vm, "run", "--max-memory", "12Q", hello)
        check(rc == 2 and "is not a size" in err, "--max-memory 12Q says it is not a size", err)

        cycles = os.path.join(work, "cycles.tsb")
        with open(cycles, "w") as f:
            f.write("for i in range(300000) {\n  let l = [i]\n  push(l, l)\n}\nprint(\"done\")\n")
        rc, out, err = run(vm, "run", cycles, "--stats")
        m = re.search(r"cycle collector: (\d+) collections, (\d+) lists in cycles freed", err)
        check(rc == 0 and out == "done\n" and m and int(m.group(1)) >= 10 and int(m.group(2)) >= 280000,
              "lists that contain themselves are freed as the loop goes", err[-500:])

        # OpenBLAS is loaded by the first f32 matrix product, not at start; one that
        # cannot be loaded is an error naming it.
        rc, _, err = run(vm, "run", hello, env={"LD_DEBUG": "files"})
        check(rc == 0 and "libopenblas" not in err, "a run without a matrix product does not load OpenBLAS",
              "\n".join(l for l in err.splitlines() if "openblas" in l)[:500])
        product = os.path.join(work, "product.tsb")
        with open(product, "w") as f:
            f.write("print(ones([2, 3], f32) @ ones([3, 2], f32))\n")
        rc, out, err = run(vm, "run", product)
        check(rc == 0 and out.startswith("tensor(shape=[2, 2], dtype=f32) [[3, 3], [3, 3]]"),
              "a matrix product loads OpenBLAS", f"rc={rc} {out} {err}")
        rc, out, err = run(vm, "run", product, env={"TESSERA_OPENBLAS_LIBRARY": "/nonexistent/libopenblas.so"})
        check(rc == 1 and "OpenBLAS could not be loaded" in err and "/nonexistent/libopenblas.so" in err,
              "a missing OpenBLAS is a runtime error naming it", f"rc={rc} {out} {err}")

        if not args.sanitized:
            runaway = os.path.join(work, "runaway.tsb")
            with open(runaway, "w") as f:
                f.write('let s = "x"\nwhile true { s = s + s }\n')
            rc, _, err = run(vm, "run", runaway, "--max-memory", "512M", timeout=300)
            check(rc == 1 and "out of memory (the memory limit is 512 MiB; see --max-memory)" in err,
                  "a runaway allocation stops at the --max-memory limit", f"rc={rc} {err}")
            # One rule for every allocation: list(n, x) within its 10^8 limit but over the memory
            # limit is out of memory too, not a size said to be too large.
            big_list = os.path.join(work, "big_list.tsb")
            with open(big_list, "w") as f:
                f.write("let l = list(20000000, 0)\nprint(len(l))\n")
            rc, _, err = run(vm, "run", big_list, "--max-memory", "256M", timeout=300)
            check(rc == 1 and "out of memory (the memory limit is 256 MiB; see --max-memory)" in err
                  and "size too large" not in err,
                  "list(20000000, 0) under --max-memory 256M is out of memory", f"rc={rc} {err}")
        else:
            print("skipped: --max-memory (no limit is set in sanitizer builds)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(finish())


if __name__ == "__main__":
    main()
