#!/usr/bin/env python3
"""The test drivers' handling of LeakSanitizer's tracer crash (lsan_tracer_crash.py): the
conformance runner and the fuzzer's run_vm run a crashed process once more, and only once.

A fake VM stands in for a sanitizer build: it prints a script's expected output and, on its
first CRASHES runs (counted in a file), LSan's fatal-error lines with exit status 23."""

import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "fuzz"))
from lsan_tracer_crash import lsan_tracer_crashed, run_once_more_if_lsan_crashed  # noqa: E402
import diff_fuzz  # noqa: E402
from fake_vm import fake_vm_runs, write_fake_vm  # noqa: E402

FAKE_VM_BODY = r'''print("hello")
sys.stdout.flush()
if runs < int(os.environ.get("CRASHES", "0")):
    sys.stderr.write("Tracer caught signal 11: addr=0x0 pc=0x7f00 sp=0x7f00\n"
                     "==1234==LeakSanitizer has encountered a fatal error.\n"
                     "==1234==HINT: LeakSanitizer does not work under ptrace (strace, gdb, etc)\n")
    sys.exit(23)
'''


class LsanTracerCrash(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.vm = os.path.join(d, "fake-vm")
        write_fake_vm(self.vm, FAKE_VM_BODY)
        self.counter = os.path.join(d, "runs")
        self.script = os.path.join(d, "hello.tsb")
        with open(self.script, "w") as f:
            f.write('print("hello")\n')
        with open(os.path.join(d, "hello.out"), "w") as f:
            f.write("hello\n")

    def tearDown(self):
        self.dir.cleanup()

    def env(self, crashes):
        return dict(os.environ, FAKE_VM_COUNTER=self.counter, CRASHES=str(crashes))

    def runs(self):
        return fake_vm_runs(self.counter)

    def conformance(self, crashes):
        return subprocess.run([sys.executable, os.path.join(TESTS, "conformance", "run_conformance.py"),
                               "--vm", self.vm, "--one", self.script],
                              env=self.env(crashes), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def test_the_pattern_needs_both_lines(self):
        self.assertTrue(lsan_tracer_crashed(b"Tracer caught signal 11: addr=0x0\n"
                                            b"==7==LeakSanitizer has encountered a fatal error.\n"))
        self.assertFalse(lsan_tracer_crashed(b"==7==LeakSanitizer has encountered a fatal error.\n"))
        self.assertFalse(lsan_tracer_crashed(b"==7==ERROR: LeakSanitizer: detected memory leaks\n"))

    def test_a_run_without_the_crash_runs_once(self):
        p = run_once_more_if_lsan_crashed([self.vm], env=self.env(0), stdout=subprocess.PIPE)
        self.assertEqual((p.returncode, p.stdout, p.stderr, self.runs()), (0, b"hello\n", b"", 1))

    def test_one_crash_is_run_again_and_the_second_result_is_returned(self):
        p = run_once_more_if_lsan_crashed([self.vm], env=self.env(1), stdout=subprocess.PIPE)
        self.assertEqual((p.returncode, p.stderr, self.runs()), (0, b"", 2))

    def test_a_second_crash_is_returned(self):
        p = run_once_more_if_lsan_crashed([self.vm], env=self.env(5), stdout=subprocess.PIPE)
        self.assertEqual((p.returncode, self.runs()), (23, 2))
        self.assertTrue(lsan_tracer_crashed(p.stderr))

    def test_the_conformance_runner_passes_after_one_crash(self):
        p = self.conformance(1)
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        self.assertIn(b"running it again", p.stdout)
        self.assertEqual(self.runs(), 2)

    def test_the_conformance_runner_fails_on_a_second_crash(self):
        p = self.conformance(2)
        self.assertNotEqual(p.returncode, 0, p.stdout.decode())
        self.assertIn(b"exit code 23", p.stdout)
        self.assertEqual(self.runs(), 2)

    def test_the_fuzzer_runs_a_crashed_mode_again(self):
        with mock.patch.dict(os.environ, self.env(1)):
            r = diff_fuzz.run_vm(self.vm, self.script, [])
        self.assertEqual((r.rc, r.out, r.err, self.runs()), (0, b"hello\n", b"", 2))


if __name__ == "__main__":
    unittest.main()
