"""The `tessera-vm run --stats` report as the harnesses read it: the patterns of its lines, the
warm-up and per-tier fields they give, and one run of a command with --stats."""
import re
import statistics
import subprocess
import time

# Lines of `tessera-vm run --stats` (stderr) read for the warm-up table.
STATS_PATTERNS = {
    # `traces: 27 recorded, 27 compiled (21 side traces; 3 more exits linked to one), 5 aborted,
    #  0 loops and 0 functions blacklisted, 0 invalidated` (older reports lack the linked exits,
    #  the functions, or the parenthesis)
    "traces": re.compile(r"traces:\s*(\d+) recorded,\s*(\d+) compiled"
                         r"(?: \((\d+) side traces?(?:; (\d+) more exits? linked to one)?\))?,"
                         r"\s*(\d+) aborted,\s*(\d+) loops?(?: and (\d+) functions?)? blacklisted"),
    "time": re.compile(r"time: recording ([\d.]+) ms, compiling ([\d.]+) ms(?:; (\d+) IR instructions)?"),
    "warmup": re.compile(r"warm-up: first trace compiled at ([\d.]+) ms, last at ([\d.]+) ms"),
    "wall": re.compile(r"wall time: ([\d.]+) ms"),
    # `T1 (asmjit): 10 traces compiled in 0.511 ms (median 0.046 ms), 56701 bytes of code`
    "tier_total": re.compile(r"^\s*(T[12]) \([^)]*\): (\d+) traces? compiled in ([\d.]+) ms"
                             r"(?: \(median ([\d.]+) ms\))?, (\d+) bytes", re.M),
    # `tier-up: 6 T1 traces swapped for T2 code (3284 tier-up exits)`
    "tierup": re.compile(r"tier-up: (\d+) T1 traces? swapped for T2 code(?: \((\d+) tier-up exits?\))?"),
    # per trace: `    trace 0  FILE:55 in advance, ... (T1 0.116 ms 5780 bytes, T2 15.980 ms 3524 bytes; runs T2)`
    "trace_line": re.compile(r"^\s*trace \d+\s.*$", re.M),
    "trace_tier": re.compile(r"\b(T[12]) ([\d.]+) ms (\d+) bytes"),
}
WARMUP_FIELDS = ["traces_recorded", "traces_compiled", "side_traces", "shared_exits", "traces_aborted",
                 "loops_blacklisted", "functions_blacklisted",
                 "recording_ms", "compiling_ms", "ir_instructions", "first_trace_ms",
                 "last_trace_ms", "vm_wall_ms", "tierup_swapped", "tierup_exits"]
# Compile latency per tier (warm-up CSV columns): traces compiled by the tier, median compile
# time per trace (T1 in microseconds, T2 in milliseconds) and bytes of code.
TIER_FIELDS = ["t1_traces", "t1_median_compile_us", "t1_code_bytes",
               "t2_traces", "t2_median_compile_ms", "t2_code_bytes"]


def parse_stats(text):
    """The warm-up fields of a --stats report; a field whose line is missing is None."""
    f = dict.fromkeys(WARMUP_FIELDS)
    m = STATS_PATTERNS["traces"].search(text)
    if m:
        (f["traces_recorded"], f["traces_compiled"], f["side_traces"], f["shared_exits"], f["traces_aborted"],
         f["loops_blacklisted"], f["functions_blacklisted"]) = (int(g) if g is not None else None for g in m.groups())
    m = STATS_PATTERNS["time"].search(text)
    if m:
        f["recording_ms"], f["compiling_ms"] = float(m.group(1)), float(m.group(2))
        f["ir_instructions"] = int(m.group(3)) if m.group(3) else None
    m = STATS_PATTERNS["warmup"].search(text)
    if m:
        f["first_trace_ms"], f["last_trace_ms"] = float(m.group(1)), float(m.group(2))
    m = STATS_PATTERNS["wall"].search(text)
    if m:
        f["vm_wall_ms"] = float(m.group(1))
    m = STATS_PATTERNS["tierup"].search(text)
    if m:
        f["tierup_swapped"] = int(m.group(1))
        f["tierup_exits"] = int(m.group(2)) if m.group(2) else None
    return f


def parse_tiers(text):
    """Per host tier ("T1", "T2") of a --stats report: {"ms": [compile ms of each trace],
    "bytes": [code bytes of each trace], "traces": N or None, "total_bytes": N or None,
    "median_ms": X or None} (the last three from the tier's summary line, None if missing)."""
    tiers = {t: {"ms": [], "bytes": [], "traces": None, "total_bytes": None, "median_ms": None}
             for t in ("T1", "T2")}
    for m in STATS_PATTERNS["tier_total"].finditer(text):
        d = tiers[m.group(1)]
        d["traces"], d["total_bytes"] = int(m.group(2)), int(m.group(5))
        d["median_ms"] = float(m.group(4)) if m.group(4) else None
    for line in STATS_PATTERNS["trace_line"].findall(text):
        for m in STATS_PATTERNS["trace_tier"].finditer(line):
            tiers[m.group(1)]["ms"].append(float(m.group(2)))
            tiers[m.group(1)]["bytes"].append(int(m.group(3)))
    return tiers


def tier_summary(d):
    """(traces, median compile ms per trace, code bytes) of one tier of parse_tiers(), each None
    when the report has neither per-trace lines nor the tier's summary line."""
    if d is None:
        return None, None, None
    traces = d["traces"] if d["traces"] is not None else (len(d["ms"]) or None)
    median = statistics.median(d["ms"]) if d["ms"] else d["median_ms"]
    code = d["total_bytes"] if d["total_bytes"] is not None else (sum(d["bytes"]) if d["bytes"] else None)
    return traces, median, code


def run_stats(cmd, timeout):
    """One run with --stats: (status, wall seconds, stdout, stderr, detail)."""
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, "", "", "timed out after %gs" % timeout
    except OSError as e:
        return "crash", None, "", "", str(e)
    elapsed = time.perf_counter() - start
    out = p.stdout.decode("utf-8", "replace").strip()
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        first = err.strip().splitlines()
        return "crash", elapsed, out, err, "exit %d: %s" % (p.returncode, first[0] if first else "")
    return "ok", elapsed, out, err, ""
