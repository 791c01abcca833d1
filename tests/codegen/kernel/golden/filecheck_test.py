#!/usr/bin/env python3
"""filecheck.py's directives: each passes a text it should and fails one it should not."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from filecheck import CheckError, check, read_checks  # noqa: E402

TEXT = """kernel @k
  %1 = load %in0[%off] : tile<256xf32>
  %2 = tanh %1 : tile<256xf32>
  store %out0[%off], %2
kernel @other
  %1 = exp %0 : f32
"""


def passes(checks, text=TEXT):
    check(text, read_checks(checks, "t"))


# Per directive: checks that pass TEXT, and checks that fail it with (a part of) their message.
CASES = {
    "in order": (["// CHECK: load\n// CHECK: tanh\n// CHECK: store"],
                 [("// CHECK: tanh\n// CHECK: load", "expected 'load'")]),
    "next and same": (["// CHECK: load\n// CHECK-NEXT: tanh\n// CHECK-SAME: tile<256xf32>"],
                      [("// CHECK: load\n// CHECK-NEXT: store", "on the next line"),
                       ("// CHECK: tanh\n// CHECK-SAME: load", "on the same line")]),
    "not, between matches and at the end": (
        ["// CHECK: load\n// CHECK-NOT: exp\n// CHECK: store"],
        [("// CHECK: load\n// CHECK-NOT: tanh\n// CHECK: store", "CHECK-NOT: found 'tanh'"),
         ("// CHECK: store\n// CHECK-NOT: exp", "CHECK-NOT: found 'exp'")]),
    "a label bounds a not": (["// CHECK-LABEL: @k\n// CHECK-NOT: exp\n// CHECK-LABEL: @other\n// CHECK: exp"],
                             [("// CHECK-LABEL: @other\n// CHECK: tanh", "expected 'tanh'")]),
    "regexes and variables": (
        ["// CHECK: [[X:%[0-9]+]] = load\n// CHECK: tanh [[X]] : tile<{{[0-9]+}}xf32>"],
        [("// CHECK: [[X:%[0-9]+]] = tanh\n// CHECK: store %out0[%off], [[X]]x", "expected"),
         ("// CHECK: [[Y]]", "used before it is defined")]),
}


class FileCheckTest(unittest.TestCase):
    def fails(self, checks, message, text=TEXT):
        with self.assertRaises(CheckError) as e:
            passes(checks, text)
        self.assertIn(message, str(e.exception))

    def test_directives(self):
        for name, (good, bad) in CASES.items():
            with self.subTest(name):
                for checks in good:
                    passes(checks)
                for checks, message in bad:
                    self.fails(checks, message)

    def test_whitespace_runs_compare_as_one_space(self):
        passes("// CHECK: %2   =\ttanh %1")

    def test_a_file_without_checks_is_an_error(self):
        self.fails("// RUN: kir", "no CHECK: lines")
        with self.assertRaises(CheckError):
            read_checks("// CHECK-NEXT: x", "t")

    def test_prefixes_select_their_lines(self):
        checks = "// CUDA: tanhf\n// CHECK: tanh"
        check(TEXT, read_checks(checks, "t", "CHECK"))
        with self.assertRaises(CheckError):
            check(TEXT, read_checks(checks, "t", "CUDA"))


if __name__ == "__main__":
    unittest.main()
