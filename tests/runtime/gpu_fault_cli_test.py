#!/usr/bin/env python3
"""A GPU fault that surfaces while a compiled trace reads a tensor's elements
(tessera_jit_tensor_fetch, a helper that cannot make the trace exit) ends the
run with exit status 1 and a runtime error naming the crash capture, as a
fault in a fused call does; not with an abort. On the host emulation:
TESSERA_TEST_GPU_FAULT=download:N makes the Nth copy to the host fault, after
the loop of tests/runtime/programs/gpu_fetch_in_trace.tsb was compiled, so
that the trace itself makes that copy.

Usage: gpu_fault_cli_test.py --vm build/tessera-vm
"""
import os
import sys
import tempfile

from cli_checks import check, finish, run, vm_args

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = vm_args()
    with tempfile.TemporaryDirectory() as crashes:
        env = {"TESSERA_GPU_EMULATION": "1", "TESSERA_TEST_GPU_FAULT": "download:150", "TESSERA_CRASH_DIR": crashes}
        rc, out, err = run(args.vm, "run", os.path.join(HERE, "programs", "gpu_fetch_in_trace.tsb"), "--device=gpu",
                           "--jit-param", "async=0", "--jit-param", "kcache=0", "--jit-param", "gputune=0",
                           env=env, timeout=300)
        check(rc == 1, "a fault while a trace reads a tensor ends the run with exit status 1", f"rc={rc}\n{err[-2000:]}")
        check("compiled trace" in err and "runtime error" in err and "TESSERA_TEST_GPU_FAULT=download:150" in err,
              "the message says a compiled trace's read failed, with the device's error", err[-2000:])
        dirs = os.listdir(crashes)
        check(len(dirs) == 1 and os.path.isfile(os.path.join(crashes, dirs[0], "error.txt")),
              "a crash capture is written", str(dirs))
        check(bool(dirs) and dirs[0] in err, "the message names the crash capture", err[-2000:])
        check("the run stops here (exit status 1" in err, "the message says the run stops there", err[-2000:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
