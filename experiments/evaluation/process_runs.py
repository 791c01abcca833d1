"""Timing whole processes under the protocol: a cell's command runs `warmup` times untimed (the
page cache, the kernel cache on disk), then timed until it has at least `min_runs` samples and the
cell's time budget is spent, at most `max_runs`. Each run's wall time, exit status, output and
peak resident memory (the child's maxrss from wait4) are kept; a run whose output differs from the
first one's stops the cell."""
import os
import subprocess
import time


class Runs:
    def __init__(self):
        self.samples = []      # wall seconds of the timed runs
        self.max_rss = 0       # bytes, over every run (warm-up included)
        self.output = None     # stdout of the first run
        self.status = "ok"     # ok | crash | timeout | missing | unstable
        self.detail = ""


class _Wait4Popen(subprocess.Popen):
    """Popen that records the child's peak resident memory (wait4's ru_maxrss, KiB on Linux):
    RUSAGE_CHILDREN's maximum covers every child so far, not this run alone."""
    max_rss = 0

    def _try_wait(self, wait_flags):
        try:
            pid, sts, ru = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return self.pid, 0
        if pid == self.pid:
            self.max_rss = ru.ru_maxrss * 1024
        return pid, sts


def run_once(cmd, timeout, env=None, cwd=None):
    """(status, seconds, stdout, stderr, max_rss_bytes) of one run."""
    start = time.perf_counter()
    try:
        p = _Wait4Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd)
    except OSError as e:
        return "missing", None, "", str(e), 0
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return "timeout", None, "", f"timed out after {timeout:g} s", 0
    seconds = time.perf_counter() - start
    rss = p.max_rss
    out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if p.returncode != 0:
        lines = err.strip().splitlines()
        return "crash", seconds, out, f"exit {p.returncode}: {lines[-1] if lines else ''}", rss
    return "ok", seconds, out, err, rss


def measure(cmd, warmup, min_runs, max_runs, budget_s, timeout, env=None, cwd=None, same_output=True):
    """The cell's runs under the protocol (the module's docstring)."""
    r = Runs()
    spent, k = 0.0, 0
    while True:
        timed = k >= warmup
        if timed and (len(r.samples) >= max_runs or (len(r.samples) >= min_runs and spent >= budget_s)):
            break
        status, secs, out, detail, rss = run_once(cmd, timeout, env, cwd)
        r.max_rss = max(r.max_rss, rss)
        k += 1
        if status != "ok":
            r.status, r.detail = status, detail
            if out:
                r.output = out
            break
        if r.output is None:
            r.output = out
        elif same_output and out != r.output:
            r.status, r.detail = "unstable", "the output changed between runs"
            break
        if timed:
            r.samples.append(secs)
            spent += secs
    return r
