#!/usr/bin/env python3
"""The evaluation protocol's statistics (experiments/evaluation/protocol.py) against values
computed by hand or by SciPy's reference routines, the raw results' round trip and ordering
(raw_results.py), and the regression rule: a cell is flagged only when it is more than 5% slower
and its interval lies beyond the previous one."""
import json
import math
import os
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "experiments", "evaluation"))

try:
    import protocol
    import raw_results
except ImportError as e:  # SciPy missing
    print(f"skipped: {e} (run with a Python that has SciPy: Debian's python3-scipy)")
    sys.exit(0)


class Summaries(unittest.TestCase):
    def test_mean_sd_min_max(self):
        s = protocol.summarize([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
        self.assertEqual(s["n"], 8)
        self.assertAlmostEqual(s["mean"], 5.0)
        self.assertAlmostEqual(s["sd"], math.sqrt(32 / 7))  # sample standard deviation
        self.assertEqual((s["min"], s["max"]), (2.0, 9.0))

    def test_confidence_interval_uses_student_t(self):
        # n = 4, sd = 1: t(0.975, 3) = 3.182446305...; half-width t * sd / sqrt(n)
        s = protocol.summarize([9.0, 10.0, 10.0, 11.0 + 0.0])
        sd = math.sqrt(2 / 3)
        half = 3.182446305284263 * sd / 2
        self.assertAlmostEqual(s["ci_low"], 10.0 - half, places=9)
        self.assertAlmostEqual(s["ci_high"], 10.0 + half, places=9)

    def test_one_sample_has_a_point_interval(self):
        s = protocol.summarize([3.5])
        self.assertEqual((s["sd"], s["ci_low"], s["ci_high"]), (0.0, 3.5, 3.5))

    def test_no_samples_is_an_error(self):
        with self.assertRaises(ValueError):
            protocol.summarize([])


class Welch(unittest.TestCase):
    def test_known_p_value(self):
        # Welch's test by hand: t = -3 / sqrt(1/3 + 1/3) = -3.674, df = 4, two-sided p = 0.0213.
        p = protocol.welch_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
        self.assertAlmostEqual(p, 0.0213, places=3)

    def test_same_samples_are_not_different(self):
        self.assertAlmostEqual(protocol.welch_p([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]), 1.0)

    def test_undefined_cases(self):
        self.assertIsNone(protocol.welch_p([1.0], [2.0, 3.0]))
        self.assertEqual(protocol.welch_p([1.0, 1.0], [2.0, 2.0]), 0.0)
        self.assertEqual(protocol.welch_p([1.0, 1.0], [1.0, 1.0]), 1.0)


class Regression(unittest.TestCase):
    def cell(self, samples):
        return protocol.summarize(samples)

    def test_slower_beyond_the_interval_is_flagged(self):
        flagged, change = protocol.regression(self.cell([1.0, 1.01, 0.99]), self.cell([1.2, 1.21, 1.19]))
        self.assertTrue(flagged)
        self.assertAlmostEqual(change, 0.2, places=6)

    def test_slower_within_the_noise_is_not(self):
        flagged, _ = protocol.regression(self.cell([1.0, 1.5, 0.5]), self.cell([1.1, 1.6, 0.6]))
        self.assertFalse(flagged)

    def test_less_than_five_percent_is_not(self):
        flagged, change = protocol.regression(self.cell([1.0, 1.0001, 0.9999]), self.cell([1.04, 1.0401, 1.0399]))
        self.assertFalse(flagged)
        self.assertAlmostEqual(change, 0.04, places=6)

    def test_faster_is_not(self):
        self.assertFalse(protocol.regression(self.cell([1.0, 1.01, 0.99]), self.cell([0.5, 0.51, 0.49]))[0])

    def test_higher_is_better_cells(self):
        flagged, _ = protocol.regression(self.cell([100.0, 101.0, 99.0]), self.cell([80.0, 81.0, 79.0]),
                                         higher_is_better=True)
        self.assertTrue(flagged)

    def test_geomean(self):
        self.assertAlmostEqual(protocol.geomean([1.0, 4.0]), 2.0)
        self.assertIsNone(protocol.geomean([]))
        self.assertAlmostEqual(protocol.geomean([2.0, None, 8.0]), 4.0)


class RawFiles(unittest.TestCase):
    def test_round_trip_and_latest(self):
        with tempfile.TemporaryDirectory() as d:
            for run_id, value in (("2026-11-01T0000Z-quick", 1.0), ("2026-11-02T0000Z-quick", 2.0),
                                  ("2026-11-03T0000Z-gpu-nvidia-h200", 3.0)):
                w = raw_results.RawWriter(run_id, "quick", "demo", "a demo", {"n": 1}, {"confidence": 0.95}, {})
                w.cell("a/b", [value, value + 0.5])
                w.write(d)
            doc = raw_results.latest("demo", d, gpu=False)
            self.assertEqual(doc["run_id"], "2026-11-02T0000Z-quick")
            self.assertEqual(doc["cells"][0]["samples"], [2.0, 2.5])
            self.assertAlmostEqual(doc["cells"][0]["summary"]["mean"], 2.25)
            for key in ("machine", "commit", "versions", "parameters", "protocol", "started", "finished"):
                self.assertIn(key, doc)
            self.assertEqual(raw_results.latest("demo", d, before="2026-11-02T0000Z-quick")["run_id"],
                             "2026-11-01T0000Z-quick")
            self.assertEqual(raw_results.latest("demo", d, gpu=True)["run_id"], "2026-11-03T0000Z-gpu-nvidia-h200")
            self.assertIsNone(raw_results.latest("other", d))

    def test_a_file_of_another_schema_is_refused(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"schema": "something else"}, f)
        try:
            with self.assertRaises(ValueError):
                raw_results.load(f.name)
        finally:
            os.unlink(f.name)


class GpuAttentionRaw(unittest.TestCase):
    """run_attention_bench.py's raw result of a GPU run, from attention_bench's and the PyTorch
    script's JSON shapes: a cell per tier and backend, K3 over PyTorch's fastest backend."""

    def test_cells_speedups_and_table(self):
        sys.path.insert(0, os.path.join(REPO, "experiments", "harness"))
        import run_attention_bench as rab
        stats = lambda ms: {"median_ms": ms, "mean_ms": ms, "min_ms": ms, "max_ms": ms, "samples": 10}  # noqa: E731
        data = {"device": "NVIDIA H200", "protocol": {"warmup": 10, "iters": 100},
                "results": [{"cell": "a_1", "tier": "K2", "status": "ok", "stats": stats(2.0), "tflops": 100.0},
                            {"cell": "a_1", "tier": "K3", "status": "ok", "stats": stats(1.0), "tflops": 200.0},
                            {"cell": "b_2", "tier": "K3", "status": "refused", "reason": "no variant"}]}
        torch = {"torch": "2.11", "results": [
            {"cell": "a_1", "backend": "FLASH_ATTENTION", "status": "ok", "stats": stats(0.8), "tflops": 250.0},
            {"cell": "a_1", "backend": "MATH", "status": "ok", "stats": stats(4.0), "tflops": 50.0}]}
        w = rab.raw_result(data, torch, "2026-11-29T0000Z-gpu-nvidia-h200", "attention_bench ...")
        cells = {c["id"]: c for c in w.doc["cells"]}
        self.assertEqual(cells["a_1/K3"]["samples"], [1.0])
        self.assertEqual(cells["b_2/K3"]["status"], "refused")
        self.assertEqual(cells["b_2/K3"]["samples"], [])
        self.assertEqual(cells["a_1/torch-FLASH_ATTENTION"]["samples"], [0.8])
        self.assertEqual(w.doc["derived"]["geomean_vs_torch"], "0.80$\\times$")  # 200 / 250 TFLOP/s
        self.assertIn(r"a\_1 & 200.0 & 250.0 (flash attention) & 0.80$\times$", w.doc["derived"]["table_tex"])
        with tempfile.TemporaryDirectory() as d:
            w.write(d)
            self.assertEqual(raw_results.latest("gpu_attention", d, gpu=True)["derived"]["device"], "NVIDIA H200")


if __name__ == "__main__":
    unittest.main(verbosity=1)
