#!/usr/bin/env python3
"""--device end to end (docs/gpu.md, "Device selection"): runs tessera-vm on a tiny script.

  - --device=cpu and --device=auto run it; --stats names the device and why;
  - --device=auto without --stats does not look for the CUDA driver when no fused kernel runs
    (LD_DEBUG=libs lists what the loader searched for), and does with a fused hot loop;
  - --device=gpu without a usable GPU exits 2 before the script runs, with
    `tessera-vm: --device=gpu: <why>` on stderr (with a GPU it runs: exit 0);
  - TESSERA_CUDA_DRIVER pointing at a missing file or at the CUDA toolkit's
    stub library makes the GPU unusable and the reason says so;
  - --device=bogus is a usage error (exit 2);
  - --dump writes each fused kernel's CUDA C++ and PTX (PTX where NVRTC is installed; else a
    line saying why there is none).
Usage: device_cli_test.py --vm build/tessera-vm
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"
SCRIPT = "let t = ones([4]) * 2\nprint(item(sum(t)))\n"
HOT = ("let x = arange(64, dtype=f32) * 0.01\nlet acc = 0.0\nfor i in range(200) {\n"
       "  acc = acc + item(sum(tanh(x * 1.3 + x) * 2.0 - x))\n}\nprint(acc > 0)\n")
NVRTC = "/usr/local/cuda/lib64/libnvrtc.so.13"
DEVICE_LINE = re.compile(r"^  device: (.*)$", re.M)


def run(vm, script, *args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([vm, "run", script, *args], capture_output=True, text=True, env=env, timeout=120)


def check(cond, what, p=None):
    if not cond:
        detail = f"\nexit {p.returncode}\nstdout: {p.stdout!r}\nstderr: {p.stderr}" if p is not None else ""
        sys.exit(f"FAIL: {what}{detail}")
    print(f"ok: {what}")


def hot_path(d):
    """HOT in a file of d (written once)."""
    path = os.path.join(d, "hot.tsb")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(HOT)
    return path


def device_line(p):
    m = DEVICE_LINE.search(p.stderr)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    vm = ap.parse_args().vm
    with tempfile.TemporaryDirectory(prefix="tessera-device-") as d:
        script = os.path.join(d, "tiny.tsb")
        with open(script, "w") as f:
            f.write(SCRIPT)

        p = run(vm, script, "--device=cpu", "--stats")
        check(p.returncode == 0 and p.stdout == "8.0\n", "--device=cpu runs the script", p)
        check(device_line(p) == "cpu (--device=cpu)", "--stats says: device: cpu (--device=cpu)", p)

        p = run(vm, script, "--device", "auto", "--stats")
        check(p.returncode == 0 and p.stdout == "8.0\n", "--device=auto runs the script", p)
        auto = device_line(p)
        check(auto is not None, "--stats has a device: line under --device=auto", p)
        no_gpu = auto.startswith("cpu (auto: ")

        p = run(vm, script, "--stats")
        check(device_line(p) == auto, "auto is the default", p)
        p = run(vm, script, env_extra={"LD_DEBUG": "libs"})
        check(p.returncode == 0 and p.stdout == "8.0\n" and "libcuda" not in p.stderr,
              "auto without a fused kernel does not look for the CUDA driver", p)
        hot_env = {"LD_DEBUG": "libs", "TESSERA_CUDA_DRIVER": "libcuda-probe-marker.so.1"}
        p = run(vm, hot_path(d), "--jit-param", "kcache=0", env_extra=hot_env)
        check(p.returncode == 0 and p.stdout == "true\n" and "libcuda-probe-marker" in p.stderr,
              "auto with a fused hot loop looks for the CUDA driver", p)
        p = run(vm, script, "--stats", "--jit=off")
        check(p.returncode == 0 and device_line(p) == auto, "--jit=off --stats has the device: line too", p)

        p = run(vm, script, "--device=gpu")
        if no_gpu:
            why = auto[len("cpu (auto: "):-1]
            check(p.returncode == 2, "--device=gpu without a GPU exits 2", p)
            check(p.stdout == "", "... before the script runs", p)
            check(p.stderr == f"tessera-vm: --device=gpu: no usable GPU: {why}\n",
                  "... saying why, as --stats does under auto", p)
        else:
            check(p.returncode == 0 and p.stdout == "8.0\n", "--device=gpu with a GPU runs the script", p)

        missing = os.path.join(d, "no-such-libcuda.so.1")
        env = {"TESSERA_CUDA_DRIVER": missing}
        p = run(vm, script, "--stats", env_extra=env)
        check(p.returncode == 0 and (device_line(p) or "").startswith(f"cpu (auto: {missing} not found (dlopen: "),
              "TESSERA_CUDA_DRIVER=<missing file>: auto runs on the CPU and names the file", p)
        p = run(vm, script, "--device=gpu", env_extra=env)
        want = f"tessera-vm: --device=gpu: no usable GPU: {missing} not found"
        check(p.returncode == 2 and p.stderr.startswith(want),
              "TESSERA_CUDA_DRIVER=<missing file>: --device=gpu exits 2 naming the file", p)

        if os.path.exists(STUB):
            p = run(vm, script, "--device=gpu", env_extra={"TESSERA_CUDA_DRIVER": STUB})
            check(p.returncode == 2 and "stub library" in p.stderr and "CUDA_ERROR_STUB_LIBRARY" in p.stderr,
                  "TESSERA_CUDA_DRIVER=<the toolkit's stub>: --device=gpu exits 2 naming the stub", p)
        else:
            print(f"skip: {STUB} is absent")

        hot = hot_path(d)
        dump = os.path.join(d, "dump")
        p = run(vm, hot, "--dump", dump, "--jit-param", "kcache=0")
        check(p.returncode == 0 and p.stdout == "true\n", "a fused hot loop runs with --dump", p)
        names = sorted(os.listdir(dump))
        cu = [n for n in names if n.startswith("kernel-") and n.endswith(".cu")]
        ptx = [n for n in names if n.startswith("kernel-") and n.endswith(".ptx")]
        check(cu and len(cu) == len(ptx), f"--dump wrote each kernel's .cu and .ptx ({len(cu)} kernels)")
        text = open(os.path.join(dump, ptx[0])).read()
        source = open(os.path.join(dump, cu[0])).read()
        check('#include "tessera_cuda.h"' in source and "TSR_KERNEL void" in source, "... the .cu is the emitter's CUDA C++")
        if os.path.exists(NVRTC) or os.environ.get("TESSERA_NVRTC_LIBRARY"):
            check(".entry region" in text and ".target sm_90" in text, "... the .ptx is NVRTC's PTX for compute_90")
        else:
            check(text.startswith("// no PTX: "), "... without NVRTC the .ptx says why there is none")

        p = run(vm, script, "--device=bogus")
        check(p.returncode == 2 and "--device" in p.stderr and p.stdout == "", "--device=bogus is a usage error", p)


if __name__ == "__main__":
    main()
