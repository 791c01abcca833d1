#!/usr/bin/env python3
"""--dump's memory is bounded whatever the run's length (docs/observability.md,
"The timeline"): a hot loop calling one small fused kernel N times keeps, of
that kernel (and of every other site), the first and the last --dump-keep
spans, counts the rest, and says so in timeline.json; the process's peak RSS
with --dump is the same for 1000 calls and for 300 000 (it grew about 3 KB
a call before: 300 000 calls took 900 MB more).

Usage: dump_bounds_cli_test.py --vm build/tessera-vm [--sanitized]
(sanitized: the RSS comparison is skipped, the sanitizers' quarantine and
shadow memory make it meaningless; the timeline is checked all the same).
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "experiments", "harness"))
from cli_checks import check, finish, vm_args  # noqa: E402
from run_dump_overhead import KERNEL_LOOP, measure  # noqa: E402

def check_timeline(path, calls, keep):
    """The kernel's spans: at most 2 x keep kept, the rest counted where the timeline says so."""
    with open(path) as f:
        timeline = json.load(f)
    events = timeline["traceEvents"]
    kernel = [e for e in events if e["ph"] == "X" and e["name"].startswith("kernel k")]
    names = {e["name"] for e in kernel}
    check(len(names) >= 1, "the timeline has the kernel's spans", str(names))
    for name in names:
        kept = [e for e in kernel if e["name"] == name]
        check(len(kept) <= 2 * keep, f"{name}: at most 2 x {keep} spans kept ({len(kept)})")
    left_out = [e for e in events if e.get("cat") == "left out"]
    other = timeline.get("otherData", {})
    check(left_out and all(e["args"]["left_out"] > 0 for e in left_out),
          "the timeline says where it left spans out, and how many", json.dumps(left_out[:3]))
    kernel_left = sum(e["args"]["left_out"] for e in left_out if e["name"].startswith("kernel k"))
    kernel_kept = len(kernel)
    check(kernel_left + kernel_kept >= calls - 200,
          f"the kernel's spans kept and left out add up to its calls ({kernel_kept} + {kernel_left}, {calls} calls)")
    check(other.get("events_left_out", 0) >= kernel_left and other.get("sites_with_events_left_out"),
          "otherData totals what was left out", json.dumps(other)[:500])


def main():
    args = vm_args(sanitized=True)
    vm = args.vm
    calls = 60000 if args.sanitized else 300000
    work = tempfile.mkdtemp(prefix="tessera-dump-bounds-")
    try:
        script = os.path.join(work, "loop.tsb")
        with open(script, "w") as f:
            f.write(KERNEL_LOOP)
        rc, _, _, plain_out, err = measure([vm, "run", script, "--", str(calls)])
        check(rc == 0, "the loop runs", err)
        # The same dump of a short run and of a long one (--dump-keep at its default): what --dump
        # adds (its files, LLVM for T2's dumps) is the same, what it would keep per call is the
        # difference.
        short = os.path.join(work, "short")
        rc, _, short_mb, _, err = measure([vm, "run", "--dump", short, script, "--", "1000"])
        check(rc == 0, "a short run with --dump", err)
        dump = os.path.join(work, "dump")
        rc, _, dump_mb, out, err = measure([vm, "run", "--dump", dump, script, "--", str(calls)])
        check(rc == 0 and out == plain_out, f"with --dump it prints the same ({calls} fused calls)", f"rc={rc} {err}")
        if args.sanitized:
            print(f"skipped: the peak RSS comparison (sanitized build; 1000 calls {short_mb:.0f} MB, "
                  f"{calls} calls {dump_mb:.0f} MB)")
        else:
            check(dump_mb < short_mb + 16,
                  f"the peak RSS of --dump does not grow with the run: {calls} calls {dump_mb:.0f} MB, "
                  f"1000 calls {short_mb:.0f} MB")
        check_timeline(os.path.join(dump, "timeline.json"), calls, 256)
        # --dump-keep sets what is kept.
        few = os.path.join(work, "few")
        rc, _, _, _, err = measure([vm, "run", "--dump", few, "--dump-keep", "10", script, "--", "5000"])
        check(rc == 0, "a run with --dump-keep 10", err)
        check_timeline(os.path.join(few, "timeline.json"), 5000, 10)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(finish())


if __name__ == "__main__":
    main()
