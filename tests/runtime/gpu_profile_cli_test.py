#!/usr/bin/env python3
"""The GPU's kernels as CUPTI recorded them, end to end (docs/observability.md,
docs/gpu.md "Profiling with CUPTI"), on the host emulation of a GPU with the
CUPTI test double (TESSERA_CUPTI_LIBRARY) in CUPTI's place:

  - --stats has the "gpu profile: CUPTI" line with its records, a "gpu
    kernel" line per kernel (calls, registers, occupancy) and, since the
    emulation is measured against an H100's peaks, a "far below its
    roofline" line;
  - --dump's timeline.json has the GPU device track with a span per record
    of the fused kernel (their durations summing to its device time),
    beside the VM track's calls of it;
  - --metrics' run line has gpu_kernels (the --stats figures: calls,
    registers, threads, blocks, the roofline's bound) and gpu_profile (the
    double's description, the records, the roofline's limits);
  - --dump's index.html holds the same kernels, and (where Chromium is)
    its #gpu view draws the table and each kernel's roofline as an SVG;
  - on the emulation without the double, CUPTI is not used, and --stats,
    --metrics and the viewer say why;
  - on the CPU, --stats says "CUPTI not loaded: no kernel ran on a GPU" and
    no library of CUPTI's is opened (LD_DEBUG=files lists what the loader
    opened), even with TESSERA_CUPTI_LIBRARY naming the double.
Usage: gpu_profile_cli_test.py --vm build/tessera-vm --cupti-double libtessera_cupti_double.so
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from device_cli_test import check  # noqa: E402  (stops at the first failure, with the run's output)
from trace_viewer_test import chromium, dom, view_of  # noqa: E402  (the viewer's headless-Chromium helpers)

# A chain of fused calls: y stays on the device between them. 80 iterations
# get the loop traced (hotloop=56) and give the fused kernel a few calls;
# specialize=0 keeps it at K2, one host compile.
PROGRAM = ("let x = arange(256, dtype=f32) * 0.01\nlet y = x * 1.0\nfor i in range(80) {\n"
           "  y = tanh(y * 0.9 + x) * 0.5 + 0.1\n}\nprint(item(sum(y)) > 0)\n")
ARGS = ["--jit-param", "async=0", "--jit-param", "kcache=0", "--jit-param", "specialize=0", "--stats"]
PROFILE = re.compile(r"^  gpu profile: (CUPTI [^:]*\(.*\)): (\d+) kernel records \((\d+) dropped\)", re.M)
ROOFLINE = re.compile(r"^  gpu roofline: (\d+) GB/s, (\d+) GFLOP/s FP32, (\d+) GFLOP/s on tensor cores \((.*)\)$", re.M)
KERNEL = re.compile(r"^  gpu kernel (gpu k[0-9a-f]{12} \([^)]*\)) (\S+) (K\d) ([^:]+): (\d+) calls, ([\d.]+) ms on the device.*"
                    r"of its roofline \((\d+) GFLOP/s at [\d.]+ FLOP/B\); (\d+) registers, (\d+) B static \+ (\d+) B dynamic "
                    r"shared memory, (\d+) threads x (\d+) blocks, occupancy (\d+)% \(theoretical\)$", re.M)
FAR_BELOW = re.compile(r"^  gpu kernel (gpu k[0-9a-f]{12} \([^)]*\)) (\S+): far below its roofline: [\d.]+ GFLOP/s achieved of (\d+) ",
                       re.M)


def run(vm, script, *args, env=None):
    base = {k: v for k, v in os.environ.items() if k not in ("TESSERA_GPU_EMULATION", "TESSERA_CUPTI_LIBRARY", "LD_DEBUG")}
    return subprocess.run([vm, "run", script, *args], capture_output=True, text=True, env=dict(base, **(env or {})),
                          timeout=300)


def run_line(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    runs = [r for r in lines if r["record"] == "run"]
    check(len(runs) == 1, f"{os.path.basename(path)} has one run line")
    return runs[0]


def page_data(dump):
    """The run's data embedded in index.html (what the page's script draws)."""
    with open(os.path.join(dump, "index.html")) as f:
        m = re.search(r'<script type="application/json" id="tessera-data">(.*?)</script>', f.read(), re.S)
    check(m is not None, "index.html embeds the run's data")
    return json.loads(m.group(1))


def check_emulation_with_cupti(vm, double, d, script):
    dump, metrics = os.path.join(d, "dump"), os.path.join(d, "m.jsonl")
    p = run(vm, script, "--device=gpu", *ARGS, "--dump", dump, "--metrics", metrics,
            env={"TESSERA_GPU_EMULATION": "1", "TESSERA_CUPTI_LIBRARY": double, "LD_DEBUG": "files"})
    check(p.returncode == 0 and p.stdout == "true\n", "the chain runs on the emulated GPU with the CUPTI double", p)
    # What check_cpu asserts is absent: the loader's line for the double.
    check(any(re.match(r"^\s*\d+:\s+file=.*cupti_double", line) for line in p.stderr.splitlines()),
          "LD_DEBUG=files lists the double as opened", p)
    prof = PROFILE.search(p.stderr)
    check(prof is not None and double in prof.group(1), "--stats: gpu profile: CUPTI (the double), its records", p)
    records, dropped = int(prof.group(2)), int(prof.group(3))
    check(records > 0 and dropped == 0, f"... {records} records, none dropped", p)
    roof = ROOFLINE.search(p.stderr)
    check(roof is not None and "H100" in roof.group(4), "--stats: the roofline is an H100's (the emulation's stand-in)", p)
    kernels = KERNEL.findall(p.stderr)
    check(len(kernels) >= 1, "--stats: a gpu kernel line with calls, registers, shared memory, threads, occupancy", p)
    check(sum(int(k[4]) for k in kernels) == records, "... their calls add up to the records", p)
    far = FAR_BELOW.findall(p.stderr)
    check({(k[0], k[1]) for k in kernels} == {(f[0], f[1]) for f in far},
          "--stats: each kernel is far below its roofline (an H100's peaks against the host)", p)

    # The timeline: the device track's spans are the records, beside the VM's calls.
    with open(os.path.join(dump, "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    names = {e["args"]["name"]: e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    device_tid = names.get("GPU device (kernels as they ran)")
    check(device_tid is not None, "timeline.json names the GPU device track")
    site = kernels[0][0]
    spans = [e for e in events if e["ph"] == "X" and e["tid"] == device_tid]
    check(len(spans) == records and all(e["name"] == site and e["cat"] == "gpu" and e["args"]["track"] == "device"
                                        for e in spans),
          f"timeline.json: {len(spans)} spans of {site} on the device track, one per record")
    device_ms = sum(float(k[5]) for k in kernels if k[0] == site)
    span_ms = sum(e["dur"] for e in spans) / 1000
    check(abs(span_ms - device_ms) <= 0.01 * device_ms + 0.01,
          f"... their durations are the kernel's device time ({span_ms:.3f} ms, --stats {device_ms:.3f} ms)")
    host_name = "kernel " + site[len("gpu "):]  # the VM track names the call by its region alone
    host = [e for e in events if e["ph"] == "X" and e["tid"] != device_tid and e["name"] == host_name
            and e["args"].get("device") == "gpu"]
    check(len(host) >= len(spans), f"timeline.json: the host's calls of the kernel ({host_name}) on the VM's track")

    # --metrics: the --stats figures, per kernel.
    r = run_line(metrics)
    gp = r["gpu_profile"]
    check(gp["cupti"] is not None and double in gp["cupti"] and "why_not" not in gp, "--metrics: gpu_profile names the double")
    check(gp["records"] == records and gp["dropped"] == 0 and gp["instrumentation_ms"] >= 0,
          "--metrics: gpu_profile's records are --stats'")
    check(gp["roofline"]["dram_gb_s"] == int(roof.group(1)) and gp["roofline"]["fp32_gflop_s"] == int(roof.group(2))
          and gp["roofline"]["tensor_gflop_s"] == int(roof.group(3)) and gp["roofline"]["source"] == roof.group(4),
          "--metrics: gpu_profile's roofline is --stats'")
    gk = {(k["site"], k["kernel"], k["tier"], k["variant"]): k for k in r["gpu_kernels"]}
    check(len(gk) == len(kernels), "--metrics: a gpu_kernels entry per --stats kernel line")
    for (site_, entry, tier, variant, calls, _ms, bound, regs, smem_s, smem_d, threads, blocks, occ) in kernels:
        k = gk.get((site_, entry, tier, variant))
        check(k is not None and k["calls"] == int(calls) and k["registers"] == int(regs) and k["threads"] == int(threads)
              and k["blocks"] == int(blocks) and k["static_smem"] == int(smem_s) and k["dynamic_smem"] == int(smem_d),
              f"--metrics: {tier} {entry}: calls {calls}, registers {regs}, threads x blocks {threads} x {blocks} as in --stats")
        rl = k["roofline"]
        check(rl["unit"] == "GFLOP/s" and round(rl["bound"]) == int(bound) and 0 < rl["fraction"] < 0.1
              and abs(rl["intensity"] - k["flops"] / k["bytes"]) < 1e-4,
              f"--metrics: {tier} {entry}: its roofline ({rl['fraction']:.2e} of {rl['bound']} GFLOP/s)")
        check(k["gflop_s"] > 0 and k["gb_s"] > 0 and abs(k["device_ms"] - float(_ms)) < 0.01 and round(k["occupancy"] * 100) == int(occ),
              f"--metrics: {tier} {entry}: device time, rates and occupancy")
        check("measured" not in k, f"--metrics: {tier} {entry}: no measured metrics (--profile-kernels was not given)")

    # The viewer: the same kernels, drawn.
    data = page_data(dump)
    check(data["gpu"]["kernels"] == r["gpu_kernels"] and data["gpu"]["profile"] == gp,
          "index.html: the GPU kernels and profile are --metrics'")
    browser = chromium()
    if not browser:
        print("skip: Chromium is not installed: the #gpu view is not drawn")
        return
    page = os.path.join(dump, "index.html")
    whole = dom(browser, page, "gpu")
    check('href="#gpu"' in whole, "#gpu: the navigation's GPU kernels entry", whole)
    v = view_of(whole)
    check(all(f'<td class="num">{k[4]}</td>' in v for k in kernels) and site in v and "(theoretical)" in v,
          "#gpu: the table with each kernel's calls and occupancy", v)
    pictures = re.findall(r'<svg class="roofline"[^>]*>.*?</svg>', v, re.S)
    check(len(pictures) == len(kernels), f"#gpu: a roofline SVG per kernel ({len(pictures)})", v)
    for svg in pictures:
        check('<circle class="point"' in svg and "of its bound" in svg and "DRAM 3,350 GB/s" in svg
              and "FP32 66,900 GFLOP/s" in svg and "tensor cores 989,000 GFLOP/s" in svg,
              "... with the kernel's point, its fraction of the bound, the bandwidth and both ceilings", svg)
    kid = re.search(r"k[0-9a-f]{12}", site).group(0)
    v = view_of(dom(browser, page, "kernel=" + kid))
    check("On the GPU (CUPTI)" in v and '<svg class="roofline"' in v, f"#kernel={kid}: its GPU records and roofline", v)

    # A kernel without FLOPs shows its GB/s against the bandwidth. No fused
    # kernel computes none, so this is the real page with its kernel's FLOPs
    # set to 0 and its roofline as roofline_of gives it then.
    with open(page) as f:
        text = f.read()
    no_flops = dict(data)
    k = dict(data["gpu"]["kernels"][0], flops=0, gflop_s=0)
    k["roofline"] = {"bound": gp["roofline"]["dram_gb_s"], "unit": "GB/s", "fraction": k["gb_s"] / gp["roofline"]["dram_gb_s"],
                     "intensity": 0}
    no_flops["gpu"] = {"profile": gp, "kernels": [k]}
    blob = json.dumps(no_flops).replace("</", "<\\/")
    bar_page = os.path.join(d, "no_flops.html")
    with open(bar_page, "w") as f:
        f.write(re.sub(r'(<script type="application/json" id="tessera-data">).*?(</script>)', lambda m: m.group(1) + blob + m.group(2),
                       text, count=1, flags=re.S))
    v = view_of(dom(browser, bar_page, "gpu"))
    check('<svg class="roofline bandwidth"' in v and "GB/s: " in v and "of the DRAM's 3,350 GB/s (no FLOPs)" in v
          and '<circle class="point"' not in v, "#gpu: a kernel without FLOPs: its GB/s against the bandwidth, as a bar", v)


def check_emulation_without_cupti(vm, d, script):
    dump, metrics = os.path.join(d, "dump-nocupti"), os.path.join(d, "nocupti.jsonl")
    p = run(vm, script, "--device=gpu", *ARGS, "--dump", dump, "--metrics", metrics, env={"TESSERA_GPU_EMULATION": "1"})
    check(p.returncode == 0 and p.stdout == "true\n", "the chain runs on the emulated GPU without the double", p)
    check("  gpu profile: CUPTI not used: the host emulation has no CUPTI" in p.stderr and "  gpu kernel " not in p.stderr,
          "--stats: gpu profile: CUPTI not used: the host emulation has no CUPTI", p)
    gp = run_line(metrics)["gpu_profile"]
    check(gp["cupti"] is None and gp["why_not"].startswith("the host emulation has no CUPTI") and gp["records"] == 0,
          "--metrics: gpu_profile says why CUPTI was not used")
    check(run_line(metrics)["gpu_kernels"] == [], "--metrics: no gpu_kernels")
    browser = chromium()
    if browser:
        v = view_of(dom(browser, os.path.join(dump, "index.html"), "gpu"))
        check("No GPU kernel was recorded: the host emulation has no CUPTI" in html.unescape(v), "#gpu says why", v)


def check_cpu(vm, double, d, script):
    metrics = os.path.join(d, "cpu.jsonl")
    p = run(vm, script, "--device=cpu", *ARGS, "--metrics", metrics, env={"LD_DEBUG": "files", "TESSERA_CUPTI_LIBRARY": double})
    check(p.returncode == 0 and p.stdout == "true\n", "the chain runs on the CPU", p)
    check("  gpu profile: CUPTI not loaded: no kernel ran on a GPU (device: cpu (--device=cpu))" in p.stderr,
          "--stats on the CPU: gpu profile: CUPTI not loaded: no kernel ran on a GPU", p)
    loader = [line for line in p.stderr.splitlines() if re.match(r"^\s*\d+:", line)]
    check(any("file=" in line for line in loader), "LD_DEBUG=files lists the libraries the loader opened", p)
    opened = [line for line in loader if "cupti" in line.lower()]
    check(not opened, "... and none of them is CUPTI's (TESSERA_CUPTI_LIBRARY names the double, unused)",
          p if opened else None)
    r = run_line(metrics)
    check(r["gpu_profile"] == {"cupti": None, "why_not": "no kernel ran on a GPU"} and r["gpu_kernels"] == [],
          "--metrics on the CPU: gpu_profile: no kernel ran on a GPU")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    ap.add_argument("--cupti-double", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tessera-gpu-profile-") as d:
        script = os.path.join(d, "chain.tsb")
        with open(script, "w") as f:
            f.write(PROGRAM)
        check_emulation_with_cupti(a.vm, os.path.abspath(a.cupti_double), d, script)
        check_emulation_without_cupti(a.vm, d, script)
        check_cpu(a.vm, os.path.abspath(a.cupti_double), d, script)
    print("all ok")


if __name__ == "__main__":
    main()
