#!/usr/bin/env python3
"""Differential fuzzer for tessera-vm: interpreter vs. trace JIT.

Every generated program (gen_program.generate(seed, profile)) is run once in
each of seven modes, from the same file path so that file names in messages
agree:

    off       tessera-vm run P.tsb --jit=off          (the reference)
    default   tessera-vm run P.tsb                      (tier=auto, default thresholds)
    eager     tessera-vm run P.tsb --jit-param hotloop=1 --jit-param hotcall=1 --jit-param hotexit=1
                                   --jit-param tier2=2  (auto: traces move to T2 almost at once)
    eager-t1  eager's thresholds with --jit-param tier=1   (asmjit only)
    eager-t2  eager's thresholds with --jit-param tier=2   (LLVM only)
    sink0     tessera-vm run P.tsb --jit-param sink=0      (no allocation sinking)
    sinkmax1  tessera-vm run P.tsb --jit-param sinkmax=1   (only one-element tensors sunk)

The `numbers` and `rows` profiles add an eighth:

    peel2     eager's thresholds with --jit-param peel=2 --jit-param tier2=2
                                   (every loop peeled; T1 moves them to T2 at the back-edge)

The `tensors` profile runs its own set of eight: off, default, eager, eager-t1,
eager-t2, and

    fuse0     tessera-vm run P.tsb --jit-param fuse=0      (no fusion: kernels' work op by op)
    sinkmax1  (as above: the small tensors go to fusion instead of sinking)
    k3        tessera-vm run P.tsb --jit-param specialize=1 --jit-param async=0
                                   (K3 kernels, tuned, from a fused site's first call on)

--modes M1,M2,... runs only those (off is always run).  stdout, stderr and the
exit status must be identical.  A timeout, a death by signal, or a sanitizer
report in stderr is a failure on its own.  A run that passes the 10 s timeout
has its threads' backtraces taken with gdb (where installed) before it is
killed, and is run once more with six times the time: a second timeout is the
failure (both runs' backtraces saved with it); a second run that ends is
compared as usual, and the first run's backtraces are written to the keep
directory (slow-seed-S-MODE.txt) with a note on stderr, so that a loaded
machine does not fail the run while a hang that comes back still does.  A syntax error (exit 2) from the
interpreter run is a generator bug and also fails.

    diff_fuzz.py --vm PATH [--seed S] [--count N | --seconds T] [--keep-dir DIR] [--jobs J]
                 [--profile default|exits|classic|tensors|numbers|rows] [--modes M1,M2,...]
    diff_fuzz.py --vm PATH --minimize FILE [--out FILE] [--modes ...]
    diff_fuzz.py --vm PATH --check FILE       # run one file in all modes, show differences

--profile picks the generator's profile (gen_program.py): `default` mixes the
shapes aimed at exits that build sunk objects into the usual programs, `exits`
makes them dominant, `classic` leaves them out (the programs of the generator
before they were added, seed for seed); `numbers` writes only number-list
blocks (gen_numbers.py); `rows` writes list-heavy programs (gen_rows.py:
stencils with offset indices, swapped and aliased rows, ints and other values
stored into float rows, push/pop in hot loops, DP rows, prefix sums);
`tensors` writes tensor programs aimed at tensor sinking and fusion
(gen_tensors.py) and picks its own modes.  Pass the same --profile to --check
and --minimize to get the same modes.

Prints one line per failure, then `N passed, N failed`; exits 1 on any failure.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gen_program  # noqa: E402
from lsan_tracer_crash import lsan_tracer_crashed  # noqa: E402

TIMEOUT = 10.0

EAGER = ["--jit-param", "hotloop=1", "--jit-param", "hotcall=1", "--jit-param", "hotexit=1"]
ALL_MODES = [
    ("off", ["--jit=off"]),
    ("default", []),
    ("eager", EAGER + ["--jit-param", "tier2=2"]),
    ("eager-t1", EAGER + ["--jit-param", "tier=1"]),
    ("eager-t2", EAGER + ["--jit-param", "tier=2"]),
    # every loop peeled (the default peels only where it pays), T1 moving
    # peeled loops to T2 at their back-edge through the header snapshot
    ("peel2", EAGER + ["--jit-param", "peel=2", "--jit-param", "tier2=2"]),
    ("sink0", ["--jit-param", "sink=0"]),
    ("sinkmax1", ["--jit-param", "sinkmax=1"]),
    ("fuse0", ["--jit-param", "fuse=0"]),
    # K3 kernels from a fused site's first call on (dims constant, tuned variants,
    # made before the call goes on): the specialized kernels checked as K2 is
    ("k3", ["--jit-param", "specialize=1", "--jit-param", "async=0"]),
    # not in any profile's set (LLVM compiles of a whole program's traces cost 1-5 s):
    # T2 compiled before the program goes on, where eager-t2's background compiles of a
    # short program often finish after it has ended
    ("t2sync", ["--jit-param", "tier=2", "--jit-param", "async=0"]),
]
# The modes each profile runs by default ("off" first: the reference).
_CLASSIC = ["off", "default", "eager", "eager-t1", "eager-t2", "sink0", "sinkmax1"]
PROFILE_MODES = {
    "default": _CLASSIC,
    "exits": _CLASSIC,
    "classic": _CLASSIC,
    "numbers": _CLASSIC + ["peel2"],
    "rows": _CLASSIC + ["peel2"],
    # tensor programs: fusion on and off; sinkmax=1 sends the small tensors,
    # which sinking would otherwise take, to fusion
    "tensors": ["off", "default", "eager", "eager-t1", "eager-t2", "fuse0", "sinkmax1", "k3"],
}
# The modes in use; --profile picks its set, --modes a subset.
MODES = [m for m in ALL_MODES if m[0] in _CLASSIC]


def profile_modes(profile):
    known = dict(ALL_MODES)
    return [(n, known[n]) for n in PROFILE_MODES[profile]]


def select_modes(spec):
    """--modes a,b,c: those modes (by name), always with "off" first."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    known = dict(ALL_MODES)
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit("--modes: unknown mode(s) %s (known: %s)" % (
            ", ".join(bad), ", ".join(n for n, _ in ALL_MODES)))
    names = ["off"] + [n for n in names if n != "off"]
    if len(names) < 2:
        raise SystemExit("--modes: name at least one JIT mode besides off")
    return [(n, known[n]) for n in dict.fromkeys(names)]

