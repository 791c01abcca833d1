"""experiments/harness/run_gpu_profile.py on the host emulation of a GPU with the CUPTI test double
(no GPU): the profiled run's --stats lines, the GPU track of its timeline and the two overhead
criteria reach the report and its raw JSON, and the report says it is the emulation. It asserts
nothing about the figures themselves.

  python3 tests/experiments/gpu_profile_emulation_test.py --vm build/tessera-vm --cupti-double PATH
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm", required=True)
    ap.add_argument("--cupti-double", required=True)
    a = ap.parse_args()
    env = dict(os.environ, TESSERA_GPU_EMULATION="1", TESSERA_CUPTI_LIBRARY=a.cupti_double)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gpu-profile-latest.md")
        cmd = [sys.executable, os.path.join(REPO, "experiments", "harness", "run_gpu_profile.py"), "--vm", a.vm,
               "--program", os.path.join(REPO, "tests", "runtime", "programs", "gpu_chain.tsb"), "--args",
               "--vm-arg=--jit-param", "--vm-arg=async=0", "--vm-arg=--jit-param", "--vm-arg=kcache=0",
               "--vm-arg=--jit-param", "--vm-arg=gputune=0", "--out", out, "--json-dir", tmp]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            sys.exit(f"the harness failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        report = open(out).read()
        raw = json.load(open(next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".json"))))
    problems = []
    if "Host emulation with the CUPTI test double" not in report or not raw["emulated"]:
        problems.append("the report does not say it ran on the emulation")
    for want in ("tracing overhead", "runtime orchestration overhead", "gpu profile: CUPTI", "gpu kernel gpu k"):
        if want not in report:
            problems.append(f"the report lacks {want!r}")
    tl = raw["timeline"]
    if tl["kernels"] < 200:  # gpu_chain.tsb: 242 fused calls, each one kernel on the GPU track
        problems.append(f"{tl['kernels']} kernels on the timeline's GPU track, expected the run's 242")
    if not (0 < tl["device_busy_ms"] <= tl["device_span_ms"]) or tl["orchestration_pct"] is None:
        problems.append(f"the device's busy time and span do not make a figure: {tl}")
    if problems:
        sys.exit("\n".join(problems) + "\n\n" + report)
    print("ok: the report has both criteria, the GPU track's kernels and the profiled run's lines")


if __name__ == "__main__":
    main()
