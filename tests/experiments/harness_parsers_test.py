"""The harness's parsers of tool output (experiments/harness/): the --stats report's trace counts
(stats_report.parse_stats), the calls into a function of a callgrind profile
(callgrind_calls.parse_calls), and the tensor programs' output (their `iter_us`,
`time_per_iter_us` and `checksum` lines) and the STREAM triad's (run_tensor_bench), on text in the
forms the tools print."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "harness"))
import callgrind_calls  # noqa: E402
import run_tensor_bench  # noqa: E402
import stats_report  # noqa: E402


class ParseStats(unittest.TestCase):
    def test_loops_and_functions_blacklisted(self):
        f = stats_report.parse_stats("  traces: 5 recorded, 4 compiled (1 side trace), 3 aborted, "
                                  "1 loop and 2 functions blacklisted, 0 invalidated\n")
        self.assertEqual((f["traces_recorded"], f["traces_compiled"], f["side_traces"], f["traces_aborted"]),
                         (5, 4, 1, 3))
        self.assertEqual((f["loops_blacklisted"], f["functions_blacklisted"]), (1, 2))

    def test_exits_linked_to_another_exits_side_trace(self):
        f = stats_report.parse_stats("  traces: 27 recorded, 27 compiled (21 side traces; 3 more exits linked to one), "
                                     "5 aborted, 0 loops and 0 functions blacklisted, 0 invalidated\n")
        self.assertEqual((f["traces_recorded"], f["side_traces"], f["shared_exits"], f["traces_aborted"]),
                         (27, 21, 3, 5))
        self.assertEqual((f["loops_blacklisted"], f["functions_blacklisted"]), (0, 0))

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


class ParseTensorProgram(unittest.TestCase):
    def test_tessera_output(self):
        # print() of a float: the shortest repr, so as many digits as it takes
        out = "time_per_iter_us 36973.68186003587\nchecksum 915867.3125\n"
        self.assertEqual(run_tensor_bench.parse_program_output(out), (36973.68186003587, 915867.3125))

    def test_python_twin_output_with_other_lines(self):
        out = "loading\ntime_per_iter_us 12.117\nchecksum 3.86341225e+05\n"
        self.assertEqual(run_tensor_bench.parse_program_output(out), (12.117, 386341.225))

    def test_missing_checksum(self):
        with self.assertRaisesRegex(ValueError, "no checksum line"):
            run_tensor_bench.parse_program_output("time_per_iter_us 5.0\n")

    def test_nan_checksum_never_agrees(self):
        _, chk = run_tensor_bench.parse_program_output("time_per_iter_us 5.0\nchecksum nan\n")
        self.assertEqual(run_tensor_bench.rel_diff(chk, chk), float("inf"))

    def test_checksums_within_the_tolerance(self):
        self.assertLess(run_tensor_bench.rel_diff(915867.3125, 915867.348), 1e-6)
        self.assertGreater(run_tensor_bench.rel_diff(915867.3125, 915000.0), 1e-4)

    def test_iter_us_lines_in_order(self):
        # Tessera prints shortest-repr floats, the twins %.3f; the summary lines are not iterations
        out = ("iter_us 3745.942801469937\niter_us 12.5\niter_us 1e-05\n"
               "time_per_iter_us 1252.7\nchecksum 915867.3125\n")
        self.assertEqual(run_tensor_bench.parse_iter_us(out), [3745.942801469937, 12.5, 1e-05])
        self.assertEqual(run_tensor_bench.parse_program_output(out), (1252.7, 915867.3125))

    def test_no_iter_us_lines(self):
        self.assertEqual(run_tensor_bench.parse_iter_us("time_per_iter_us 5.0\nchecksum 1.0\n"), [])

    def test_iter_us_needs_one_value(self):
        self.assertEqual(run_tensor_bench.parse_iter_us("iter_us\niter_us 1.0 2.0\n my iter_us 3\niter_us 4\n"),
                         [4.0])

    def test_run_program_keeps_the_iterations_and_counts_them(self):
        cmd = [sys.executable, "-c", "print('iter_us 1.5'); print('iter_us 2.5'); "
               "print('time_per_iter_us 2.0'); print('checksum 7.0')"]
        self.assertEqual(run_tensor_bench.run_program(cmd, 60), ("ok", 2.0, 7.0, "", [1.5, 2.5]))
        self.assertEqual(run_tensor_bench.run_program(cmd, 60, 2)[4], [1.5, 2.5])
        status, _, _, detail, iters = run_tensor_bench.run_program(cmd, 60, 3)
        self.assertEqual((status, detail, iters), ("failed", "2 iter_us lines, expected 3 (N)", []))


class ParseStream(unittest.TestCase):
    def test_one_and_all_threads(self):
        out = ("triad threads 1 elements 33554432 best_s 0.037194 gb_s 21.652\n"
               "triad threads 2 elements 33554432 best_s 0.038695 gb_s 20.812\n")
        self.assertEqual(run_tensor_bench.parse_stream_output(out), {1: 21.652, 2: 20.812})

    def test_without_openmp_one_line(self):
        out = "triad threads 1 elements 1000000 best_s 0.000861 gb_s 27.861\n"
        self.assertEqual(run_tensor_bench.parse_stream_output(out), {1: 27.861})

    def test_error_text(self):
        self.assertEqual(run_tensor_bench.parse_stream_output("stream_triad: cannot allocate\n"), {})


if __name__ == "__main__":
    unittest.main()
