"""The harness's parsers of tool output (experiments/harness/): the --stats report's trace counts
(stats_report.parse_stats) and the calls into a function of a callgrind profile
(callgrind_calls.parse_calls), on text in the forms the tools print."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "harness"))
import callgrind_calls  # noqa: E402
import stats_report  # noqa: E402


class ParseStats(unittest.TestCase):
    def test_loops_and_functions_blacklisted(self):
        f = stats_report.parse_stats("  traces: 5 recorded, 4 compiled (1 side trace), 3 aborted, "
                                  "1 loop and 2 functions blacklisted, 0 invalidated\n")
        self.assertEqual((f["traces_recorded"], f["traces_compiled"], f["side_traces"], f["traces_aborted"]),
                         (5, 4, 1, 3))
        self.assertEqual((f["loops_blacklisted"], f["functions_blacklisted"]), (1, 2))

    def test_reports_before_functions_were_counted_apart(self):
        f = stats_report.parse_stats("  traces: 3 recorded, 3 compiled (0 side traces), 0 aborted, "
                                  "2 loops blacklisted, 0 invalidated\n")
        self.assertEqual(f["loops_blacklisted"], 2)
        self.assertIsNone(f["functions_blacklisted"])


# Two overloads of compile, the outer calling the inner: each call is counted once, with what
# the callers outside the pair paid.
ANNOTATE = """\
--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------
    900,000 ( 0.30%)  < ???:tessera::jit::TierPolicy::compile_t1(tessera::jit::Trace&) (9x) [/b/tessera-vm]
    100,000 ( 0.03%)  < ???:tessera::jit::TraceJit::compile_side(tessera::jit::Trace&) (2x) [/b/tessera-vm]
  1,000,000 ( 0.33%)  *  ???:tessera::jit::AsmjitBackend::compile(tessera::jit::TraceIR const&) [/b/tessera-vm]
    800,000 ( 0.26%)  >   ???:tessera::jit::AsmjitBackend::compile(tessera::jit::TraceIR const&, int) (11x) [/b/tessera-vm]

    800,000 ( 0.26%)  < ???:tessera::jit::AsmjitBackend::compile(tessera::jit::TraceIR const&) (11x) [/b/tessera-vm]
    800,000 ( 0.26%)  *  ???:tessera::jit::AsmjitBackend::compile(tessera::jit::TraceIR const&, int) [/b/tessera-vm]

     50,000 ( 0.02%)  < ???:main (1x) [/b/tessera-vm]
     50,000 ( 0.02%)  *  ???:tessera::VM::run_file(std::string const&) [/b/tessera-vm]
"""


class ParseCalls(unittest.TestCase):
    def test_callers_outside_the_overloads(self):
        self.assertEqual(callgrind_calls.parse_calls(ANNOTATE, "AsmjitBackend::compile("), (1000000, 11))

    def test_one_caller(self):
        self.assertEqual(callgrind_calls.parse_calls(ANNOTATE, "VM::run_file("), (50000, 1))

    def test_function_that_never_ran(self):
        self.assertEqual(callgrind_calls.parse_calls(ANNOTATE, "LlvmBackend::compile("), (0, 0))


if __name__ == "__main__":
    unittest.main()
