#!/usr/bin/env python3
"""Prints what each failed test of the last ctest run in a build directory printed, from
Testing/Temporary/LastTest.log, the last LINES lines of each.

CI keeps only the end of a run's output, where ctest's own summary names the failed tests but
not why they failed (--output-on-failure printed that much earlier, among thousands of lines):
tools/test.sh calls this after a failed ctest so that the reasons come last.

    ctest-failures.py BUILD_DIR [--lines N]
"""

import argparse
import os
import re
import sys


def failed_sections(log):
    """(name, output lines) of each test in a LastTest.log whose run did not pass."""
    out = []
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", log):
        m = re.match(r"\d+/\d+ Testing: (\S+)", block)
        if not m or "\nTest Passed." in block:
            continue
        body = block.split("\nOutput:\n", 1)[-1]
        body = body.split("\n<end of output>", 1)[0]
        out.append((m.group(1), body.strip("-\n").splitlines()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--lines", type=int, default=40, help="lines of each test's output (default 40)")
    a = ap.parse_args()
    path = os.path.join(a.build_dir, "Testing", "Temporary", "LastTest.log")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            log = f.read()
    except OSError as e:
        print("ctest-failures: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 1
    for name, lines in failed_sections(log):
        print("==> failed: %s (last %d of %d lines of its output)" % (name, min(a.lines, len(lines)), len(lines)))
        for line in lines[-a.lines:]:
            print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
