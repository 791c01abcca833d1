#!/usr/bin/env python3
"""--dump and --metrics of a run of several ranks (mpirun; docs/observability.md,
"A run of several ranks"), with mpirun -np 2 and -np 4 --oversubscribe:

  - every rank writes its dump to DIR/rank-K/ (timeline.json, events.jsonl,
    index.html, traces.dot), its timeline the process pid K + 1 named
    "rank K (tessera-vm run SCRIPT)" with its collectives on a track;
  - rank 0 merges the timelines into DIR/timeline.json: one named process
    per rank; each collective's span on every rank (each send's and recv's
    on its pair), each span with one piece of a flow (ph s/t/f, bp e, inside
    the span) whose id links that collective's spans on all of its ranks
    and no other, the pieces ordered in time (s first, f last); the clocks
    aligned: each barrier's spans on all ranks overlap (within the clock
    error the file states, where an offset was applied); DIR/index.html
    links each rank's page;
  - with --dump-keep 3 each rank keeps the same first and last steps, so
    every flow kept still links all its ranks;
  - --metrics: each rank appends its lines, each with rank and world_size,
    the run line with its collectives;
  - a run that fails on a rank leaves each rank's dump, no DIR/timeline.json
    (an earlier run's is removed), and says so on stderr;
  - without mpirun, collectives are drawn on the timeline without flows.
Skips (exit 77) where mpirun is not installed. Sets Open MPI's variables
that let mpirun run as root.
Usage: distributed_dump_cli_test.py --vm build/tessera-vm
"""
import bisect
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

from cli_checks import check, finish, run, vm_args

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "comm"))
from mpi_run import mpi_env  # noqa: E402

SKIP = 77
STEPS = 12

# Every collective, and a send and recv each way between ranks 2k and 2k+1.
PROGRAM = f"""let r = world_rank()
for i in range({STEPS}) {{
  let t = full([8], r + 1.0)
  let s = all_reduce(t)
  let g = all_gather(t)
  let h = reduce_scatter(t)
  let b = broadcast(t, root=0)
  if r % 2 == 0 {{
    send(t, r + 1)
    let back = recv(t, r + 1)
  }} else {{
    let got = recv(t, r - 1)
    send(got, r - 1)
  }}
  barrier()
}}
print("done", r)
"""
GROUP = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "barrier"]

ONE_PROCESS = f"""for i in range({STEPS}) {{
  let s = all_reduce(full([8], 1.0))
  barrier()
}}
"""

FAILS_ON_RANK_0 = """let r = world_rank()
let s = all_reduce(full([4], 1.0))
assert(r != 0, "rank 0 fails on purpose")
print("done", r)
"""


