#!/usr/bin/env python3
"""tessera-vm's outputs never vanish (issue: outputs that vanish):

  - an output that cannot be written (--jit-log=/dev/full, --metrics
    /dev/full, --dump files over a file size limit) is reported, and the
    run exits 1, its output printed;
  - an empty path (--metrics '', --dump '') is a usage error
    (exit 2) before the run, not an output silently not written;
  - the JIT log file and events.jsonl hold each event as it happens (read
    while the run goes on);
  - SIGINT or SIGTERM during a run: the JIT log, events.jsonl, the timeline
    and a --metrics run line marked "interrupted" are written, and the
    process ends with the signal's status.

Usage: outputs_cli_test.py --vm build/tessera-vm
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_checks import check, finish, run, vm_args  # noqa: E402

# A loop that gets hot (a trace, a fused kernel) and then runs until it is stopped.
ENDLESS = """let x = ones([64], f32)
let y = ones([64], f32)
let i = 0
while true {
  y = tanh(x * 0.5 + y) * 0.5
  i = i + 1
}
"""


def wait_for(path, text, seconds=60):
    """Waits until the file at `path` holds `text`; returns whether it did."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with open(path) as f:
                if text in f.read():
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return False


def interrupted_run(vm, work, sig):
    name = signal.Signals(sig).name
    script = os.path.join(work, "endless.tsb")
    log, metrics, dump = (os.path.join(work, f"{name}.{ext}") for ext in ("log", "jsonl", "dump"))
    p = subprocess.Popen([vm, "run", script, f"--jit-log={log}", "--metrics", metrics, "--dump", dump],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # The log holds each line as it happens: the loop's trace shows while the run goes on.
        seen = wait_for(log, "trace.compiled")
        check(seen, f"{name}: the JIT log holds the trace's compile while the run goes on")
        check(wait_for(os.path.join(dump, "events.jsonl"), '"trace.compiled"', 10),
              f"{name}: events.jsonl holds it too")
        # Some fused calls: their kernel is compiled in the background, which
        # on a loaded machine takes longer than any fixed wait.
        check(wait_for(log, "kernel.compiled"), f"{name}: the loop's kernel is compiled while the run goes on")
        time.sleep(0.2)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == -sig, f"{name}: the process ends with the signal's status", f"rc={p.returncode} {err}")
    with open(log) as f:
        lines = f.read().splitlines()
    check(any("trace.stop" in line for line in lines) and any("kernel.compiled" in line for line in lines),
          f"{name}: the JIT log has the run's events", "\n".join(lines[:20]))
    with open(os.path.join(dump, "events.jsonl")) as f:
        events = [json.loads(line) for line in f]
    check(any(e["event"] == "trace.stop" for e in events), f"{name}: events.jsonl has the run's events")
    try:
        with open(os.path.join(dump, "timeline.json")) as f:
            timeline = json.load(f)
        names = {e.get("name", "") for e in timeline["traceEvents"]}
        check(any(n.startswith("kernel k") for n in names) and "otherData" in timeline,
              f"{name}: timeline.json is written, with the kernel's calls")
    except (OSError, ValueError) as e:
        check(False, f"{name}: timeline.json is written", str(e))
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    runs = [r for r in records if r.get("record") == "run"]
    check(len(runs) == 1 and runs[0].get("interrupted") == name and runs[0]["status"] == 128 + sig
          and any(k["calls"] > 0 for k in runs[0]["kernels"]),
          f"{name}: --metrics has a run line marked interrupted, with the kernel's calls", json.dumps(records)[:600])


def main():
    vm = vm_args().vm
    work = tempfile.mkdtemp(prefix="tessera-outputs-")
    try:
        hello = os.path.join(work, "hello.tsb")
        with open(hello, "w") as f:
            f.write('let s = 0\nfor i in range(1000) { s = s + i }\nprint("sum", s)\n')
        with open(os.path.join(work, "endless.tsb"), "w") as f:
            f.write(ENDLESS)

        if os.path.exists("/dev/full"):
            rc, out, err = run(vm, "run", "--jit-log=/dev/full", hello)
            check(rc == 1 and out == "sum 499500\n" and "--jit-log /dev/full" in err and "write failed" in err,
                  "--jit-log=/dev/full: the write error is reported and the run exits 1", f"rc={rc} {out!r} {err}")
            rc, out, err = run(vm, "run", "--metrics", "/dev/full", hello)
            check(rc == 1 and out == "sum 499500\n" and "--metrics /dev/full" in err,
                  "--metrics /dev/full: the write error is reported and the run exits 1", f"rc={rc} {out!r} {err}")
        else:
            print("skipped: /dev/full (not on this system)")

        # A dump whose files cannot be written in full (a file size limit: EFBIG): reported, exit 1.
        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
        dump = os.path.join(work, "limited")
        p = subprocess.run([vm, "run", "--dump", dump, hello], capture_output=True, text=True, timeout=120,
                           preexec_fn=small_files)
        check(p.returncode == 1 and p.stdout == "sum 499500\n" and "--dump: " in p.stderr
              and "File too large" in p.stderr,
              "--dump whose files cannot be written: the error is reported and the run exits 1",
              f"rc={p.returncode} {p.stderr}")

        for flag in (["--metrics", ""], ["--dump", ""]):
            rc, out, err = run(vm, "run", *flag, hello)
            check(rc == 2 and out == "" and "empty" in err, f"{' '.join(flag)!r} is a usage error", f"rc={rc} {err}")

        interrupted_run(vm, work, signal.SIGINT)
        interrupted_run(vm, work, signal.SIGTERM)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(finish())


if __name__ == "__main__":
    main()
