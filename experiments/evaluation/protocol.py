"""The evaluation protocol of the design documents: per cell, warm-up then timed samples; the
cell's mean, standard deviation, min, max and 95% confidence interval of the mean (Student's t);
Welch's t-test for every claimed difference between two cells; and regression detection against
the previous stored run.

A *cell* is one measured quantity (a program under one runtime, a kernel under one tier) and its
samples (seconds, or another unit the cell names). Lower is better for every cell the protocol
compares (times); a cell with another direction says so (`higher_is_better`)."""
import math

from scipy import stats as _stats

CONFIDENCE = 0.95
# A cell is a regression when it is more than this much slower than the previous run's...
REGRESSION_FRACTION = 0.05
# ...and the two runs' intervals do not overlap (the slowdown is beyond the noise).


def summarize(samples):
    """n, mean, sd (sample standard deviation), min, max and the CONFIDENCE interval of the mean
    (ci_low, ci_high); with one sample the interval is the sample itself and sd is 0."""
    xs = [float(x) for x in samples]
    n = len(xs)
    if n == 0:
        raise ValueError("a cell needs at least one sample")
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    half = _stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
    return {"n": n, "mean": mean, "sd": sd, "min": min(xs), "max": max(xs),
            "ci_low": mean - half, "ci_high": mean + half}


def welch_p(a, b):
    """Two-sided p-value of Welch's t-test (unequal variances) that samples a and b share a mean;
    None where it is undefined (fewer than two samples on a side, or both without variance)."""
    if len(a) < 2 or len(b) < 2:
        return None
    sa, sb = summarize(a), summarize(b)
    if sa["sd"] == 0 and sb["sd"] == 0:
        return 0.0 if sa["mean"] != sb["mean"] else 1.0
    return float(_stats.ttest_ind(a, b, equal_var=False).pvalue)


def ratio(a, b):
    """mean(a) / mean(b) of two summaries or sample lists."""
    ma = a["mean"] if isinstance(a, dict) else summarize(a)["mean"]
    mb = b["mean"] if isinstance(b, dict) else summarize(b)["mean"]
    return ma / mb if mb else math.inf


def geomean(values):
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(math.fsum(math.log(v) for v in vals) / len(vals))


def regression(previous, current, higher_is_better=False):
    """Whether `current` (a summary) regressed from `previous`: worse by more than
    REGRESSION_FRACTION of the previous mean, and the intervals do not overlap. Returns
    (flagged, change) where change is the relative change of the mean in the worse direction."""
    if higher_is_better:
        change = (previous["mean"] - current["mean"]) / previous["mean"] if previous["mean"] else 0.0
        beyond = current["ci_high"] < previous["ci_low"]
    else:
        change = (current["mean"] - previous["mean"]) / previous["mean"] if previous["mean"] else 0.0
        beyond = current["ci_low"] > previous["ci_high"]
    return change > REGRESSION_FRACTION and beyond, change