def mpirun(ranks, vm, *args):
    p = subprocess.run(["mpirun", "-np", str(ranks), "--oversubscribe", vm, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240, env=mpi_env())
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def load(path):
    with open(path) as f:
        return json.load(f)


def collectives_tid(events, pid):
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid and e["args"]["name"].startswith("collectives"):
            return e["tid"]
    return None


def spans_of(events):
    """The collectives' spans: {(pid, name, step, peer): (ts, end)}."""
    spans = {}
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "collective":
            key = (e["pid"], e["name"], e["args"]["step"], e["args"].get("peer"))
            spans[key] = (e["ts"], e["ts"] + e["dur"], e["tid"])
    return spans


def check_rank_dir(dump, rank, ranks, label):
    d = os.path.join(dump, f"rank-{rank}")
    names = set(os.listdir(d)) if os.path.isdir(d) else set()
    check({"timeline.json", "events.jsonl", "index.html", "traces.dot"} <= names,
          f"{label}: rank-{rank}/ has its timeline, events, page and trace tree", str(sorted(names)))
    tl = load(os.path.join(d, "timeline.json"))
    ev = tl["traceEvents"]
    other = tl["otherData"]
    check(other.get("rank") == rank and other.get("world_size") == ranks and "steady_clock_origin_ms" in other,
          f"{label}: rank {rank}'s timeline says its rank, the world's size and its clock's origin", json.dumps(other)[:300])
    check({e["pid"] for e in ev} == {rank + 1}, f"{label}: rank {rank}'s timeline is the process pid {rank + 1}")
    names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
    check(names == [f"rank {rank} (tessera-vm run prog.tsb)"], f"{label}: rank {rank}'s process is named", str(names))
    tid = collectives_tid(ev, rank + 1)
    spans = [e for e in ev if e["ph"] == "X" and e.get("cat") == "collective"]
    check(tid is not None and spans and all(e["tid"] == tid for e in spans),
          f"{label}: rank {rank}'s collectives are on the collectives track ({len(spans)} spans)")
    pieces = [e for e in ev if e["ph"] in "stf"]
    check(len(pieces) == len(spans), f"{label}: rank {rank}: a flow piece per collective's span",
          f"{len(pieces)} pieces, {len(spans)} spans")


def check_merged(dump, ranks, label, steps):
    """DIR/timeline.json: a process per rank, each collective linked across its ranks, clocks aligned."""
    tl = load(os.path.join(dump, "timeline.json"))
    ev = tl["traceEvents"]
    other = tl["otherData"]
    check(other.get("ranks") == ranks and len(other.get("clocks", [])) == ranks,
          f"{label}: the merge has {ranks} ranks and their clocks", json.dumps(other.get("clocks"))[:500])
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(procs == {r + 1: f"rank {r} (tessera-vm run prog.tsb)" for r in range(ranks)},
          f"{label}: one named process per rank", str(procs))
    check(all(e["ts"] >= 0 and {"ph", "pid", "tid", "name", "ts"} <= e.keys() for e in ev),
          f"{label}: every event has its fields and a time >= 0")
    by_track = collections.defaultdict(list)
    for e in ev:
        if e["ph"] != "M":
            by_track[(e["pid"], e["tid"])].append(e["ts"])
    check(all(a <= b for ts in by_track.values() for a, b in zip(ts, ts[1:])), f"{label}: each track's times never go back")

    spans = spans_of(ev)
    pids = set(range(1, ranks + 1))
    for name in GROUP:
        for step in {k[2] for k in spans if k[1] == name}:
            on = {k[0] for k in spans if k[1] == name and k[2] == step}
            if on != pids:
                check(False, f"{label}: {name} step {step} has a span on every rank", str(sorted(on)))
                return
    got = collections.Counter(k[1] for k in spans if k[0] == 1)
    check(all(got[n] == steps for n in GROUP) and got["send"] == steps and got["recv"] == steps,
          f"{label}: rank 0 has {steps} spans of each collective, send and recv", str(got))
    for (pid, name, step, peer) in spans:
        if name == "send" and (peer + 1, "recv", step, pid - 1) not in spans:
            check(False, f"{label}: rank {pid - 1}'s send {step} to {peer} has its recv")
            return

    # Each flow piece lies in one span of its own track; each span has one piece.
    starts = collections.defaultdict(list)
    for key, (ts, end, tid) in spans.items():
        starts[(key[0], tid)].append((ts, end, key))
    for v in starts.values():
        v.sort()
    piece_of = {}
    flows = collections.defaultdict(list)
    for e in ev:
        if e["ph"] not in "stf":
            continue
        check_ok = e.get("bp") == "e" and e.get("cat") == "collective" and isinstance(e.get("id"), int)
        v = starts[(e["pid"], e["tid"])]
        i = bisect.bisect_right(v, (e["ts"], float("inf"))) - 1
        if not check_ok or i < 0 or not (v[i][0] <= e["ts"] <= v[i][1]) or v[i][2] in piece_of:
            check(False, f"{label}: a flow piece binds to a span of its own", json.dumps(e))
            return
        piece_of[v[i][2]] = e
        flows[(e["cat"], e["name"], e["id"])].append(e)
    check(len(piece_of) == len(spans), f"{label}: each of the {len(spans)} collectives' spans has its flow piece",
          f"{len(piece_of)} pieces")
    span_of = {id(e): key for key, e in piece_of.items()}
    for fid, pieces in flows.items():
        keys = [span_of[id(e)] for e in pieces]
        names = {k[1] for k in keys}
        if names <= set(GROUP):
            ok = len(names) == 1 and len({k[2] for k in keys}) == 1 and {k[0] for k in keys} == pids
        else:  # a send and its recv: the same step, each the other's peer
            ok = (len(keys) == 2 and names == {"send", "recv"} and keys[0][2] == keys[1][2]
                  and keys[0][3] == keys[1][0] - 1 and keys[1][3] == keys[0][0] - 1)
        phases = [e["ph"] for e in sorted(pieces, key=lambda e: e["ts"])]
        ok = ok and phases == ["s"] + ["t"] * (len(phases) - 2) + ["f"]
        if not ok:
            check(False, f"{label}: flow {fid} links one collective's spans, s first and f last",
                  json.dumps([(k, e["ph"], e["ts"]) for k, e in zip(keys, pieces)]))
            return
    expected = len(GROUP) * steps + (ranks // 2) * 2 * steps
    check(len(flows) == expected and other.get("flows") == expected and other.get("flow_pieces_dropped") == 0,
          f"{label}: {expected} flows, one per collective (same ids on every rank), none dropped",
          f"{len(flows)} flows, otherData {other.get('flows')} / {other.get('flow_pieces_dropped')}")

    # Aligned clocks: every rank is inside a barrier when the last one arrives.
    tolerance = max([c["error_ms"] * 1000 for c in other["clocks"] if c["offset_used_ms"] != 0] + [0]) + 1e-3
    worst = float("-inf")
    for step in {k[2] for k in spans if k[1] == "barrier"}:
        b = [spans[(p, "barrier", step, None)] for p in pids]
        worst = max(worst, max(s[0] for s in b) - min(s[1] for s in b))
    check(worst <= tolerance, f"{label}: each barrier's spans on all ranks overlap "
          f"(latest start - earliest end: {worst:.3f} us, tolerance {tolerance:.3f} us)")
    with open(os.path.join(dump, "index.html")) as f:
        page = f.read()
    check("timeline.json" in page and all(f'href="rank-{r}/index.html"' in page for r in range(ranks)),
          f"{label}: DIR/index.html links the merge and each rank's page")


def check_metrics(path, ranks, label):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    check(lines and all(l.get("world_size") == ranks and 0 <= l.get("rank", -1) < ranks for l in lines),
          f"{label}: every --metrics line has rank and world_size", str(lines)[:300])
    runs = sorted((l for l in lines if l["record"] == "run"), key=lambda l: l["rank"])
    check([l["rank"] for l in runs] == list(range(ranks)), f"{label}: each rank appended its run line",
          str([l["rank"] for l in runs]))
    c = runs[0].get("collectives", {})
    check(c.get("calls", {}).get("all_reduce") == STEPS and c.get("calls", {}).get("send") == STEPS and c.get("bytes", 0) > 0,
          f"{label}: the run line counts the rank's collectives", json.dumps(c))


def main():
    args = vm_args()
    if not shutil.which("mpirun"):
        print("skip: mpirun is not installed (Open MPI: tools/install-deps.sh)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "prog.tsb")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        os.chdir(tmp)  # the process names say "prog.tsb"
        for ranks in (2, 4):
            label = f"-np {ranks}"
            dump, metrics = f"dump{ranks}", f"metrics{ranks}.jsonl"
            status, out, err = mpirun(ranks, args.vm, "run", "prog.tsb", "--dump", dump, "--metrics", metrics)
            check(status == 0 and sorted(out.split("\n")[:-1]) == [f"done {r}" for r in range(ranks)],
                  f"{label}: the run succeeds on every rank", f"exit {status}\nstdout {out}\nstderr {err[-2000:]}")
            check("not merged" not in err, f"{label}: nothing on stderr about the merge", err[-1000:])
            for r in range(ranks):
                check_rank_dir(dump, r, ranks, label)
            check_merged(dump, ranks, label, STEPS)
            check_metrics(metrics, ranks, label)

        # Bounds: the first 3 and last 3 steps of each collective (and of each pair's sends) on every rank.
        status, out, err = mpirun(4, args.vm, "run", "prog.tsb", "--dump", "keep", "--dump-keep", "3")
        check(status == 0, "--dump-keep 3: the run succeeds", err[-2000:])
        if status == 0:
            check_merged("keep", 4, "--dump-keep 3", 6)

        # A rank that fails: each rank's dump stays, nothing is merged (an earlier merge is removed).
        fail = os.path.join(tmp, "fail.tsb")
        with open(fail, "w") as f:
            f.write(FAILS_ON_RANK_0)
        os.makedirs("failed", exist_ok=True)
        with open(os.path.join("failed", "timeline.json"), "w") as f:
            f.write("{}")
        status, out, err = mpirun(2, args.vm, "run", "fail.tsb", "--dump", "failed")
        check(status != 0 and "rank 0 fails on purpose" in err, "a run that fails on rank 0 fails", err[-2000:])
        check("the ranks' timelines are not merged" in err and "the run failed on rank 0" in err,
              "it says that the timelines are not merged", err[-2000:])
        check(not os.path.exists(os.path.join("failed", "timeline.json")), "no DIR/timeline.json (the earlier one removed)")
        check(os.path.exists(os.path.join("failed", "rank-0", "timeline.json")), "rank 0's own timeline is written")

        # One process: the collectives on the timeline, no flows, no rank directories.
        with open("one.tsb", "w") as f:
            f.write(ONE_PROCESS)
        status, out, err = run(args.vm, "run", "one.tsb", "--dump", "single")
        one = load(os.path.join("single", "timeline.json")) if status == 0 else {"traceEvents": []}
        spans = [e for e in one["traceEvents"] if e.get("cat") == "collective"]
        check(status == 0 and len(spans) == 2 * STEPS and not any(e["ph"] in "stf" for e in one["traceEvents"])
              and not os.path.exists(os.path.join("single", "rank-0")),
              "without mpirun: the collectives' spans, no flows, no rank directories", err[-2000:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
