#!/usr/bin/env python3
"""--dump DIR/index.html, the trace viewer (docs/observability.md), loaded in
headless Chromium: for each view (#summary, #source, #trace=0, #trace=1, #tree,
a fused kernel's #kernel=ID, and #gpu) the page runs without a JavaScript
error and its DOM holds what that view must show: the --stats text, the source
with its trace markers, the traces' IR per pass and as compiled, their exits
and side traces, the trace tree's SVG, the kernel's region and generated code,
and, on the CPU, why there are no GPU kernels (gpu_profile_cli_test.py draws
them, with their rooflines, on the emulated GPU with the CUPTI double). The
page is self-contained (no external script, style, font or image). Skips
(exit 77) where Chromium is not installed.
Usage: trace_viewer_test.py --vm build/tessera-vm --source-dir .
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def check(cond, what, detail=""):
    if not cond:
        sys.exit(f"FAIL: {what}\n{detail[-3000:]}")
    print(f"ok: {what}")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def dom(browser, page, view):
    """The page's DOM after its script ran, at #view (without the embedded data)."""
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--virtual-time-budget=5000", "--dump-dom", f"file://{page}#{view}"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: chromium could not load {page}#{view}:\n{p.stderr[-2000:]}")
    text = re.sub(r'<script type="application/json" id="tessera-data">.*?</script>', "", p.stdout, flags=re.S)
    check('data-ready="1"' in text, f"#{view}: the page's script ran to its end", text)
    errors = re.search(r'<div id="errors">(.*?)</div>', text, re.S)
    check(errors is not None and errors.group(1) == "", f"#{view}: no JavaScript error", errors.group(1) if errors else text)
    return html.unescape(text)


