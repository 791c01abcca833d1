#!/usr/bin/env python3
"""NVTX ranges end to end (docs/observability.md, "NVTX ranges"): tessera-vm runs
tests/runtime/programs/nvtx_phases.tsb with NVTX's tool variable,
NVTX_INJECTION64_PATH, naming the test double (tests/vm/core/nvtx_test_double.cpp, which
logs each push and pop to $TESSERA_NVTX_TEST_LOG), as Nsight Systems would name its own:

  - on the CPU: a range per trace entry, "trace N (nvtx_phases.tsb:LINE)", one per fused call,
    "kernel kHASH (OPS)", with `host` inside it, and `comm` for all_reduce;
  - on the host emulation of a GPU: `copy` (uploads inside a call, the host's reads), `mma` (the
    product) and `reduce` (the softmax's kernel) inside the calls' ranges, and no `host`;
  - every thread's pushes and pops balance and nest, and the output is the run's without a tool;
  - without NVTX_INJECTION64_PATH nothing is loaded: the loader loads no NVTX library
    (LD_DEBUG=files) and the double writes nothing.
Usage: nvtx_cli_test.py --vm build/tessera-vm --double libnvtx_test_double.so --source-dir .
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_checks import check, finish  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--vm", required=True)
ap.add_argument("--double", required=True)
ap.add_argument("--source-dir", required=True)
a = ap.parse_args()
PROGRAM = os.path.join(a.source_dir, "tests/runtime/programs/nvtx_phases.tsb")
ARGS = ["--jit-param", "async=0", "--jit-param", "kcache=0", "--jit-param", "gputune=0"]
TRACE = re.compile(r"^trace \d+ \((.*/)?nvtx_phases\.tsb:\d+\)$")  # the script as the command line names it
LOADED = re.compile(r"\bfile=(\S+)")
KERNEL = re.compile(r"^kernel k[0-9a-f]{12} \(.+\)$")


def run(device, env, extra=()):
    return subprocess.run([a.vm, "run", PROGRAM, f"--device={device}", *ARGS, *extra], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **env})


def ranges(log):
    """The pushes of the log, each with the names open around it; and whether every thread's
    pops matched its pushes."""
    stacks, pushes, balanced = {}, [], True
    with open(log) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if parts[0] == "push":
                stack = stacks.setdefault(parts[1], [])
                pushes.append((parts[2], list(stack)))
                stack.append(parts[2])
            elif parts[0] == "pop":
                stack = stacks.setdefault(parts[1], [])
                balanced = balanced and bool(stack)
                if stack:
                    stack.pop()
    return pushes, balanced and all(not s for s in stacks.values())


with tempfile.TemporaryDirectory() as tmp:
    log = os.path.join(tmp, "nvtx.log")
    env = {"TESSERA_NVTX_TEST_LOG": log, "TESSERA_GPU_EMULATION": "1"}
    env.pop("NVTX_INJECTION64_PATH", None)
    os.environ.pop("NVTX_INJECTION64_PATH", None)
    tool = {**env, "NVTX_INJECTION64_PATH": a.double}

    # Without a tool: nothing of NVTX is loaded.
    plain = run("cpu", {**env, "LD_DEBUG": "files"})
    check(plain.returncode == 0, "the program runs without a tool", plain.stderr[-2000:])
    loaded = [l for l in plain.stderr.splitlines() if any("nvtx" in os.path.basename(f).lower() for f in LOADED.findall(l))]
    check(not loaded, "without NVTX_INJECTION64_PATH the loader loads no NVTX library", "\n".join(loaded[:5]))
    check(not os.path.exists(log), "without NVTX_INJECTION64_PATH the double is not called")
    stats = run("cpu", env, ["--stats"])
    check("  nvtx: no tool attached: nothing loaded" in stats.stderr, "without a tool --stats says NVTX loads nothing",
          stats.stderr[-2000:])
    stats = run("cpu", tool, ["--stats"])
    check("  nvtx: a tool is attached" in stats.stderr, "with the tool --stats says it is attached", stats.stderr[-2000:])
    os.remove(log)

    # On the CPU.
    p = run("cpu", {**tool, "LD_DEBUG": "files"})
    check(p.returncode == 0 and p.stdout == plain.stdout, "with the tool the output is the same", p.stdout + p.stderr[-2000:])
    check(any("nvtx_test_double" in l for l in p.stderr.splitlines() if "file=" in l),
          "with NVTX_INJECTION64_PATH the loader loads the tool")
    pushes, balanced = ranges(log)
    names = [n for n, _ in pushes]
    check(balanced, "the CPU run's pushes and pops balance on every thread")
    check(any(TRACE.match(n) for n in names), "a trace entry's range is named 'trace N (nvtx_phases.tsb:LINE)'",
          str(sorted(set(names))))
    calls = {n for n in names if KERNEL.match(n)}
    check(any("softmax" in n for n in calls) and any("matmul" in n for n in calls),
          "each fused call has a 'kernel kHASH (OPS)' range", str(calls))
    check(all(o and KERNEL.match(o[-1]) for n, o in pushes if n == "host") and "host" in names,
          "on the CPU a call's kernels run inside `host`, inside the call's range")
    check("comm" in names, "all_reduce is a `comm` range")
    check(not {"copy", "mma", "reduce"} & set(names), "the CPU run has no device phases", str(set(names)))

    # On the host emulation of a GPU.
    os.remove(log)
    p = run("gpu", tool)
    check(p.returncode == 0 and p.stdout == plain.stdout, "the emulated GPU's output is the CPU's", p.stdout + p.stderr[-2000:])
    pushes, balanced = ranges(log)
    names = [n for n, _ in pushes]
    check(balanced, "the GPU run's pushes and pops balance on every thread")
    check(any(TRACE.match(n) for n in names), "the GPU run has the trace's range")
    for phase, ops in (("mma", "matmul"), ("reduce", "softmax")):
        inside = [o for n, o in pushes if n == phase]
        check(inside and all(o and KERNEL.match(o[-1]) and ops in o[-1] for o in inside),
              f"`{phase}` ranges are inside the {ops} call's range", str(inside[:3]))
    copies = [o for n, o in pushes if n == "copy"]
    check(any(o and KERNEL.match(o[-1]) for o in copies), "uploads are `copy` ranges inside a call")
    check(any(not o or TRACE.match(o[-1]) for o in copies), "the host's reads of results are `copy` ranges outside calls")
    check("comm" in names and "host" not in names, "the GPU run has `comm` and no `host`", str(set(names)))

sys.exit(finish())
