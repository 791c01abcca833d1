"""experiments/harness/run_attention_bench.py --emulation: the attention and half-precision products
benchmark at tiny sizes on the host emulation of a GPU (no GPU, no PyTorch), so that the harness, the
benchmark's path through the GPU target and the report are exercised on every machine. Checks that
every cell has both tiers measured with a finite time and an output within docs/gpu.md's tolerance
of the interpreter's (f16/bf16: 1e-2 relative), and that the report says it is the emulation. It
asserts nothing about the times themselves.

  python3 tests/experiments/attention_bench_emulation_test.py --bench build/experiments/micro/attention_bench
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOLERANCE = {"f16": 1e-2, "bf16": 1e-2, "f32": 1e-5}


def check(tmp, out):
    problems = []
    with open(os.path.join(tmp, "attention_bench.json")) as f:
        data = json.load(f)
    with open(os.path.join(tmp, "cells.json")) as f:
        cells = json.load(f)["cells"]
    if not data.get("emulation"):
        problems.append("the benchmark's JSON does not say it ran on the emulation")
    kinds = {c["kind"] for c in cells}
    for want in ("attention", "matmul", "matmul_bias_relu"):
        if want not in kinds:
            problems.append(f"no {want} cell in the emulation profile")
    if not any(c["kind"] == "attention" and c["causal"] for c in cells) or not {"f16", "bf16"} <= {c["dtype"] for c in cells}:
        problems.append("the emulation profile lacks causal attention or one of f16 and bf16")
    results = {(r["cell"], r["tier"]): r for r in data["results"]}
    for c in cells:
        for tier in ("K2", "K3"):
            r = results.get((c["id"], tier))
            where = f"{c['id']} {tier}"
            if r is None:
                problems.append(f"{where}: missing")
                continue
            if r.get("status") != "ok":
                problems.append(f"{where}: {r.get('status')}: {r.get('reason')}")
                continue
            ms = r["stats"]["median_ms"]
            if not (isinstance(ms, (int, float)) and math.isfinite(ms) and ms > 0):
                problems.append(f"{where}: time {ms!r} is not a finite positive number")
            if not all(math.isfinite(x) for x in r["stats"]["ci95_ms"]) or not math.isfinite(r["tflops"]):
                problems.append(f"{where}: a confidence bound or the TFLOP/s is not finite")
            err, tol = r.get("max_rel_err"), TOLERANCE[c["dtype"]]
            if err is None or not math.isfinite(err) or err > tol:
                problems.append(f"{where}: error against the interpreter {err!r} (tolerance {tol}; "
                                f"max abs {r.get('max_abs_err')!r}, reference {r.get('reference')!r})")
            if tier == "K3" and not r.get("variant"):
                problems.append(f"{where}: no variant named")
    with open(out) as f:
        text = f.read()
    if "emulation" not in text.splitlines()[0]:
        problems.append("the report's title does not say it is the emulation")
    for c in cells:
        if "x".join(str(d) for d in c["shape"]) not in text:
            problems.append(f"the report has no row for {c['id']}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="attention-emulation-") as tmp:
        out = os.path.join(tmp, "attention-emulation-latest.md")
        env = dict(os.environ, TESSERA_GPU_EMULATION="1")
        cmd = [sys.executable, os.path.join(REPO, "experiments", "harness", "run_attention_bench.py"), "--emulation",
               "--bench", args.bench, "--out", out, "--json-dir", tmp]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        print(p.stdout)
        if p.returncode != 0:
            print(f"FAIL: run_attention_bench.py --emulation exited {p.returncode}")
            return 1
        # --emulation never writes the GPU's report.
        bad = subprocess.run(cmd[:-4] + ["--out", os.path.join(tmp, "attention-latest.md")], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        problems = check(tmp, out)
        if bad.returncode == 0 or os.path.exists(os.path.join(tmp, "attention-latest.md")):
            problems.append("--emulation --out attention-latest.md was not refused")
    for p in problems:
        print("FAIL: " + p)
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
