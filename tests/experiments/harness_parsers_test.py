"""The harness's parsers of tool output (experiments/harness/): the --stats report's trace counts
and times (stats_report.parse_stats, parse_tiers, main_thread_jit_ms; run_corpus.py's warm-up
table made of them), the calls into a function of a callgrind profile
(callgrind_calls.parse_calls), and the tensor programs' output (their `iter_us`,
`time_per_iter_us` and `checksum` lines) and the STREAM triad's (run_tensor_bench), on text in the
forms the tools print."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments", "harness"))
import callgrind_calls  # noqa: E402
import run_corpus  # noqa: E402
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


# The summary lines of `tessera-vm run --stats tests/conformance/corpus/expr_parser.tsb -- 300`:
# T1 code only, a T2 compile unfinished at the end (not counted).
STATS_T2_UNFINISHED = """\
  traces: 140 recorded, 140 compiled (129 side traces; 71 more exits linked to one), 19 aborted, 0 loops and 0 functions blacklisted, 0 invalidated
    aborted (left the loop): 9 (last in parse_term at line 73 (JEQ at pc 11))
  time: recording 2.716 ms, compiling 14.056 ms; 7641 IR instructions (9443 as recorded; optimizer 3.917 ms of the compiling time)
  T1 (asmjit): 140 traces compiled in 10.139 ms (median 0.036 ms), 455998 bytes of code
  T2 (llvm): the compile in progress when the script ended was not waited for
  time in code (CPU time, split by 4 samples): T1 0 ms (0.0%), T2 0 ms (0.0%), elsewhere 21 ms (100.0%: interpreter, recorder, compilers, runtime)
  tier-up: 0 T1 traces swapped for T2 code (17 tier-up exits)
  warm-up: first trace compiled at 0.537 ms, last at 21.324 ms
    trace 0  tests/conformance/corpus/expr_parser.tsb:58 in peek, function trace: 14 IR instructions (14 recorded), 6 snapshots, compiled in 0.064 ms (T1 0.043 ms 900 bytes; runs T1); entered 1373 times, 20 exits
  wall time: 22.367 ms (compile and interpret)
"""
# bank_sim.tsb with --jit-param async=0: T2 code, whose compiles the compiling time counts.
STATS_T2 = """\
  traces: 26 recorded, 26 compiled (20 side traces; 3 more exits linked to one), 5 aborted, 0 loops and 0 functions blacklisted, 0 invalidated
  time: recording 0.815 ms, compiling 123.306 ms; 972 IR instructions (1268 as recorded; optimizer 0.985 ms of the compiling time)
  T1 (asmjit): 26 traces compiled in 1.292 ms (median 0.045 ms), 60939 bytes of code
  T2 (llvm): 7 traces compiled in 121.028 ms (median 18.175 ms), 20668 bytes of code
  time in code (CPU time, split by 60 samples): T1 0 ms (0.0%), T2 84 ms (35.0%), elsewhere 156 ms (65.0%: interpreter, recorder, compilers, runtime)
  tier-up: 7 T1 traces swapped for T2 code (7 tier-up exits)
  wall time: 277.243 ms (compile and interpret)
"""


class ParseTimes(unittest.TestCase):
    def test_optimizer_and_time_in_code(self):
        f = stats_report.parse_stats(STATS_T2_UNFINISHED)
        self.assertEqual((f["recording_ms"], f["compiling_ms"], f["ir_instructions"], f["optimizer_ms"]),
                         (2.716, 14.056, 7641, 3.917))
        self.assertEqual((f["samples"], f["t1_code_ms"], f["t2_code_ms"], f["elsewhere_ms"], f["vm_wall_ms"]),
                         (4, 0.0, 0.0, 21.0, 22.367))

    def test_tier_totals_and_an_unfinished_t2_compile(self):
        tiers = stats_report.parse_tiers(STATS_T2_UNFINISHED)
        self.assertEqual((tiers["T1"]["total_ms"], tiers["T1"]["traces"], tiers["T1"]["unfinished"]),
                         (10.139, 140, False))
        self.assertEqual((tiers["T2"]["total_ms"], tiers["T2"]["traces"], tiers["T2"]["unfinished"]),
                         (None, None, True))
        tiers = stats_report.parse_tiers(STATS_T2)
        self.assertEqual((tiers["T2"]["total_ms"], tiers["T2"]["unfinished"]), (121.028, False))

    def test_main_thread_jit_time_leaves_t2_out(self):
        for text, want in [(STATS_T2_UNFINISHED, 2.716 + 14.056), (STATS_T2, 0.815 + 123.306 - 121.028)]:
            ms = stats_report.main_thread_jit_ms(stats_report.parse_stats(text), stats_report.parse_tiers(text))
            self.assertAlmostEqual(ms, want, places=9)

    def test_older_time_line_and_none(self):
        text = "  time: recording 1.500 ms, compiling 2.000 ms; 30 IR instructions\n"
        f = stats_report.parse_stats(text)
        self.assertEqual((f["ir_instructions"], f["optimizer_ms"], f["samples"]), (30, None, None))
        self.assertEqual(stats_report.main_thread_jit_ms(f, stats_report.parse_tiers(text)), 3.5)
        self.assertIsNone(stats_report.main_thread_jit_ms(stats_report.parse_stats(""), stats_report.parse_tiers("")))


class CorpusWarmupTable(unittest.TestCase):
    def test_row_of_a_report(self):
        w = run_corpus.warmup_fields(run_corpus.warmup_record(STATS_T2_UNFINISHED, "ok", 0.0304), 0.0076)
        self.assertEqual(run_corpus.warmup_cells("expr_parser", w),
                         ["expr_parser", "22.4", "30.4", "7.6", "140", "129", "19", "2.72", "3.92", "10.14", "- *",
                          "75.0%", "4", "0", "0", "21"])

    def test_failed_run_and_no_interpreter(self):
        w = run_corpus.warmup_fields(run_corpus.warmup_record("", "timeout", None, "timed out"), None)
        self.assertEqual(run_corpus.warmup_cells("json_pretty", w),
                         ["json_pretty (TIMEOUT)"] + ["-"] * len(run_corpus.WARMUP_COLUMNS))

    def test_total_row(self):
        rows = [run_corpus.warmup_fields(run_corpus.warmup_record(t), i)
                for t, i in [(STATS_T2_UNFINISHED, 0.0076), (STATS_T2, "CRASH")]]
        total = dict(zip([h for h, _, _ in run_corpus.WARMUP_COLUMNS], run_corpus.warmup_total(rows)[1:]))
        self.assertEqual([total[h] for h in ["wall ms", "interp ms", "traces recorded", "T2 compile ms (background)",
                                             "elsewhere ms"]], ["299.6", "7.6", "166", "121.03", "177"])
        share = (100 * (2.716 + 14.056) / 22.367 * 100 * (0.815 + 123.306 - 121.028) / 277.243) ** 0.5
        self.assertEqual(total["JIT main thread % of wall"], "%.1f%%" % share)


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