def view_of(d):
    """The view's part of a DOM from dom() (not the navigation, nor the page's script)."""
    m = re.search(r'<section id="view">(.*?)</section>', d, re.S)
    check(m is not None, "the page has its view", d)
    return m.group(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: Chromium is not installed (Debian's chromium; tools/install-deps.sh installs it)")
        sys.exit(SKIP)
    script = os.path.join(a.source_dir, "tests/runtime/programs/jit_log_shapes.tsb")
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "dump")
        p = subprocess.run([a.vm, "run", script, "--jit-param", "async=0", "--jit-param", "blacklist=2", "--jit-param", "maxrecord=100",
                            "--dump", dump],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and p.stdout == "4000\n6000\n", "the program runs with --dump", p.stderr)
        page = os.path.join(dump, "index.html")
        with open(page) as f:
            raw = f.read()
        check(not re.search(r'<(script|img|iframe)[^>]*\ssrc=|<link[^>]*\shref=|@import|url\(', raw),
              "the page loads nothing from elsewhere (no src, link, @import or url())")

        d = dom(browser, page, "summary")
        check("tessera-vm stats" in d and "traces: 2 recorded" in d, "#summary shows --stats", d)
        check('href="#trace=0"' in d and 'href="#trace=1"' in d, "the navigation lists both traces", d)
        # Failures first: the loop at line 12 aborts (too long) until it is blacklisted.
        v = view_of(d)
        check(v.find("Failures (") < v.find("--stats") and re.search(
            r'<td class="kind">aborted</td><td><a href="#line=12">jit_log_shapes.tsb:12</a></td><td>TraceTooLong</td>', v)
              and re.search(r'<td class="kind">blacklisted</td><td><a href="#line=12">', v),
              "#summary: the aborted recordings and the blacklisted loop come first, with their line and reason", v)
        d = dom(browser, page, "source")
        check("▶ trace 0" in d and "↩ exit" in d and "for j in range(3000)" in d,
              "#source: the source with trace markers and exits", d)
        check(re.search(r'<div class="row" id="L12">.*✗ aborted TraceTooLong ×2.*✗ blacklisted loop ×1', d) is not None,
              "#source: line 12 is marked with its aborts and its blacklisting", d)
        d = dom(browser, page, "trace=0")
        check("Trace 0 — loop at jit_log_shapes.tsb:6" in d, "#trace=0: its title", d)
        check(">recorded<" in d and ">fold<" in d and ">dce<" in d, "#trace=0: a button per pass", d)
        check(re.search(r"\d{4} [> ] +none LOOP", d) is not None and "SNAP #0" in d,
              "#trace=0: the IR with its snapshots", d)
        check("T1 assembly (asmjit)" in d and "T2 LLVM IR" in d, "#trace=0: its T1 assembly and T2 LLVM IR", d)
        check(re.search(r'<a href="#trace=1">trace 1</a>', d) is not None, "#trace=0: its exit's side trace", d)

        # Object constants read as what they are, never as a raw pointer.
        calls = os.path.join(tmp, "calls.tsb")
        with open(calls, "w") as f:
            f.write('fn sq(x) { return x * x }\nlet s = 0\nlet names = []\n'
                    'for i in range(300) { s = s + sq(i) + abs(-1)\n push(names, "item") }\nprint(s, len(names))\n')
        dump3 = os.path.join(tmp, "dump3")
        p = subprocess.run([a.vm, "run", calls, "--jit-param", "async=0", "--dump", dump3], capture_output=True, text=True,
                           timeout=120)
        check(p.returncode == 0, "a program with function, built-in and string constants runs with --dump", p.stderr)
        d = view_of(dom(browser, os.path.join(dump3, "index.html"), "trace=0"))
        check(re.search(r"func KOBJ +fn sq", d) and re.search(r"bltn KOBJ +built-in abs", d)
              and re.search(r'str +KOBJ +"item"', d) and "value=fn sq" in d,
              "#trace=0: a function, a built-in and a string constant by name, the assumed global too", d)
        check(re.search(r"KOBJ +0x", d) is None and re.search(r"value=0x", d) is None,
              "#trace=0: no constant shows as a raw pointer", d)
        d = dom(browser, page, "trace=1")
        check("Trace 1 — side at jit_log_shapes.tsb:7" in d and "side trace of" in d, "#trace=1: the side trace", d)
        d = dom(browser, page, "tree")
        if shutil.which("dot"):
            check("<svg" in d and "trace 0" in d, "#tree: the trace tree's SVG", d)
        else:
            check("traces.dot is:" in d, "#tree: the trace tree's dot text (no Graphviz)", d)

        # A loop the JIT gives up on (too long a body, blacklisted) runs in the
        # interpreter: its time is still the line's heat. Long enough (about
        # 0.1 s) for tens of samples at the profile's ~4 ms tick: at 200000
        # iterations (27 ms) a loaded machine could see none.
        slow = os.path.join(tmp, "slow.tsb")
        with open(slow, "w") as f:
            f.write("let s = 0\nlet t = 0\n"
                    "for i in range(2000000) { s = s + i % 7; t = t + s % 3; s = s - t; t = t + 1; s = s + 2 }\n"
                    "print(s > 0)\n")
        dump5 = os.path.join(tmp, "slow")
        p = subprocess.run([a.vm, "run", slow, "--jit-param", "maxrecord=10", "--jit-param", "blacklist=2",
                            "--jit-param", "async=0", "--dump", dump5], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "a program whose loop is blacklisted runs with --dump", p.stderr)
        d = view_of(dom(browser, os.path.join(dump5, "index.html"), "source"))
        heat = {int(n): float(ms) for n, ms in re.findall(r'id="L(\d+)"><span class="no">\d+</span>'
                                                         r'<span class="heat" data-ms="([0-9.e+-]+)"', d)}
        check(heat.get(3, 0) > 0 and max(heat, key=heat.get) == 3,
              "#source: the interpreted loop (line 3) has the time, sampled in the interpreter", str(heat))

        # examples/jit_tour.tsb, the README's picture: heat is time, and the
        # per-pass diffs match instructions by identity.
        dump4 = os.path.join(tmp, "tour")
        p = subprocess.run([a.vm, "run", os.path.join(a.source_dir, "examples/jit_tour.tsb"), "--jit-param", "async=0",
                            "--device=cpu", "--dump", dump4], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and "longest Collatz chain below 20000: 278" in p.stdout, "examples/jit_tour.tsb runs", p.stderr)
        tour = os.path.join(dump4, "index.html")
        with open(os.path.join(dump4, "timeline.json")) as f:
            tracks = {e["args"]["name"] for e in json.load(f)["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
        check(tracks and not any(t.startswith("GPU") for t in tracks),
              "timeline.json of a run on the CPU draws no GPU track", str(tracks))
        d = view_of(dom(browser, tour, "summary"))
        check('<a href="timeline.json">timeline.json</a>' in d and "ui.perfetto.dev" in d,
              "#summary: links the timeline and says how to open it in Perfetto", d)
        d = view_of(dom(browser, tour, "source"))
        heat = {int(n): float(ms) for n, ms in re.findall(r'<div class="row[^"]*" id="L(\d+)"><span class="no">\d+</span>'
                                                         r'<span class="heat" data-ms="([0-9.e+-]+)"', d)}
        check(len(heat) == 31 and max(heat, key=heat.get) == 26,
              "#source: the MLP loop (line 26), where the time goes (its fused kernels), has the most heat", str(heat))
        check(re.search(r'id="L26">.*?<span style="width: 64px;"></span>', d) is not None and "The bar is the time spent" in d,
              "#source: its bar is the longest, and the page says the bar is time", d)
        d = view_of(dom(browser, tour, "trace=0"))
        cse = re.search(r'<button class="on">cse<span class="n">±(\d+)</span></button>', d)
        # CSE removes the constant true and the guard on it, and the snapshot
        # of that guard now starts at the next instruction: 3 changes, not
        # the 30 lines a renumbering touches.
        check(cse is not None and cse.group(1) == "3", "#trace=0: the CSE pass shows its 3 changes", d)
        # Source, bytecode and IR interleaved; snapshots name the locals they restore.
        inter = re.search(r'<pre class="code interleaved">(.*?)</pre>', d, re.S)
        rows = re.findall(r'<span class="(srcline|bcline|irline)">([^<]*)</span>', inter.group(1) if inter else "")
        kinds = [k for k, _ in rows]
        at = next((i for i, (k, t) in enumerate(rows) if k == "srcline" and t.startswith("jit_tour.tsb:9  if n % 2 == 0")), None)
        check(at is not None and rows[at + 1][0] == "bcline" and "MODK" in rows[at + 1][1] and "collatz_steps" in rows[at + 1][1]
              and rows[at + 2][0] == "irline" and "IMOD" in rows[at + 2][1],
              "#trace=0: the IR interleaved with its source line (9) and bytecode (MODK), as jitviewer shows it", str(rows))
        check(kinds.count("srcline") >= 3 and any(k == "irline" and re.search(r"SNAP #1 .*\[n=\d{4} steps=\d{4}\]", t) for k, t in rows),
              "#trace=0: its snapshots name the locals they restore (n, steps)", str(rows))
        t1 = re.search(r"<summary>T1 assembly \(asmjit\)</summary><pre class=\"code\">(.*?)</pre>", d, re.S)
        check(t1 is not None and re.search(r"; 0009 IMOD\n", t1.group(1)) and "; exit through snapshot #1 (guard 0008)" in t1.group(1)
              and "; back-edge: PHI moves" in t1.group(1), "#trace=0: T1's assembly marks the IR instruction and the exit each block implements",
              t1.group(1)[:3000] if t1 else d)
        t2 = re.search(r"<summary>T2 machine code \(disassembled[^<]*</summary><pre class=\"code\">(.*?)</pre>", d, re.S)
        check(t2 is not None and re.search(r"^; 0008 GUARDT\n", t2.group(1), re.M)
              and re.search(r"^; 0008 GUARDT — its exit through snapshot #1\n", t2.group(1), re.M)
              and re.search(r"^ +[0-9a-f]+:\t(cmp|jne|je)\t", t2.group(1), re.M)
              # (which guard's: the exit's first instruction may be a constant with no IR instruction)
              and re.search(r"\tj[a-z]+\t\d+\t; to [0-9a-f]+: \d{4} GUARD[TF] — its exit through snapshot #\d+$", t2.group(1), re.M)
              and re.search(r"\tj[a-z]+\t-\d+\t; to [0-9a-f]+: \d{4} [A-Z]+$", t2.group(1), re.M),
              "#trace=0: T2's machine code, disassembled, each run headed by its IR instruction, the exit by its snapshot; "
              "a guard's branch names the exit it takes, the back-edge the IR instruction it loops to",
              t2.group(1)[:3000] if t2 else d)
        dels = re.findall(r'<span class="del">([^<]*)</span>', d)
        adds = re.findall(r'<span class="add">([^<]*)</span>', d)
        check(len(dels) == 3 and "KBOOL" in dels[0] and "GUARDT" in dels[1] and dels[2].startswith("SNAP #2")
              and len(adds) == 1 and adds[0].startswith("SNAP #2"),
              "#trace=0: the removed constant and guard, and the snapshot whose start moved, are the only marked lines",
              str(dels) + str(adds))
        d = view_of(dom(browser, tour, "kernel=" + re.search(r'href="#kernel=(k[0-9a-f]{12})"', dom(browser, tour, "summary")).group(1)))
        check(re.search(r'class="facts kernel-figures">[1-9]\d* calls, [0-9.]+ ms \([0-9.]+ ms per call\) on the cpu, [0-9.,e+-]+ GB/s, '
                        r'[0-9.,e+-]+ GFLOP/s; compiled as K2 on the cpu(, K3 on the cpu)?<', d)
              is not None, "#kernel: its calls, time, GB/s, GFLOP/s and tiers", d)

        tensors = os.path.join(tmp, "tensors.tsb")
        with open(tensors, "w") as f:
            f.write("let x = arange(300, dtype=f32) * 0.01\nlet acc = 0.0\n"
                    "for i in range(200) { acc = acc + item(sum(tanh(x * 1.5 + x) * 2.0)) }\nprint(acc > 0)\n")
        dump2 = os.path.join(tmp, "dump2")
        log, metrics = os.path.join(tmp, "jit.log"), os.path.join(tmp, "metrics.jsonl")
        p = subprocess.run([a.vm, "run", tensors, "--device=cpu", "--dump", dump2, f"--jit-log={log}", "--metrics", metrics],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "the tensor program runs with --dump", p.stderr)
        page2 = os.path.join(dump2, "index.html")
        d = dom(browser, page2, "summary")
        kernel = re.search(r'href="#kernel=(k[0-9a-f]{12})"', d)
        check(kernel is not None, "the navigation lists the fused kernel", d)
        # One name per kernel: the log's kernel events, the metrics and the
        # timeline name it as the viewer does.
        name = kernel.group(1)
        with open(log) as f:
            events = [l for l in f if " kernel." in l]
        check(events and all(f"kernel={name}" in l for l in events),
              f"--jit-log: every kernel event names the kernel {name}", "".join(events))
        with open(metrics) as f:
            mtext = f.read()
        check(f"kernel {name} (" in mtext and "region-" not in mtext, f"--metrics names the kernel {name}", mtext)
        with open(os.path.join(dump2, "timeline.json")) as f:
            ttext = f.read()
        names = set(re.findall(r'"kernel": ?"([^"]+)"', ttext))
        check(names == {name}, f"timeline.json: the kernel's spans and events name it {name}", str(names))
        d = dom(browser, page2, "kernel=" + kernel.group(1))
        check("Region (Graph IR)" in d and "tanh" in d and "Kernel IR" in d and "CUDA C++" in d,
              "#kernel: its region, kernel IR and CUDA C++", d)
        check("called by trace 0" in d, "#kernel: the trace that calls it", d)
        check("On the GPU (CUPTI)" not in view_of(d), "#kernel: no GPU records for a kernel that ran on the CPU", d)
        d = view_of(dom(browser, page2, "gpu"))
        check("GPU kernels" in d and "No GPU kernel was recorded: no kernel ran on a GPU." in d and "<svg" not in d,
              "#gpu on the CPU: why there are no GPU kernels", d)
    print("all ok")


if __name__ == "__main__":
    main()
