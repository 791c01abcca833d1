#!/usr/bin/env python3
"""The differential fuzzer's timeouts (diff_fuzz.run_mode): a run past the timeout has its
backtraces taken and is run once more with six times the time; only a second timeout fails.

A fake VM stands in for tessera-vm: it prints "hello" and, on its first HANGS runs (counted in
a file), sleeps far past the (shortened) timeout first."""

import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import diff_fuzz  # noqa: E402
from fake_vm import fake_vm_runs, write_fake_vm  # noqa: E402

FAKE_VM_BODY = r'''if runs < int(os.environ.get("HANGS", "0")):
    time.sleep(30)
print("hello")
'''


class FuzzerTimeouts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.vm = os.path.join(self.dir.name, "fake-vm")
        write_fake_vm(self.vm, FAKE_VM_BODY)
        self.counter = os.path.join(self.dir.name, "runs")
        self.timeout = mock.patch.object(diff_fuzz, "TIMEOUT", 0.5)
        self.timeout.start()

    def tearDown(self):
        self.timeout.stop()
        self.dir.cleanup()

    def run_mode(self, hangs):
        env = dict(os.environ, FAKE_VM_COUNTER=self.counter, HANGS=str(hangs))
        with mock.patch.dict(os.environ, env):
            return diff_fuzz.run_mode(self.vm, "prog.tsb", "eager", [])

    def runs(self):
        return fake_vm_runs(self.counter)

    def test_a_run_in_time_runs_once(self):
        r = self.run_mode(0)
        self.assertEqual((r.timed_out, r.rc, r.out, r.stacks, self.runs()), (False, 0, b"hello\n", "", 1))

    def test_one_timeout_is_run_again_and_keeps_its_backtraces(self):
        r = self.run_mode(1)
        self.assertEqual((r.timed_out, r.rc, r.out, self.runs()), (False, 0, b"hello\n", 2))
        self.assertNotEqual(r.stacks, "")  # gdb's threads, or why there are none

    def test_a_second_timeout_fails_with_both_runs_backtraces(self):
        r = self.run_mode(2)
        self.assertTrue(r.timed_out)
        self.assertEqual((r.problem(), self.runs()), ("timeout", 2))
        self.assertIn("first run", r.stacks)
        self.assertIn("second run", r.stacks)


if __name__ == "__main__":
    unittest.main()
