#!/usr/bin/env python3
"""tools/ctest-failures.py: after a ctest run, prints the end of each failed or timed-out test's
output, and nothing of a passed or skipped one."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "ctest-failures.py")

TESTS = """
add_test(passes "sh" "-c" "echo fine")
add_test(fails "sh" "-c" "for i in 1 2 3 4 5; do echo line$i; done; echo the reason; exit 1")
add_test(times_out "sh" "-c" "echo slow; sleep 5")
set_tests_properties(times_out PROPERTIES TIMEOUT 1)
add_test(skips "sh" "-c" "echo skipping; exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
"""


class CtestFailures(unittest.TestCase):
    def test_the_failed_tests_outputs_come_out_last_lines_first_cut(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "CTestTestfile.cmake"), "w") as f:
                f.write(TESTS)
            ctest = subprocess.run(["ctest"], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.assertNotEqual(ctest.returncode, 0)
            p = subprocess.run([sys.executable, TOOL, d, "--lines", "2"], stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("==> failed: fails (last 2 of", p.stdout)
        self.assertIn("    line5\n    the reason\n", p.stdout)
        self.assertNotIn("line4", p.stdout)
        self.assertIn("==> failed: times_out", p.stdout)
        self.assertNotIn("passes", p.stdout)
        self.assertNotIn("skipping", p.stdout)

    def test_a_build_without_a_log_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, TOOL, d], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot read", p.stderr)


if __name__ == "__main__":
    unittest.main()