# Sanitizer / crash markers.  The VM's own errors look like
# "FILE.tsb:LINE: runtime error: ..."; UBSan's look like "x.cpp:12:5: runtime error: ...".
SANITIZER_RE = re.compile(r"(==\d+==ERROR|AddressSanitizer|LeakSanitizer|ThreadSanitizer|"
                          r"MemorySanitizer|\.(?:cpp|cc|h|hpp|c):\d+(?::\d+)?: runtime error:|"
                          r"SUMMARY: UndefinedBehaviorSanitizer)")


class Result:
    def __init__(self, rc, out, err, timed_out=False, stacks=""):
        self.rc = rc
        self.out = out
        self.err = err
        self.timed_out = timed_out
        self.stacks = stacks  # a timed-out run's threads, as gdb saw them
        self.seconds = 0.0

    def key(self):
        return (self.rc, self.out, self.err, self.timed_out)

    def problem(self):
        if self.timed_out:
            return "timeout"
        if self.rc is not None and self.rc < 0:
            return "signal %d" % -self.rc
        if SANITIZER_RE.search(self.err.decode("utf-8", "replace")):
            return "sanitizer report"
        if self.rc not in (0, 1, 2):
            return "exit status %d" % self.rc
        return None


def thread_backtraces(pid):
    """Every thread's backtrace in process pid, from gdb (a hung run's only witness)."""
    if not shutil.which("gdb"):
        return "gdb is not installed: no backtraces\n"
    try:
        p = subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "thread apply all bt 40"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        return p.stdout.decode("utf-8", "replace")
    except (subprocess.TimeoutExpired, OSError) as e:
        return "gdb could not take the backtraces: %s\n" % e


