"""How the harness times the runtimes it compares (run_bench.measure_interleaved): in rounds that run
every runtime once, so that a slow spell of the machine falls on all of them; the median of each
runtime's runs; a runtime that fails, or prints other than it did, is not run again and is reported
so. The commands here are the shell's, which write down the order they ran in."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "harness"))
import run_bench  # noqa: E402


class MeasureInterleaved(unittest.TestCase):
    def setUp(self):
        fd, self.log = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.remove(self.log)

    def cmd(self, name, script="echo out"):
        return (["sh", "-c", f"echo {name} >> {self.log}; {script}"], None)

    def order(self):
        with open(self.log) as f:
            return f.read().split()

    def test_each_round_runs_every_runtime_once(self):
        r = run_bench.measure_interleaved({"a": self.cmd("a"), "b": self.cmd("b")}, 3, 10)
        self.assertEqual(self.order(), ["a", "b", "a", "b", "a", "b"])
        for k in ("a", "b"):
            self.assertEqual(r[k].status, "ok")
            self.assertEqual(r[k].output, "out")
            self.assertGreater(r[k].seconds, 0)

    def test_a_failure_stops_that_runtime_only(self):
        r = run_bench.measure_interleaved({"bad": self.cmd("bad", "exit 3"), "good": self.cmd("good")}, 3, 10)
        self.assertEqual(self.order(), ["bad", "good", "good", "good"])
        self.assertEqual(r["bad"].status, "crash")
        self.assertIn("exit 3", r["bad"].detail)
        self.assertEqual(r["good"].status, "ok")

    def test_output_that_changes_between_runs_is_a_failure(self):
        counter = self.log + ".n"
        try:
            r = run_bench.measure_interleaved({"x": self.cmd("x", f"echo n >> {counter}; wc -l < {counter}")}, 3, 10)
        finally:
            if os.path.exists(counter):
                os.remove(counter)
        self.assertEqual(r["x"].status, "crash")
        self.assertEqual(r["x"].detail, "output changed between runs")
        self.assertEqual(self.order(), ["x", "x"])


if __name__ == "__main__":
    unittest.main()
