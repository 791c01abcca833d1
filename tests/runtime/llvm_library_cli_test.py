#!/usr/bin/env python3
"""tessera-vm loads LLVM only when a program needs it (codegen/llvm_library/llvm_library.h,
docs/jit.md "Start-up"):

  - a one-line script runs without libtessera-llvm.so loaded (LD_DEBUG=files lists what the
    loader opened);
  - a hot loop at tier=2 loads it, and its trace runs as T2 code;
  - a copy of tessera-vm outside the build tree still finds the build tree's library;
  - without a usable library (TESSERA_LLVM_LIBRARY at a missing file, or at a file that is not
    the library) the program still runs to the same output and exit 0: one warning line on
    stderr says what was tried and what to set; --stats says why T2 did not compile, and a
    loop whose every compile fails is blacklisted;
  - in the sanitizer build (--sanitized), the library's dynamic TLS is not handed to
    LeakSanitizer (tessera-vm's built-in intercept_tls_get_addr=0, which any ASAN_OPTIONS keeps
    unless they name it): GCC 12's runtime misreads such a block now and then, and LSan's tracer
    crashes at exit (google/sanitizers#1322). With verbosity=2 the runtime logs each
    __tls_get_addr it intercepts: none by default, some when the flag is turned back on.
Usage: llvm_library_cli_test.py --vm build/tessera-vm [--sanitized]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

from cli_checks import check, finish, run

LIBRARY = "libtessera-llvm.so"
HOT = "let s = 0\nfor i in range(20000) { s = s + i % 7 }\nprint(s)\n"
HOT_OUT = f"{sum(i % 7 for i in range(20000))}\n"
# Long enough for `blacklist` (11) failures with their back-off (each wait twice the last).
LONG = "let s = 0\nfor i in range(300000) { s = s + i % 7 }\nprint(s)\n"
LONG_OUT = f"{sum(i % 7 for i in range(300000))}\n"
T2 = ["--jit-param", "tier=2", "--jit-param", "async=0"]


def loaded(stderr):
    """Whether the loader's LD_DEBUG=files trace shows the LLVM library opened."""
    return any(LIBRARY in line and "file=" in line for line in stderr.splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    ap.add_argument("--sanitized", action="store_true", help="--vm is the ASan build's")
    args = ap.parse_args()
    vm = os.path.abspath(args.vm)
    with tempfile.TemporaryDirectory(prefix="tessera-llvm-library-") as d:
        one = os.path.join(d, "one.tsb")
        with open(one, "w") as f:
            f.write("print(1)\n")
        hot = os.path.join(d, "hot.tsb")
        with open(hot, "w") as f:
            f.write(HOT)
        long_loop = os.path.join(d, "long.tsb")
        with open(long_loop, "w") as f:
            f.write(LONG)

        rc, out, err = run(vm, "run", one, env={"LD_DEBUG": "files"})
        check(rc == 0 and out == "1\n", "a one-line script runs", f"rc={rc} out={out!r}")
        check(not loaded(err), f"a one-line script does not load {LIBRARY}")

        rc, out, err = run(vm, "run", hot, *T2, "--stats", env={"LD_DEBUG": "files"})
        check(rc == 0 and out == HOT_OUT, "a hot loop at tier=2 runs", f"rc={rc} out={out!r}")
        check(loaded(err), f"a hot loop at tier=2 loads {LIBRARY}", err[-2000:])
        check("T2 (llvm): 1 traces compiled" in err, "its trace is compiled by T2", err[-2000:])

        copy = os.path.join(d, "tessera-vm")
        shutil.copy2(vm, copy)
        rc, out, err = run(copy, "run", hot, *T2, "--stats")
        check(rc == 0 and out == HOT_OUT and "T2 (llvm): 1 traces compiled" in err,
              "a copy of tessera-vm elsewhere finds the build tree's library", f"rc={rc} {err[-1500:]}")

        for what, path in (("a missing file", os.path.join(d, "missing.so")), ("a file that is not the library", hot)):
            rc, out, err = run(vm, "run", hot, *T2, "--stats", env={"TESSERA_LLVM_LIBRARY": path})
            check(rc == 0 and out == HOT_OUT, f"with TESSERA_LLVM_LIBRARY at {what} the program runs", f"rc={rc} {err}")
            warnings = [line for line in err.splitlines() if line.startswith("tessera-vm: warning:")]
            check(len(warnings) == 1 and path in warnings[0] and "TESSERA_LLVM_LIBRARY" in warnings[0],
                  f"with TESSERA_LLVM_LIBRARY at {what}: one warning names the path and the variable", err[-2000:])
            check("could not be loaded" in err.split("tessera-vm stats", 1)[-1],
                  f"with TESSERA_LLVM_LIBRARY at {what}: --stats says why T2 did not compile", err[-2000:])
            # Each recording's T2 compile fails: the loop is backed off and blacklisted like a
            # loop whose recordings abort, not recorded again every hotloop iterations.
            rc, out, err = run(vm, "run", long_loop, *T2, "--stats", env={"TESSERA_LLVM_LIBRARY": path})
            check(rc == 0 and out == LONG_OUT and re.search(r" 1 loops? and 0 functions blacklisted", err),
                  f"with TESSERA_LLVM_LIBRARY at {what}: the loop whose compiles fail is blacklisted", err[-2000:])

        if args.sanitized:
            def intercepted(err):
                return sum(line.startswith("==") and "__tls_get_addr:" in line for line in err.splitlines())
            # No leak check in these two runs: with verbosity=2, LSan's tracer can stop a thread
            # that holds the log's lock and then wait for that lock itself.
            rc, out, err = run(vm, "run", hot, *T2, env={"ASAN_OPTIONS": "detect_leaks=0:verbosity=2"})
            check(rc == 0 and out == HOT_OUT and intercepted(err) == 0,
                  f"under ASan, {LIBRARY}'s dynamic TLS is not intercepted", f"rc={rc} {err[-1500:]}")
            rc, out, err = run(vm, "run", hot, *T2, env={"ASAN_OPTIONS": "detect_leaks=0:verbosity=2:intercept_tls_get_addr=1"})
            check(rc == 0 and out == HOT_OUT and intercepted(err) > 0,
                  "with intercept_tls_get_addr=1 it is (the check above can fail)", f"rc={rc} {err[-1500:]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
