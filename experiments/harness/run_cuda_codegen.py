#!/usr/bin/env python3
"""The CUDA backend's code generation on a machine without a GPU: runs the
micro-benchmark experiments/micro/cuda_codegen_bench (Google Benchmark, JSON
output) and writes experiments/results/cuda-codegen-latest.md (and, with
--dated, a copy named by today's date).

Per kernel kind: the emitter's time (kernel IR to CUDA C++), NVRTC's cold
compile time to an sm_90a cubin and to compute_90 PTX (the fallback), the
registers ptxas gives the sm_90a kernel and the source's length. Cells are
medians over --repetitions runs.

  cmake --build build --target cuda_codegen_bench
  python3 experiments/harness/run_cuda_codegen.py [--bench build/experiments/micro/cuda_codegen_bench]
"""
import argparse
import datetime
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import cpu_model  # noqa: E402
from run_kernel_tiers import bench_arguments, built_from, collect, command_line, run, write_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_arguments(ap, "cuda_codegen_bench", "cuda-codegen-latest.md", 3, "cuda-codegen-DATE.md")
    args = ap.parse_args()
    data, command = run(args.bench, args.repetitions, 0.1)
    res = collect(data)
    rows, cubin_ms = [], []
    emits = sorted(k for k in res if k[0] == "BM_Emit")
    for key in emits:
        i = key[1]
        emit = res[key]
        cubin, ptx = res.get(("BM_Nvrtc", i, 0)), res.get(("BM_Nvrtc", i, 1))
        if not cubin or not ptx:
            continue
        name = emit["label"]
        regs = re.search(r"regs=(\d+)", cubin["label"])
        lines = re.search(r"lines=(\d+)", cubin["label"])
        c = statistics.median(cubin["times"])
        cubin_ms.append(c)
        rows.append(f"| {name} | {statistics.median(emit['times']):.0f} | {c:.0f} ({min(cubin['times']):.0f}) "
                    f"| {statistics.median(ptx['times']):.0f} | {regs.group(1) if regs else '?'} "
                    f"| {lines.group(1) if lines else '?'} |")
    ctx = data["context"]
    today = datetime.date.today().isoformat()
    lines = [
        f"# CUDA code generation without a GPU, {today}",
        "",
        f"- machine: {cpu_model()}, {ctx.get('num_cpus')} CPUs, no GPU; NVRTC {ctx.get('nvrtc', '?')}",
        f"- command: {command_line('run_cuda_codegen.py', command)}",
        f"- built from {built_from()}; "
        f"cells: median of {args.repetitions} repetitions (minimum in brackets)",
        "",
        "| kernel (K2) | emit µs | NVRTC → sm_90a cubin ms | NVRTC → compute_90 PTX ms | registers (sm_90a) | lines of CUDA C++ |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"NVRTC cold compile to a cubin, median over the kernels: {statistics.median(cubin_ms):.0f} ms" if cubin_ms else "",
        "",
        "Kernels: the regions of the emulation and NVRTC tests (`tests/codegen/kernel/cuda_test_cases.h`), lowered "
        "as K2 kernels (dims are parameters) and emitted by `codegen/kernel/cuda/cuda_emitter.h`. `chain_f32` is the "
        "tensor suite's elementwise chain; row kernels (`softmax_rms_norm`, `layer_norm`, `sum_row`, `argmax_row`, "
        "`sum_all`, `rows_half`) walk a row in chunks of 1024; `matmul_bias_gelu` is the epilogue of a product; "
        "`attention` is lower_attention's tiled online-softmax kernel. Each NVRTC compile is cold (a new program "
        "every time; the persistent kernel cache is what makes a second run compile nothing). These times are "
        "the host's; GPU run times need a GPU machine (docs/gpu.md).",
    ]
    text = "\n".join(lines) + "\n"
    write_report(text, args.out, f"cuda-codegen-{today}.md" if args.dated else None)

if __name__ == "__main__":
    main()
