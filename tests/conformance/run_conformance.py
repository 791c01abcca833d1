#!/usr/bin/env python3
"""Conformance runner for Tessera VM.

Each test is a `.tsb` file with its expectations beside it:

  NAME.out    exact expected stdout (bytes). Absent: stdout must be empty.
  NAME.code   expected exit status (default 0).
  NAME.err    expected stderr lines. The first line is compared exactly, and so is every
              further line given (as a prefix of the actual stderr, so that a syntax error may
              be followed by the optional source line and caret). If the expected lines contain
              a traceback line (`  at ...`), the traceback must be complete: the actual stderr
              must have exactly the given lines, unless the last expected line is `...`.
  NAME.errre  a Python regular expression the first stderr line must match in full
              (for messages the spec leaves open, e.g. the wording of a syntax error).
  Absent .err/.errre with expected exit 0: stderr must be empty.

Directives in the first lines of the `.tsb` (comment lines, so the program stays valid):
  # @args: A B C        script arguments, passed after `--`
  # @argv: dis {file}    the whole command line after the VM path ({file} = test path);
                         --vm-args are not added
  # @stdout: any | nonempty   do not compare stdout (nonempty: it must not be empty)
  # @timeout: SECONDS

Convention for paths: every test runs with the working directory set to this directory
(tests/conformance) and is passed to the VM by its path relative to it, e.g.
`s1_running/traceback.tsb`; that is the FILE that `.err` files name.

Whatever the expectations, a test fails if the VM dies from a signal or a sanitizer reports
an error: the spec says no input may crash the VM. A run in which LeakSanitizer's own tracer
crashed at exit is run once more (tests/lsan_tracer_crash.py says why).

--expect-jit (the modes that pin a tier or set the hot thresholds low): the same output would
come from a JIT that compiles nothing, so the run also writes `--metrics` and the test fails
  - when a backend could not compile a trace (abort reasons CompileFailedT1, CompileFailedT2,
    TierUpFailed): a trace the recorder finished must compile in the tier the mode pins;
  - when traces were recorded but none was compiled, and none was still compiling when the run
    ended (with async=1 a short program may end before LLVM is done: that is not a failure).
A hot loop whose recordings all aborted (NYI, a trace too long, ...) has no trace to compile:
tests/runtime/abort_reasons_test.py judges those. Tests with @argv are not checked.
"""

import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(ROOT))
from lsan_tracer_crash import run_once_more_if_lsan_crashed  # noqa: E402

# Sanitizer reports. UBSan's "x.cpp:12:3: runtime error:" must not be confused with the
# VM's own "FILE:LINE: runtime error:", hence the source-extension requirement.
SANITIZER_RE = re.compile(
    rb"(==\d+==ERROR: (Address|Leak|Memory|Thread)Sanitizer"
    rb"|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer"
    rb"|\.(cpp|cc|cxx|h|hpp|c):\d+:\d+: runtime error:)")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_text_if(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "backslashreplace")


def directives(src):
    """Parses `# @key: value` lines at the top of a test (before the first non-comment line)."""
    d = {}
    for raw in src.split(b"\n")[:20]:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*@(\w+):\s*(.*)$", line)
        if m:
            d[m.group(1)] = m.group(2).strip()
    return d


def show(b):
    return b.decode("utf-8", "backslashreplace")


def diff(expected, actual, what):
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile="expected " + what, tofile="actual " + what)
    out = "".join(l if l.endswith("\n") else l + "\n\\ no newline at end\n" for l in lines)
    return out


# Abort reasons (tracer/abort_reasons.def) that say a backend failed, not the recorder.
COMPILE_FAILURES = ("CompileFailedT1", "CompileFailedT2", "TierUpFailed")


def jit_problems(metrics_path):
    """What --expect-jit finds wrong in a run's --metrics lines (see the module's doc)."""
    try:
        with open(metrics_path, encoding="utf-8") as f:
            runs = [r for r in map(json.loads, f) if r.get("record") == "run"]
    except (OSError, ValueError) as e:
        return ["--expect-jit: cannot read the --metrics file: %s" % e]
    if not runs or "traces" not in runs[-1]:
        return ["--expect-jit: the run wrote no --metrics run line with traces (is the JIT on?)"]
    r = runs[-1]
    t, aborts = r["traces"], r.get("aborts", {})
    tier = {0: "auto", 1: "T1", 2: "T2"}.get(r["params"].get("tier"), "?")
    problems = ["--expect-jit (tier %s): %d trace(s) not compiled: %s" % (tier, aborts[k], k)
                for k in COMPILE_FAILURES if aborts.get(k)]
    if not problems and t["recorded"] > 0 and t["compiled"] == 0 and t["pending"] == 0:
        problems.append("--expect-jit (tier %s): %d trace(s) recorded, none compiled (traces: %s; aborts: %s)"
                        % (tier, t["recorded"], json.dumps(t), json.dumps(aborts)))
    return problems


def test_rel_path(path):
    """Path as passed to the VM: relative to ROOT when the test lives below it."""
    ap = os.path.abspath(path)
    rel = os.path.relpath(ap, ROOT)
    return ap if rel.startswith("..") else rel


def run_test(path, vm, vm_args, default_timeout, expect_jit=False):
    """Runs one test. Returns (ok, report)."""
    if not expect_jit:
        return run_checked(path, vm, vm_args, default_timeout, None)
    fd, metrics = tempfile.mkstemp(prefix="tessera-conformance-", suffix=".jsonl")
    os.close(fd)
    try:
        return run_checked(path, vm, vm_args, default_timeout, metrics)
    finally:
        os.unlink(metrics)


