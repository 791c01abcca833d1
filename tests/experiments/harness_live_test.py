"""The harness's parsers (experiments/harness/stats_report.py, run_outputs.py) against what the
current tessera-vm prints: --stats, --metrics and --jit-log of one run of a corpus program that
has side traces, exits linked to another's side trace, aborts, T2 code and tier-up. Every warm-up
field the harness reads is found, and the three reports agree on the counts (a stored sample
would not notice a changed format: the side-trace counts once made the traces line unreadable).

Usage: harness_live_test.py --vm build/tessera-vm --source-dir ."""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "experiments", "harness"))
import run_outputs  # noqa: E402
import stats_report  # noqa: E402

ARGS = None


class LiveReports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        metrics = os.path.join(cls.tmp.name, "m.jsonl")
        log = os.path.join(cls.tmp.name, "jit.log")
        program = os.path.join(ARGS.source_dir, "tests", "conformance", "corpus", "bank_sim.tsb")
        # async=0: the T2 compiles finish before the run ends, so all three reports see them.
        p = subprocess.run([ARGS.vm, "run", "--stats", "--metrics", metrics, f"--jit-log={log}",
                            "--jit-param", "async=0", program],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        cls.stats = p.stderr
        with open(metrics) as f:
            cls.metrics = f.read()
        with open(log) as f:
            cls.log = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_warmup_field_is_read(self):
        f = stats_report.parse_stats(self.stats)
        missing = [k for k in stats_report.WARMUP_FIELDS if f[k] is None]
        self.assertEqual(missing, [], self.stats)
        self.assertGreater(f["side_traces"], 0)
        self.assertGreater(f["tierup_swapped"], 0)

    def test_every_time_field_is_read(self):
        # run_corpus.py's warm-up table takes T2 out of the compiling time: it must be the optimizer's,
        # T1's and T2's compile times together (each printed to 0.001 ms).
        f = stats_report.parse_stats(self.stats)
        tiers = stats_report.parse_tiers(self.stats)
        missing = [k for k in stats_report.TIME_FIELDS if f[k] is None]
        self.assertEqual(missing, [], self.stats)
        self.assertAlmostEqual(f["compiling_ms"], f["optimizer_ms"] + tiers["T1"]["total_ms"] + tiers["T2"]["total_ms"],
                               delta=0.005, msg=self.stats)
        self.assertIsNotNone(stats_report.main_thread_jit_ms(f, tiers))

    def test_every_tier_field_is_read(self):
        tiers = stats_report.parse_tiers(self.stats)
        for tier in ("T1", "T2"):
            traces, median, code = stats_report.tier_summary(tiers[tier])
            self.assertTrue(traces and median is not None and code, (tier, tiers[tier], self.stats))

    def test_metrics_agree_with_stats(self):
        runs = run_outputs.parse_metrics(self.metrics)
        self.assertEqual(len(runs), 1)
        run = runs[0]["run"]
        f = stats_report.parse_stats(self.stats)
        self.assertEqual(sorted(run["traces"]), sorted(run_outputs.METRICS_TRACE_KEYS))
        self.assertEqual((run["traces"]["recorded"], run["traces"]["compiled"], run["traces"]["side"],
                          run["traces"]["shared_exits"], run["traces"]["aborted"]),
                         (f["traces_recorded"], f["traces_compiled"], f["side_traces"], f["shared_exits"],
                          f["traces_aborted"]))
        self.assertGreater(len(runs[0]["loops"]), 0)

    def test_jit_log_agrees_with_stats(self):
        events = run_outputs.parse_jit_log(self.log)
        f = stats_report.parse_stats(self.stats)
        tiers = stats_report.parse_tiers(self.stats)
        count = lambda name, **kw: sum(1 for e in events  # noqa: E731
                                       if e["event"] == name and all(e.get(k) == v for k, v in kw.items()))
        self.assertEqual(count("trace.stop"), f["traces_recorded"])
        self.assertEqual(count("trace.abort"), f["traces_aborted"])
        self.assertEqual(count("exit.shared"), f["shared_exits"])
        self.assertEqual(count("trace.compiled", tier=1), stats_report.tier_summary(tiers["T1"])[0])
        self.assertEqual(count("trace.compiled", tier=2), stats_report.tier_summary(tiers["T2"])[0])
        self.assertTrue(all(isinstance(e["ms"], float) for e in events))

    def test_a_changed_format_is_an_error_not_a_blank(self):
        with self.assertRaises(ValueError):
            run_outputs.parse_jit_log("[jit 1.000] trace.stop trace=3 kind=loop\n[jit x] broken\n")
        with self.assertRaises(ValueError):
            run_outputs.parse_metrics('{"record": "run", "script": "x"}\n')


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--source-dir", required=True)
    ARGS, rest = ap.parse_known_args()
    ARGS.vm = os.path.abspath(ARGS.vm)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