def run_with_timeout(cmd, timeout):
    """Runs cmd; past `timeout` seconds its backtraces are taken, then it is killed."""
    start = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stacks = thread_backtraces(p.pid)
        p.kill()
        out, err = p.communicate()
        r = Result(None, out or b"", err or b"", timed_out=True, stacks=stacks)
    else:
        r = Result(p.returncode, out, err)
    r.seconds = time.time() - start
    return r


def run_vm(vm, path, extra, timeout=None):
    cmd = [vm, "run", path] + extra
    timeout = timeout or TIMEOUT
    for attempt in range(300):
        try:
            r = run_with_timeout(cmd, timeout)
            if not r.timed_out and lsan_tracer_crashed(r.err):
                sys.stderr.write("note: LeakSanitizer's tracer crashed at the exit of %s "
                                 "(google/sanitizers#1353); running it again\n" % " ".join(cmd))
                r = run_with_timeout(cmd, timeout)
            return r
        except OSError:
            # the binary is being relinked (missing, not executable, text file busy): wait
            if attempt == 299:
                raise
            time.sleep(1.0)


def run_mode(vm, path, name, extra):
    """One mode's run; a timeout is run once more with six times the time (see the top)."""
    r = run_vm(vm, path, extra)
    if not r.timed_out:
        return r
    again = run_vm(vm, path, extra, timeout=TIMEOUT * 6)
    if again.timed_out:
        again.stacks = "first run, after %.0f s:\n%s\nsecond run, after %.0f s:\n%s" % (
            TIMEOUT, r.stacks, TIMEOUT * 6, again.stacks)
        return again
    again.stacks = r.stacks
    sys.stderr.write("note: %s in mode %s ran past %.0f s once; a second run took %.1f s\n" % (
        path, name, TIMEOUT, again.seconds))
    return again


def vm_stamp(vm):
    try:
        st = os.stat(vm)
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return None


def run_all(vm, path):
    # If the binary is replaced during the runs, they are not comparable: run again.
    for _ in range(10):
        before = vm_stamp(vm)
        res = {name: run_mode(vm, path, name, extra) for name, extra in MODES}
        if before is not None and vm_stamp(vm) == before:
            return res
        time.sleep(2.0)
    return res


def verdict(results):
    """Return None if all agree and nothing crashed, else a short description."""
    probs = []
    off = results["off"]
    if off.rc == 2 and not off.timed_out:
        probs.append("interpreter reports exit 2 (generator bug?): %s" %
                     off.err.decode("utf-8", "replace").strip().splitlines()[0:1])
    for name, _ in MODES:
        p = results[name].problem()
        if p:
            probs.append("%s: %s" % (name, p))
    for name, _ in MODES[1:]:
        r = results[name]
        what = []
        if r.rc != off.rc:
            what.append("exit %s vs %s" % (r.rc, off.rc))
        if r.out != off.out:
            what.append("stdout")
        if r.err != off.err:
            what.append("stderr")
        if what and not r.timed_out:
            probs.append("%s differs (%s)" % (name, ", ".join(what)))
    return "; ".join(probs) if probs else None


def signature(results):
    """What kind of failure this is, for the minimizer to preserve."""
    sig = []
    off = results["off"]
    for name, _ in MODES:
        sig.append((name, results[name].problem() is not None))
    for name, _ in MODES[1:]:
        r = results[name]
        sig.append((name, r.rc != off.rc, r.out != off.out, r.err != off.err))
    return tuple(sig)


def first_diff_line(a, b):
    al = a.decode("utf-8", "replace").splitlines()
    bl = b.decode("utf-8", "replace").splitlines()
    for n in range(max(len(al), len(bl))):
        x = al[n] if n < len(al) else "<EOF>"
        y = bl[n] if n < len(bl) else "<EOF>"
        if x != y:
            return "line %d: %r vs %r" % (n + 1, x[:120], y[:120])
    return "identical"


