#!/usr/bin/env python3
"""--jit-log, --dump's events.jsonl, traces.dot and timeline.json, and --metrics end to end (docs/observability.md), on a program
with a known trace shape (tests/runtime/programs/jit_log_shapes.tsb: a loop,
a side trace linked back to it, a loop whose recordings abort until it is
blacklisted):

  - the log's lines come in the order the JIT works, with their fields (a
    fused call site's kernels too: K2, K3 asked for, tuned, compiled);
  - --dump DIR/events.jsonl parses line by line, and its counts agree with
    --stats (traces recorded, side traces, aborts, blacklisted loops, T1
    compiles, each trace's exits);
  - --dump DIR/traces.dot is the trace tree (the loop, its side trace at
    the exit with the count, the link back, the blacklisted loop, a fused
    kernel), and Graphviz's dot accepts it (traces.svg where dot is);
  - --dump DIR/timeline.json is Chrome trace-event JSON (every event with
    its fields, each track's times never go back, spans nest) with the run,
    recordings, compiles, trace runs, exits and kernels (a GPU's kernels, on
    the host emulation of one, on the device track);
  - --metrics FILE appends a run line (its counts are --stats') and a line
    per hot loop; a fused kernel has its calls, bytes and GB/s (GFLOP/s for
    a matrix product);
  - the program's output is the same with and without the log and dumps;
  - a dump path that is a file, or a log file that cannot be written, is an
    error before the program runs (exit 2); a program that ends in a runtime
    error still leaves its events.
Usage: observability_cli_test.py --vm build/tessera-vm --source-dir .
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ARGS = ["--jit-param", "async=0", "--jit-param", "blacklist=2", "--jit-param", "maxrecord=100"]


def run(vm, script, *args):
    return subprocess.run([vm, "run", script, *args], capture_output=True, text=True, timeout=120)


def check(cond, what, p=None):
    if not cond:
        detail = f"\nexit {p.returncode}\nstdout: {p.stdout!r}\nstderr: {p.stderr}" if p is not None else ""
        sys.exit(f"FAIL: {what}{detail}")
    print(f"ok: {what}")


def stat(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"FAIL: --stats has no match for {pattern!r}:\n{text}")
    return int(m.group(1))


def check_timeline(path, categories, names=(), prefixes=()):
    """timeline.json is Chrome trace-event JSON that Perfetto opens: every event
    has its fields, each track's times never go back, spans on one track nest
    or follow each other, and the expected kinds of span are there."""
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"]
    check(isinstance(events, list) and len(events) > 0, f"{os.path.basename(path)} has traceEvents")
    for e in events:
        ok = {"ph", "pid", "tid", "name", "ts"} <= e.keys() and e["ph"] in "XiM" and e["ts"] >= 0
        ok = ok and (e["ph"] != "X" or e.get("dur", -1) >= 0)
        if not ok:
            sys.exit(f"FAIL: a trace event without its fields: {e}")
    check(any(e["ph"] == "M" and e["name"] == "process_name" for e in events), "the process is named")
    tracks = {}
    for e in events:
        if e["ph"] != "M":
            tracks.setdefault(e["tid"], []).append(e)
    for tid, evs in tracks.items():
        check(all(a["ts"] <= b["ts"] for a, b in zip(evs, evs[1:])), f"track {tid}: the times never go back")
        open_spans = []  # ends of the enclosing spans
        for e in evs:
            if e["ph"] != "X":
                continue
            while open_spans and open_spans[-1] <= e["ts"] + 1e-3:
                open_spans.pop()
            end = e["ts"] + e["dur"]
            if open_spans and end > open_spans[-1] + 1e-3:
                sys.exit(f"FAIL: track {tid}: span {e} overlaps its enclosing span, which ends at {open_spans[-1]}")
            open_spans.append(end)
    check(True, f"spans nest on each of {len(tracks)} tracks")
    cats = {e.get("cat") for e in events}
    check(categories <= cats, f"the timeline has {sorted(categories)} (has {sorted(c for c in cats if c)})")
    got = {e["name"] for e in events}
    check(set(names) <= got, f"the timeline has {sorted(names)}")
    for pre in prefixes:
        check(any(n.startswith(pre) for n in got), f"the timeline has spans named {pre}...")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    script = os.path.join(a.source_dir, "tests/runtime/programs/jit_log_shapes.tsb")
    at = os.path.basename(script)

    plain = run(a.vm, script, *ARGS)
    check(plain.returncode == 0 and plain.stdout == "4000\n6000\n", "the program runs", plain)

    # The log, in the order the JIT works.
    p = run(a.vm, script, *ARGS, "--jit-log")
    check(p.returncode == 0 and p.stdout == plain.stdout, "--jit-log leaves the output alone", p)
    lines = [l for l in p.stderr.splitlines() if l.startswith("[jit ")]
    check(all(re.fullmatch(r"\[jit \d+\.\d{3}\] [a-z0-9.]+( [a-z_]+=(\"([^\"\\]|\\.)*\"|\S+))*", l) for l in lines),
          "every line is [jit MS] EVENT key=value...", p)
    want = [
        rf"record\.start kind=loop at=\S*{at}:6$",
        rf"trace\.stop trace=0 kind=loop at=\S*{at}:6 ir=\d+ link=loop$",
        r"trace\.compiled trace=0 tier=1 ms=\d+\.\d+ bytes=\d+$",
        rf"record\.start kind=side at=\S*{at}:7 parent=0 exit=\d+ taken=\d+$",
        rf"trace\.stop trace=1 kind=side at=\S*{at}:7 ir=\d+ link=\"trace 0\"$",
        r"trace\.compiled trace=1 tier=1 ",
        rf"record\.start kind=loop at=\S*{at}:12$",
        rf"trace\.abort reason=TraceTooLong at=\S*{at}:12 detail=\"in <main> at line 13 .*\"$",
        rf"blacklist kind=loop at=\S*{at}:12$",
        r"exit\.count trace=0 exit=\d+ taken=\d+$",
    ]
    # The blacklisted loop's cool-down (about a million iterations) outlasts its 3000.
    check(not any(" blacklist.retry " in l for l in lines), "no retry of the blacklisted loop within 3000 iterations", p)
    pos = 0
    for w in want:
        found = next((i for i in range(pos, len(lines)) if re.search(w, lines[i])), None)
        check(found is not None, f"a line matching {w!r} follows", p)
        pos = found + 1

    # A fused call site's kernels: K2, then (shapes settled after two calls) K3, tuned.
    work = tempfile.TemporaryDirectory()  # the tensor program, for the later checks too
    tensors = os.path.join(work.name, "tensors.tsb")
    with open(tensors, "w") as f:
        f.write("let x = arange(300, dtype=f32) * 0.01\nlet acc = 0.0\n"
                "for i in range(200) { acc = acc + item(sum(tanh(x * 1.5 + x) * 2.0)) }\nprint(acc > 0)\n")
    p = run(a.vm, tensors, "--jit-log", "--jit-param", "async=0", "--jit-param", "kcache=0",
            "--jit-param", "specialize=2", "--device=cpu")
    check(p.returncode == 0 and p.stdout == "true\n", "the tensor program runs", p)
    pos = 0
    # Every kernel event names the site as the metrics and the viewer do
    # (kHASH); kernel.compiled adds the build, its --dump files' name.
    for w in [r"kernel\.compiled kernel=k[0-9a-f]{12} build=region-[0-9a-f]{16} tier=K2 device=cpu ms=\d+\.\d+ source=compiled$",
              r"kernel\.k3 kernel=k[0-9a-f]{12} dims=\d+ device=cpu$",
              r"kernel\.tuned kernel=k[0-9a-f]{12} choice=\"tile=\d+ threads=\d+ flat=[01]\" variants=[1-9]\d* device=cpu$",
              r"kernel\.compiled kernel=k[0-9a-f]{12} build=region-[0-9a-f]{16} tier=K3 device=cpu "]:
        lines = p.stderr.splitlines()
        found = next((i for i in range(pos, len(lines)) if re.search(w, lines[i])), None)
        check(found is not None, f"a line matching {w!r} follows", p)
        pos = found + 1

    # events.jsonl against --stats, the log to a file meanwhile.
    with tempfile.TemporaryDirectory() as tmp:
        dump, log = os.path.join(tmp, "dump"), os.path.join(tmp, "jit.log")
        p = run(a.vm, script, *ARGS, "--dump", dump, f"--jit-log={log}", "--stats")
        check(p.returncode == 0 and p.stdout == plain.stdout, "--dump and --jit-log=FILE leave the output alone", p)
        check("[jit " not in p.stderr, "--jit-log=FILE writes nothing to stderr", p)
        with open(log) as f:
            check(sum(1 for l in f if l.startswith("[jit ")) > 5, "the log file has the lines")
        with open(os.path.join(dump, "events.jsonl")) as f:
            events = [json.loads(l) for l in f]
        check(all({"time_ms", "event", "thread"} <= e.keys() for e in events), "each event has time_ms, event and thread")
        check(all(a["time_ms"] <= b["time_ms"] for a, b in zip(events, events[1:])), "the events' times do not go back")
        count = lambda name, **kv: sum(1 for e in events if e["event"] == name and all(e.get(k) == v for k, v in kv.items()))
        st = p.stderr
        check(count("trace.stop") == stat(r"traces: (\d+) recorded", st), "trace.stop events = traces recorded", p)
        check(count("trace.stop", kind="side") == stat(r"traces: .*\((\d+) side trace", st), "side traces agree", p)
        check(count("trace.abort") == stat(r"traces: .*, (\d+) aborted", st), "trace.abort events = aborts", p)
        check(count("blacklist", kind="loop") == stat(r"(\d+) loops? and \d+ functions? blacklisted", st),
              "blacklist events = loops blacklisted", p)
        check(count("blacklist") == 1, "the aborting loop is blacklisted once", p)
        check(count("trace.compiled", tier=1) == stat(r"T1 \(asmjit\): (\d+) traces? compiled", st),
              "tier-1 trace.compiled events = T1 compiles", p)
        for m in re.finditer(r"^    trace (\d+) .*entered \d+ times, (\d+) exits$", st, re.M):
            taken = sum(e["taken"] for e in events if e["event"] == "exit.count" and e["trace"] == int(m.group(1)))
            check(taken == int(m.group(2)), f"exit.count of trace {m.group(1)} sums to its {m.group(2)} exits", p)

        # The trace tree: traces, the side trace at its exit, the link back, the blacklisted loop.
        with open(os.path.join(dump, "traces.dot")) as f:
            dot = f.read()
        check(dot.startswith("digraph traces {") and dot.rstrip().endswith("}"), "traces.dot is a digraph")
        check(re.search(rf't0 \[label="trace 0\\nloop at {re.escape(at)}:6\\n', dot) is not None, "trace 0 is the loop")
        check(re.search(rf't1 \[label="trace 1\\nside trace at {re.escape(at)}:7', dot) is not None,
              "trace 1 is a side trace")
        check(re.search(r't0 -> t1 \[label="exit \d+ \(line 7\)\\ntaken \d+"\]', dot) is not None,
              "the side trace hangs off trace 0's exit, with its count")
        check('t1 -> t0 [style=dashed, label="link"]' in dot, "the side trace links back to trace 0")
        check('t0 -> t0 [style=dashed, label="loop"]' in dot, "trace 0 loops")
        check(re.search(rf'b0 \[label="blacklisted loop\\nat {re.escape(at)}:12"', dot) is not None,
              "the blacklisted loop is there")
        if shutil.which("dot"):
            d = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
            check(d.returncode == 0 and "<svg" in d.stdout, "Graphviz's dot accepts traces.dot", d)
            with open(os.path.join(dump, "traces.svg")) as f:
                check("<svg" in f.read(), "traces.svg was written")
        else:
            print("skip: Graphviz's dot is not installed (the graph is not checked by dot, and there is no traces.svg)")

        # The timeline: the trace-event format, times per track that never go back, spans that nest.
        check_timeline(os.path.join(dump, "timeline.json"), {"record", "trace", "compile", "deopt", "run"})

        # --metrics: a run line and a line per hot loop, appended run after run.
        metrics = os.path.join(tmp, "runs.jsonl")
        p = run(a.vm, script, *ARGS, "--metrics", metrics, "--stats")
        check(p.returncode == 0 and p.stdout == plain.stdout, "--metrics leaves the output alone", p)
        p2 = run(a.vm, tensors, "--metrics", metrics, "--device=cpu")
        with open(metrics) as f:
            lines = [json.loads(l) for l in f]
        runs = [l for l in lines if l["record"] == "run"]
        loops = [l for l in lines if l["record"] == "loop"]
        check(len(runs) == 2 and runs[0]["script"] == script and runs[1]["script"] == tensors, "a run line per run, appended")
        r0 = runs[0]
        check({"status", "wall_ms", "device", "params", "traces", "compile_ms", "native_ms", "kernels"} <= r0.keys(),
              "the run line has its fields")
        check(r0["traces"]["recorded"] == stat(r"traces: (\d+) recorded", p.stderr)
              and r0["traces"]["side"] == stat(r"traces: .*\((\d+) side trace", p.stderr)
              and r0["traces"]["aborted"] == stat(r"traces: .*, (\d+) aborted", p.stderr), "its trace counts are --stats'", p)
        first = [l for l in loops if l["script"] == script]
        check(len(first) == stat(r"^  hot loops: (\d+)", p.stderr), "a loop line per hot loop", p)
        side_loop = next(l for l in first if l["at"].endswith(":6"))
        check([t["kind"] for t in side_loop["traces"]] == ["loop", "side"] and side_loop["entries"] > 0,
              "the loop at line 6 has its root and side trace", p)
        k = runs[1]["kernels"]
        check(len(k) == 1 and k[0]["calls"] > 0 and k[0]["bytes"] > 0 and k[0]["gb_per_s"] > 0
              and k[0]["kernel"].startswith("kernel k") and "tanh" in k[0]["kernel"],
              "the tensor program's fused kernel: calls, bytes, GB/s", p2)
        mm = os.path.join(tmp, "mm.tsb")
        with open(mm, "w") as f:
            f.write("let x = ones([32, 64])\nlet w = ones([64, 48]) * 0.01\nlet acc = 0.0\n"
                    "for i in range(200) { acc = acc + item(sum(relu(x @ w + 1.0))) }\nprint(acc > 0)\n")
        p = run(a.vm, mm, "--metrics", metrics, "--device=cpu")
        with open(metrics) as f:
            last = [json.loads(l) for l in f if '"record":"run"' in l][-1]
        check(p.returncode == 0 and any(kk.get("gflop_per_s", 0) > 0 for kk in last["kernels"]),
              "a fused matrix product has its GFLOP/s", p)

        # A GPU's kernels (the host emulation of one) on the timeline's device track and in --metrics.
        gpu_dump, gpu_metrics = os.path.join(tmp, "gpu"), os.path.join(tmp, "gpu.jsonl")
        p = subprocess.run([a.vm, "run", os.path.join(a.source_dir, "tests/runtime/programs/gpu_chain.tsb"), "--device=gpu",
                            "--jit-param", "async=0", "--jit-param", "kcache=0", "--jit-param", "gputune=0",
                            "--dump", gpu_dump, "--metrics", gpu_metrics],
                           capture_output=True, text=True, timeout=300, env=dict(os.environ, TESSERA_GPU_EMULATION="1"))
        check(p.returncode == 0, "the GPU chain runs on the emulated GPU with --dump and --metrics", p)
        check_timeline(os.path.join(gpu_dump, "timeline.json"), {"gpu", "kernel"}, prefixes={"gpu k"})
        with open(gpu_metrics) as f:
            kernels = json.loads(f.readline())["kernels"]
        check(any(k["kernel"].startswith("gpu k") and k["device"] == "gpu" and k["calls"] > 0 and k["bytes"] > 0
                  for k in kernels), "--metrics has the GPU kernel's device time and bytes", p)

        # A trace whose IR names an inlined function and module constants: the page is written after
        # the module is gone, from the IR text printed while it lived.
        dump4 = os.path.join(tmp, "dump4")
        p = run(a.vm, os.path.join(a.source_dir, "tests/runtime/programs/jit_dump_inlined_calls.tsb"), "--dump", dump4,
                "--jit-param", "async=0")
        check(p.returncode == 0 and p.stdout == "true\n", "a trace with an inlined call dumps without a crash", p)
        with open(os.path.join(dump4, "index.html")) as f:
            check("scaled" in f.read(), "its page names the inlined function", p)

        # Bad paths fail before the program runs.
        p = run(a.vm, script, "--dump", os.path.join(log, "sub"))
        # The message says in plain words which part of the path is in the way.
        check(p.returncode == 2 and p.stdout == "" and
              p.stderr.strip() == f"tessera-vm: --dump {os.path.join(log, 'sub')}: cannot make this directory: "
              f"{log} is a file, not a directory",
              "--dump under a file is an error naming the file in the way, exit 2, before the run", p)
        p = run(a.vm, script, "--dump", log)
        check(p.returncode == 2 and p.stdout == "" and
              p.stderr.strip() == f"tessera-vm: --dump {log}: that is a file, not a directory "
              "(give a directory: it is made if missing)", "--dump FILE is exit 2 and says it is a file", p)
        p = run(a.vm, script, "--metrics", os.path.join(tmp, "missing", "m.jsonl"))
        check(p.returncode == 2 and p.stdout == "" and "--metrics" in p.stderr, "--metrics that cannot be written is exit 2", p)
        p = run(a.vm, script, f"--jit-log={os.path.join(tmp, 'missing', 'x.log')}")
        check(p.returncode == 2 and p.stdout == "" and "--jit-log" in p.stderr and "cannot be written" in p.stderr,
              "a --jit-log file that cannot be written is exit 2, before the run", p)

        # A runtime error still leaves the events.
        bad = os.path.join(tmp, "bad.tsb")
        with open(bad, "w") as f:
            f.write("let s = 0\nfor i in range(500) { s = s + i }\nprint(s)\nprint([1][5])\n")
        dump2 = os.path.join(tmp, "dump2")
        p = run(a.vm, bad, "--dump", dump2, "--jit-param", "async=0")
        check(p.returncode != 0 and p.stdout == "124750\n", "the program ends in a runtime error", p)
        with open(os.path.join(dump2, "events.jsonl")) as f:
            names = [json.loads(l)["event"] for l in f]
        check("trace.stop" in names and "trace.compiled" in names, "its events.jsonl was written", p)
        check(all(os.path.exists(os.path.join(dump2, f)) for f in ("traces.dot", "timeline.json", "index.html")),
              "and its traces.dot, timeline.json and index.html", p)
        check_timeline(os.path.join(dump2, "timeline.json"), {"record", "trace", "compile", "run"})

        # The fused kernel a trace calls is in the tree.
        dump3 = os.path.join(tmp, "dump3")
        p = run(a.vm, tensors, "--dump", dump3, "--device=cpu")
        with open(os.path.join(dump3, "traces.dot")) as f:
            dot = f.read()
        check(re.search(r'k[0-9a-f]{12} \[shape=component.*label="kernel \(\d+ ops\)\\nmul add tanh', dot) is not None
              and re.search(r"t0 -> k[0-9a-f]{12} \[style=dotted", dot) is not None,
              "the trace's fused kernel is a node, called by trace 0", p)
        check_timeline(os.path.join(dump3, "timeline.json"), {"kernel", "trace", "compile"},
                       names={"kernel compile K2"}, prefixes={"kernel k"})
    print("all ok")


if __name__ == "__main__":
    main()
