"""K2 against K3 kernels and K2 compile latency: experiments/micro/kernel_tier_bench (Google
Benchmark), each benchmark repeated; a cell is one fused region at one shape under one kernel
tier, its samples the repetitions' times (µs per run; ms per compile)."""
import os
import sys

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")
sys.path.insert(0, HARNESS)
import run_kernel_tiers  # noqa: E402

NAME = "kernels"
TITLE = "K3 over K2 kernels, and K2 compile latency"


def run(ctx, writer):
    bench = os.path.join(ctx.build, "experiments", "micro", "kernel_tier_bench")
    if not os.path.exists(bench):
        writer.doc["derived"]["missing"] = f"{bench} not built (cmake --build build --target kernel_tier_bench)"
        ctx.progress_line("kernel_tier_bench not built: skipped")
        return
    p = ctx.profile
    ctx.progress(f"kernel_tier_bench x{p.kernel_repetitions}")
    data, cmd = run_kernel_tiers.run(bench, p.kernel_repetitions, p.kernel_min_time)
    writer.doc["parameters"]["command"] = cmd
    writer.doc["derived"]["cases"] = {k[4:]: v for k, v in data["context"].items() if k.startswith("case") and k[4:].isdigit()}
    for (name, case, tier), e in sorted(run_kernel_tiers.collect(data).items(), key=lambda kv: str(kv[0])):
        unit = "ms" if "Compile" in name or "compile" in name else "us"
        writer.cell(f"{name}/{case}/{tier if tier is not None else '-'}", e["times"], unit=unit, bench=name,
                    case=case, tier=tier, label=e["label"])
    ctx.progress_line(f"{len(writer.doc['cells'])} cells")