def save_failure(keep_dir, seed, src, results, desc):
    d = os.path.join(keep_dir, "seed-%d" % seed)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "prog.tsb"), "w") as f:
        f.write(src)
    for name, _ in MODES:
        r = results[name]
        with open(os.path.join(d, name + ".stdout"), "wb") as f:
            f.write(r.out)
        with open(os.path.join(d, name + ".stderr"), "wb") as f:
            f.write(r.err)
        with open(os.path.join(d, name + ".rc"), "w") as f:
            f.write("%s\n" % ("timeout" if r.timed_out else r.rc))
        if r.stacks:
            with open(os.path.join(d, name + ".backtraces"), "w") as f:
                f.write(r.stacks)
    with open(os.path.join(d, "summary.txt"), "w") as f:
        f.write(desc + "\n")
        for name, _ in MODES[1:]:
            f.write("%s stdout: %s\n" % (name, first_diff_line(results["off"].out, results[name].out)))
            f.write("%s stderr: %s\n" % (name, first_diff_line(results["off"].err, results[name].err)))
    return d


def save_slow_run(keep_dir, seed, name, result):
    """The backtraces of a run that timed out once and passed on its second run."""
    os.makedirs(keep_dir, exist_ok=True)
    path = os.path.join(keep_dir, "slow-seed-%d-%s.txt" % (seed, name))
    with open(path, "w") as f:
        f.write(result.stacks)
    print("note: seed %d, mode %s: ran past %.0f s once, %.1f s the second time (backtraces in %s)" % (
        seed, name, TIMEOUT, result.seconds, path), flush=True)


def check_one(vm, seed, workdir, profile):
    src = gen_program.generate(seed, profile)
    # one path per seed, reused for all the runs
    path = os.path.join(workdir, "fuzz-%d.tsb" % seed)
    with open(path, "w") as f:
        f.write(src)
    results = run_all(vm, path)
    os.unlink(path)
    return seed, src, results, verdict(results)


def fuzz(args):
    vm = os.path.abspath(args.vm)
    keep = args.keep_dir
    workdir = tempfile.mkdtemp(prefix="tessera-fuzz-")
    passed = failed = 0
    start = time.time()
    deadline = start + args.seconds if args.seconds else None

    def seeds():
        s = args.seed
        n = 0
        while True:
            if args.count is not None and n >= args.count:
                return
            if deadline is not None and time.time() >= deadline:
                return
            yield s
            s += 1
            n += 1

    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            pending = []
            it = seeds()
            done_iter = False
            while True:
                while not done_iter and len(pending) < max(1, args.jobs) * 2:
                    try:
                        s = next(it)
                    except StopIteration:
                        done_iter = True
                        break
                    pending.append(ex.submit(check_one, vm, s, workdir, args.profile))
                if not pending:
                    break
                fut = pending.pop(0)
                seed, src, results, desc = fut.result()
                for name, _ in MODES:
                    if results[name].stacks and not results[name].timed_out:
                        save_slow_run(keep, seed, name, results[name])
                if desc is None:
                    passed += 1
                else:
                    failed += 1
                    d = save_failure(keep, seed, src, results, desc)
                    print("FAIL seed %d: %s (saved in %s)" % (seed, desc, d), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed else 0


# ------------------------------------------------------------------ minimizer

def split_units(lines):
    """Candidate deletions: (start, end) line ranges.  A line that opens a
    block ({ without a matching } on the same line) goes with its block up to
    the matching closing line; '} elif/else {' lines delete just their arm."""
    units = []
    stack = []
    for n, line in enumerate(lines):
        s = line.strip()
        opens = s.count("{")
        closes = s.count("}")
        if s.startswith("}") and stack:
            start = stack.pop()
            units.append((start, n + 1))
            if s.endswith("{"):       # } elif ... {   /  } else {
                stack.append(n)
                continue
            continue
        if opens > closes:
            stack.append(n)
        else:
            units.append((n, n + 1))
    return units


def minimize(args):
    vm = os.path.abspath(args.vm)
    with open(args.minimize) as f:
        lines = f.read().splitlines()
    workdir = tempfile.mkdtemp(prefix="tessera-min-")
    path = os.path.join(workdir, os.path.basename(args.minimize))

    def test(ls):
        with open(path, "w") as f:
            f.write("\n".join(ls) + "\n")
        res = run_all(vm, path)
        return res

    base = test(lines)
    if verdict(base) is None:
        print("no difference to minimize", file=sys.stderr)
        return 1
    want = signature(base)
    print("difference: %s" % verdict(base), file=sys.stderr)

    def interesting(ls):
        r = test(ls)
        if r["off"].rc == 2 or r["off"].problem():
            return False
        if verdict(r) is None:
            return False
        if args.strict:
            return signature(r) == want
        # keep the same set of misbehaving JIT modes
        return signature(r)[:len(MODES)] == want[:len(MODES)] and all(
            any(x[1:]) == any(y[1:]) for x, y in zip(signature(r)[len(MODES):], want[len(MODES):]))

    changed = True
    rounds = 0
    while changed and rounds < 20:
        changed = False
        rounds += 1
        # try bigger chunks first, then units (blocks and single lines), last first
        for chunk in (16, 8, 4, 2):
            n = 0
            while n < len(lines):
                cand = lines[:n] + lines[n + chunk:]
                if n + chunk <= len(lines) and interesting(cand):
                    lines = cand
                    changed = True
                else:
                    n += chunk
        units = split_units(lines)
        for (a, b) in sorted(units, key=lambda u: (u[0] - u[1], -u[0])):
            if b > len(lines):
                continue
            cand = lines[:a] + lines[b:]
            if interesting(cand):
                lines = cand
                changed = True
                break
        # simplify single statements: replace a block opener by its body
        for n, line in enumerate(lines):
            s = line.strip()
            if s.startswith("#") and interesting(lines[:n] + lines[n + 1:]):
                lines = lines[:n] + lines[n + 1:]
                changed = True
                break
    final = test(lines)
    out = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)
    print("minimized to %d lines; %s" % (len(lines), verdict(final)), file=sys.stderr)
    for name, _ in MODES:
        r = final[name]
        print("--- %s: exit %s" % (name, "timeout" if r.timed_out else r.rc), file=sys.stderr)
        print("stdout:\n" + r.out.decode("utf-8", "replace")[-2000:], file=sys.stderr)
        print("stderr:\n" + r.err.decode("utf-8", "replace")[-2000:], file=sys.stderr)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


