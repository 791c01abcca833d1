#!/usr/bin/env python3
"""Every program of the conformance suite (the corpus of real programs in
tests/conformance/corpus/ among them) is recorded without an "NYI" abort.

Runs each program with --stats at the default thresholds and with every
threshold at 1 (so that every loop, function and exit is recorded, as the
conformance-hot mode does), reads the "aborted (REASON): N" lines, prints the
abort reasons that remain with their counts, and fails if any is one of the
reasons tracer/abort_reasons.def marks "NYI:" (a bytecode the recorder has no
case for), or one that says a backend failed (CompileFailedT1, CompileFailedT2,
TierUpFailed: a trace the recorder finished must compile), naming each
program and the backend's message. The other reasons are what cannot be
traced (an error raised while recording, a trace longer than maxrecord, ...),
listed for the reader.

Usage: abort_reasons_test.py --vm build/tessera-vm --source-dir . [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys

HOT = ["--jit-param", "hotloop=1", "--jit-param", "hotcall=1", "--jit-param", "hotexit=1"]
ABORT_LINE = re.compile(r"^\s+aborted \((.*)\): (\d+) \(last (.*)\)$")
# Reasons that fail the test wherever they occur: a backend could not compile a trace.
COMPILE_FAILURES = ("CompileFailedT1", "CompileFailedT2", "TierUpFailed")


def reason_messages(source_dir):
    """NAME -> the message --stats prints, from tracer/abort_reasons.def."""
    with open(os.path.join(source_dir, "tracer", "abort_reasons.def"), encoding="utf-8") as f:
        return dict(re.findall(r'^ABORT_REASON\((\w+),\s*"(.*)"\)', f.read(), re.M))


def directives(path):
    """The runner's directives that change the command line (@args, @argv)."""
    d = {}
    with open(path, "rb") as f:
        for raw in f.read(4096).decode("utf-8", "replace").splitlines():
            m = re.match(r"\s*#\s*@(\w+):\s*(.*)$", raw)
            if m:
                d[m.group(1)] = m.group(2).strip()
    return d


def run(vm, root, rel, mode_args):
    d = directives(os.path.join(root, rel))
    if "argv" in d:
        return []  # a test of the command line itself, not of a program
    cmd = [vm, "run", rel, "--stats"] + mode_args
    if "args" in d:
        cmd += ["--"] + shlex.split(d["args"])
    try:
        p = subprocess.run(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return [("(timed out)", 1, " ".join(cmd))]
    found = []
    for line in p.stderr.splitlines():
        m = ABORT_LINE.match(line)
        if m:
            found.append((m.group(1), int(m.group(2)), f"{shlex.join([rel] + mode_args)}: {m.group(3)}"))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    root = os.path.join(a.source_dir, "tests", "conformance")
    programs = sorted(os.path.relpath(os.path.join(d, f), root)
                      for d, _, files in os.walk(root) for f in files if f.endswith(".tsb"))
    if not programs:
        sys.exit(f"no programs under {root}")
    jobs = [(rel, mode) for rel in programs for mode in ([], HOT)]
    messages = reason_messages(a.source_dir)
    missing = [name for name in COMPILE_FAILURES if name not in messages]
    if missing:
        sys.exit(f"tracer/abort_reasons.def has no row {', '.join(missing)}")
    fatal = {messages[name]: name for name in COMPILE_FAILURES}
    counts = collections.Counter()
    example = {}
    compile_failures = []  # every program where a backend failed, not one example
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for found in pool.map(lambda j: run(os.path.abspath(a.vm), root, *j), jobs):
            for reason, n, where in found:
                counts[reason] += n
                example.setdefault(reason, where)
                if reason in fatal:
                    compile_failures.append(f"{fatal[reason]} x{n} in {where}")
    print(f"{len(programs)} programs, each at the default thresholds and with every threshold at 1")
    if not counts:
        print("no recording aborted")
    for reason, n in counts.most_common():
        print(f"  {n:6d}  {reason}    e.g. {example[reason]}")
    nyi = [r for r in counts if r.startswith("NYI") or r == "(timed out)"]
    if nyi:
        print("FAIL: NYI aborts remain (or a program timed out): " + "; ".join(nyi))
    if compile_failures:
        print("FAIL: a backend could not compile a trace:\n  " + "\n  ".join(compile_failures))
    if nyi or compile_failures:
        return 1
    print("ok: no NYI abort, every trace compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