def run_checked(path, vm, vm_args, default_timeout, metrics):
    """run_test's work; `metrics`: the --metrics file for --expect-jit, or None."""
    base = os.path.splitext(path)[0]
    src = read_bytes(path)
    d = directives(src)
    rel = test_rel_path(path)
    if "argv" in d:
        argv = [a.replace("{file}", rel) for a in shlex.split(d["argv"])]
        cmd = [vm] + argv
        metrics = None
    else:
        cmd = [vm, "run", rel] + list(vm_args)
        if metrics:
            cmd += ["--metrics", metrics]
        if "args" in d:
            cmd += ["--"] + shlex.split(d["args"])
    timeout = float(d.get("timeout", default_timeout))
    env = None

    try:
        p = run_once_more_if_lsan_crashed(cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out after %gs: %s" % (timeout, shlex.join(cmd))
    except OSError as e:
        return False, "cannot run %s: %s" % (shlex.join(cmd), e)

    problems = []
    if p.returncode < 0:
        problems.append("killed by signal %d (the VM must never crash)" % -p.returncode)
    if SANITIZER_RE.search(p.stderr):
        problems.append("sanitizer report in stderr")

    code_file = base + ".code"
    want_code = int(read_text_if(code_file).strip()) if os.path.exists(code_file) else 0
    if p.returncode != want_code:
        problems.append("exit code %d, expected %d" % (p.returncode, want_code))

    mode = d.get("stdout", "exact")
    if mode == "any":
        pass
    elif mode == "nonempty":
        if not p.stdout:
            problems.append("stdout is empty")
    else:
        want_out = read_bytes(base + ".out") if os.path.exists(base + ".out") else b""
        if p.stdout != want_out:
            problems.append("stdout differs:\n" + diff(show(want_out), show(p.stdout), "stdout"))

    actual_err_lines = show(p.stderr).splitlines()
    want_err = read_text_if(base + ".err")
    want_errre = read_text_if(base + ".errre")
    if want_err is not None:
        exp = want_err.splitlines()
        open_ended = bool(exp) and exp[-1] == "..."
        if open_ended:
            exp = exp[:-1]
        complete = any(l.startswith("  at ") for l in exp) and not open_ended
        got = actual_err_lines if complete else actual_err_lines[:len(exp)]
        if got != exp:
            problems.append("stderr differs:\n" + diff("\n".join(exp) + "\n",
                                                       "\n".join(got) + "\n", "stderr"))
    if want_errre is not None:
        pattern = want_errre.strip("\n")
        first = actual_err_lines[0] if actual_err_lines else ""
        if not re.fullmatch(pattern, first):
            problems.append("first stderr line %r does not match /%s/" % (first, pattern))
    if want_err is None and want_errre is None and want_code == 0 and p.stderr:
        problems.append("unexpected stderr:\n" + show(p.stderr)[:4000])

    if metrics:
        problems += jit_problems(metrics)

    if problems:
        report = "command: %s (cwd %s)\n" % (shlex.join(cmd), ROOT) + "\n".join(problems)
        if p.stderr and not any(x.startswith("stderr differs") for x in problems):
            report += "\nstderr was:\n" + "\n".join(actual_err_lines[:30])
        return False, report
    return True, ""


def collect(paths, flt):
    tests = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, _, files in os.walk(p):
                tests += [os.path.join(dirpath, f) for f in files if f.endswith(".tsb")]
        elif p.endswith(".tsb") and os.path.exists(p):
            tests.append(p)
        else:
            print("warning: %s is neither a directory nor a .tsb file" % p, file=sys.stderr)
    tests = sorted(set(os.path.abspath(t) for t in tests))
    if flt:
        tests = [t for t in tests if flt in test_rel_path(t)]
    return tests


def main():
    ap = argparse.ArgumentParser(description="Run the Tessera VM conformance suite.")
    ap.add_argument("--vm", required=True, help="path to the tessera-vm binary")
    ap.add_argument("--vm-args", default="",
                    help="extra options placed after FILE on `tessera-vm run FILE`, as one "
                         "shell-quoted string: --vm-args='--jit-param hotloop=1'")
    ap.add_argument("--filter", help="only tests whose path contains this substring")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per test (default 60)")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="tests run at once (default 1); the report keeps the tests' order")
    ap.add_argument("--expect-jit", action="store_true",
                    help="also fail a test whose recorded traces did not compile (see above)")
    ap.add_argument("--one", help="run a single test (CTest mode)")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list passing tests")
    ap.add_argument("paths", nargs="*", help="test directories or .tsb files (default: all)")
    a = ap.parse_args()

    vm = os.path.abspath(a.vm)
    if not os.path.exists(vm):
        print("error: VM binary %s does not exist" % vm, file=sys.stderr)
        return 2

    if a.one:
        tests = [os.path.abspath(a.one)]
    else:
        tests = collect(a.paths or [ROOT], a.filter)
    if not tests:
        print("error: no tests found", file=sys.stderr)
        return 2

    if a.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    vm_args = shlex.split(a.vm_args)
    # Each test is its own VM process, so threads only wait on them; map() keeps the order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        outcomes = pool.map(lambda t: run_test(t, vm, vm_args, a.timeout, a.expect_jit), tests)
        return report_outcomes(tests, outcomes, a.verbose or a.one)


def report_outcomes(tests, outcomes, verbose):
    passed = failed = 0
    for t, (ok, report) in zip(tests, outcomes):
        if ok:
            passed += 1
            if verbose:
                print("PASS %s" % test_rel_path(t))
        else:
            failed += 1
            print("FAIL %s" % test_rel_path(t))
            print("    " + report.replace("\n", "\n    "))
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