def check_file(args):
    vm = os.path.abspath(args.vm)
    res = run_all(vm, args.check)
    v = verdict(res)
    for name, _ in MODES:
        r = res[name]
        print("--- %s: exit %s" % (name, "timeout" if r.timed_out else r.rc))
        print("stdout:\n" + r.out.decode("utf-8", "replace"))
        print("stderr:\n" + r.err.decode("utf-8", "replace"))
    print("verdict:", v or "all modes agree")
    return 1 if v else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True, help="path to tessera-vm")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--keep-dir", default="/tmp/tessera-fuzz")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--profile", choices=gen_program.PROFILES, default="default",
                    help="generator profile: default, exits (the object-at-exit shapes dominate), "
                         "classic (the generator without them), numbers (number-list blocks only), "
                         "rows (list-heavy programs: stencils, DP rows, push/pop in hot loops), "
                         "tensors (tensor programs aimed at sinking and fusion); also picks the modes "
                         "(--check and --minimize too)")
    ap.add_argument("--modes", metavar="M1,M2,...",
                    help="run only these modes (off is always run); known: " +
                         ", ".join(n for n, _ in ALL_MODES))
    ap.add_argument("--minimize", metavar="FILE")
    ap.add_argument("--strict", action="store_true",
                    help="minimizer: keep the exact failure signature (default: any JIT difference)")
    ap.add_argument("--out", metavar="FILE", help="minimizer: write the result here")
    ap.add_argument("--check", metavar="FILE", help="run one file in all modes and show the outputs")
    args = ap.parse_args()
    global MODES
    MODES = profile_modes(args.profile)
    if args.modes:
        MODES = select_modes(args.modes)
    if args.minimize:
        return minimize(args)
    if args.check:
        return check_file(args)
    if args.count is None and args.seconds is None:
        args.count = 100
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
