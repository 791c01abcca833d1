#!/usr/bin/env python3
"""The generated CUDA C++ run on the host emulation, against the interpreter:
runs tests/codegen/cuda_emulation_test (GoogleTest, JSON output), whose every
comparison of a kernel's output with the interpreter's records its dtype,
shape and worst error as a test property (tests/codegen/kernel/
cuda_test_launch.h), and writes experiments/results/cuda-emulation-latest.md
(and, with --dated, a copy named by today's date).

Per test case (tests/codegen/kernel/cuda_test_cases.h): its output dtypes,
the output shapes compared (K2 on the first input set, K3 on every set),
the worst error |got - want| / (1 + |want|) and the tolerance (f32 1e-5,
f16/bf16 1e-2, ints and bools exact).

  cmake --build build --target cuda_emulation_test
  python3 experiments/harness/run_cuda_emulation.py [--test build/tests/codegen/cuda_emulation_test]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model  # noqa: E402
from run_kernel_tiers import built_from, write_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROPERTY = re.compile(r"dtype=(\S+) shape=(\[.*\]) worst=(\S+) tolerance=(\S+)")
KEY = re.compile(r"(\S+) set (\d+) (K2|K3) output (\d+)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", default=os.path.join(ROOT, "build/tests/codegen/cuda_emulation_test"))
    ap.add_argument("--out", default=os.path.join(ROOT, "experiments/results/cuda-emulation-latest.md"))
    ap.add_argument("--dated", action="store_true", help="also write cuda-emulation-DATE.md")
    args = ap.parse_args()
    if not os.path.exists(args.test):
        sys.exit(f"{args.test} not found: cmake --build build --target cuda_emulation_test")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "emulation.json")
        command = [args.test, "--gtest_filter=CudaEmulation.EveryKernelKind*", f"--gtest_output=json:{out}"]
        print("running", " ".join(command), file=sys.stderr)
        proc = subprocess.run(command, capture_output=True, text=True)
        with open(out) as f:
            data = json.load(f)
    test = data["testsuites"][0]["testsuite"][0]
    cases = {}  # name -> {"dtypes", "shapes", "worst", "tolerance", "count"}
    for key, value in test.items():
        k, p = KEY.fullmatch(key), PROPERTY.fullmatch(str(value))
        if not k or not p:
            continue
        c = cases.setdefault(k.group(1), {"dtypes": [], "shapes": [], "worst": 0.0, "ratio": 0.0, "count": 0,
                                           "tolerances": set()})
        dtype, shape, worst, tol = p.group(1), p.group(2), float(p.group(3)), float(p.group(4))
        if dtype not in c["dtypes"]:
            c["dtypes"].append(dtype)
        if shape not in c["shapes"]:
            c["shapes"].append(shape)
        c["worst"] = max(c["worst"], worst)
        c["tolerances"].add(tol)
        c["count"] += 1
    rows = []
    for name, c in cases.items():
        tols = ", ".join("exact" if t == 0 else f"{t:.0e}" for t in sorted(c["tolerances"]))
        rows.append(f"| {name} | {', '.join(c['dtypes'])} | {' '.join(c['shapes'])} | {c['count']} "
                    f"| {c['worst']:.2g} | {tols} |")
    failed = test.get("failures") or proc.returncode != 0
    today = datetime.date.today().isoformat()
    text = "\n".join([
        f"# Generated CUDA C++ on the host emulation, {today}",
        "",
        f"- machine: {cpu_model()}, no GPU; the kernels compiled by the host's C++ compiler against "
        "`codegen/kernel/cuda/tessera_cuda_host.h` (a block's threads as Boost.Context fibers)",
        f"- command: `python3 experiments/harness/run_cuda_emulation.py` (ran `{os.path.relpath(args.test, ROOT)} "
        "--gtest_filter=CudaEmulation.EveryKernelKind*`)",
        f"- built from {built_from()}",
        f"- result: {'FAILED (see the test output)' if failed else 'every comparison within its tolerance'}; "
        f"{sum(c['count'] for c in cases.values())} outputs compared over {len(cases)} cases",
        "",
        "| case | output dtypes | output shapes compared | comparisons | worst error | tolerance |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "Each case's K2 kernel (dims are parameters) runs on its first input set and its K3 kernel (dims constant) "
        "on every set; the sets include shapes that are not multiples of the tiles, size-1 and empty dims. The "
        "error is |got - want| / (1 + |want|) against the interpreter's kernels (`run_region_reference`); ints "
        "and bools must be equal. A worst error of 0 means every element was bit-equal.",
    ]) + "\n"
    write_report(text, args.out, f"cuda-emulation-{today}.md" if args.dated else None)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
