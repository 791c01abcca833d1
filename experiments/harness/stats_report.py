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
    # `time: recording 2.720 ms, compiling 9.870 ms; 7641 IR instructions (9443 as recorded; optimizer
    #  3.855 ms of the compiling time)` (older reports lack the parenthesis, or all after the times)
    "time": re.compile(r"time: recording ([\d.]+) ms, compiling ([\d.]+) ms(?:; (\d+) IR instructions"
                       r"(?: \(\d+ as recorded; optimizer ([\d.]+) ms of the compiling time\))?)?"),
    "warmup": re.compile(r"warm-up: first trace compiled at ([\d.]+) ms, last at ([\d.]+) ms"),
    "wall": re.compile(r"wall time: ([\d.]+) ms"),
    # `T1 (asmjit): 10 traces compiled in 0.511 ms (median 0.046 ms), 56701 bytes of code`
    "tier_total": re.compile(r"^\s*(T[12]) \([^)]*\): (\d+) traces? compiled in ([\d.]+) ms"
                             r"(?: \(median ([\d.]+) ms\))?, (\d+) bytes", re.M),
    # `tier-up: 6 T1 traces swapped for T2 code (3284 tier-up exits)`
    "tierup": re.compile(r"tier-up: (\d+) T1 traces? swapped for T2 code(?: \((\d+) tier-up exits?\))?"),
    # `time in code (CPU time, split by 3 samples): T1 7 ms (33.3%), T2 0 ms (0.0%), elsewhere 13 ms (66.7%: ...)`
    "code_time": re.compile(r"time in code \(CPU time, split by (\d+) samples?\): T1 ([\d.]+) ms \([\d.]+%\), "
                            r"T2 ([\d.]+) ms \([\d.]+%\), elsewhere ([\d.]+) ms"),
    # a background T2 compile the run did not wait for at its end (not counted in the T2 line)
    "t2_unfinished": re.compile(r"T2 \([^)]*\): the compile in progress when the script ended was not waited for"),
    # per trace: `    trace 0  FILE:55 in advance, ... (T1 0.116 ms 5780 bytes, T2 15.980 ms 3524 bytes; runs T2)`
    "trace_line": re.compile(r"^\s*trace \d+\s.*$", re.M),
    "trace_tier": re.compile(r"\b(T[12]) ([\d.]+) ms (\d+) bytes"),
}
WARMUP_FIELDS = ["traces_recorded", "traces_compiled", "side_traces", "shared_exits", "traces_aborted",
                 "loops_blacklisted", "functions_blacklisted",
                 "recording_ms", "compiling_ms", "ir_instructions", "first_trace_ms",
                 "last_trace_ms", "vm_wall_ms", "tierup_swapped", "tierup_exits"]
# Where the time went (parse_stats reads them too; not in run_bench.py's warm-up CSV): the
# optimizer's share of the compiling time, and the process's CPU time split by samples.
TIME_FIELDS = ["optimizer_ms", "samples", "t1_code_ms", "t2_code_ms", "elsewhere_ms"]
# The fields each pattern's groups give, in order (a group's field ending in _ms is a float).
STATS_GROUPS = {
    "traces": ["traces_recorded", "traces_compiled", "side_traces", "shared_exits", "traces_aborted",
               "loops_blacklisted", "functions_blacklisted"],
    "time": ["recording_ms", "compiling_ms", "ir_instructions", "optimizer_ms"],
    "warmup": ["first_trace_ms", "last_trace_ms"],
    "wall": ["vm_wall_ms"],
    "tierup": ["tierup_swapped", "tierup_exits"],
    "code_time": ["samples", "t1_code_ms", "t2_code_ms", "elsewhere_ms"],
}
# Compile latency per tier (warm-up CSV columns): traces compiled by the tier, median compile
# time per trace (T1 in microseconds, T2 in milliseconds) and bytes of code.
TIER_FIELDS = ["t1_traces", "t1_median_compile_us", "t1_code_bytes",
               "t2_traces", "t2_median_compile_ms", "t2_code_bytes"]


def parse_stats(text):
    """The warm-up and time fields of a --stats report (WARMUP_FIELDS + TIME_FIELDS); a field
    whose line (or part of a line) is missing is None."""
    f = dict.fromkeys(WARMUP_FIELDS + TIME_FIELDS)
    for name, fields in STATS_GROUPS.items():
        m = STATS_PATTERNS[name].search(text)
        if m:
            f.update((k, None if g is None else float(g) if k.endswith("_ms") else int(g))
                     for k, g in zip(fields, m.groups()))
    return f


def parse_tiers(text):
    """Per host tier ("T1", "T2") of a --stats report: {"ms": [compile ms of each trace],
    "bytes": [code bytes of each trace], "traces": N or None, "total_ms": X or None,
    "total_bytes": N or None, "median_ms": X or None, "unfinished": bool} (traces to median_ms
    from the tier's summary line, None if missing; unfinished: a T2 compile was still running
    when the script ended, and the report does not count it)."""
    tiers = {t: {"ms": [], "bytes": [], "traces": None, "total_ms": None, "total_bytes": None, "median_ms": None,
                 "unfinished": False} for t in ("T1", "T2")}
    for m in STATS_PATTERNS["tier_total"].finditer(text):
        d = tiers[m.group(1)]
        d["traces"], d["total_ms"], d["total_bytes"] = int(m.group(2)), float(m.group(3)), int(m.group(5))
        d["median_ms"] = float(m.group(4)) if m.group(4) else None
    tiers["T2"]["unfinished"] = bool(STATS_PATTERNS["t2_unfinished"].search(text))
    for line in STATS_PATTERNS["trace_line"].findall(text):
        for m in STATS_PATTERNS["trace_tier"].finditer(line):
            tiers[m.group(1)]["ms"].append(float(m.group(2)))
            tiers[m.group(1)]["bytes"].append(int(m.group(3)))
    return tiers


def main_thread_jit_ms(f, tiers):
    """Milliseconds of JIT work on the program's own thread, from parse_stats() and parse_tiers():
    recording + compiling - T2's compile time. The compiling time counts the optimizer, T1 and
    T2; T2 compiles on a background thread (async=1, the default). None without a time line."""
    if f["recording_ms"] is None or f["compiling_ms"] is None:
        return None
    return f["recording_ms"] + f["compiling_ms"] - (tiers["T2"]["total_ms"] or 0.0)


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
