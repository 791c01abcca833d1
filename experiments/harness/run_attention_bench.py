#!/usr/bin/env python3
"""Attention and half-precision products on a GPU against PyTorch: runs
experiments/micro/attention_bench (the GPU target's K2 kernel and its K3 variants, timed on the
device, checked against the interpreter) and experiments/harness/torch_attention_gpu.py
(scaled_dot_product_attention under each backend, torch.matmul) on the same cells, and writes
experiments/results/attention-latest.md (with --dated also attention-DATE-DEVICE.md).

Tables: per attention configuration, Tessera's K2 and K3 TFLOP/s with their 95% confidence
intervals, K3 / K2, each PyTorch backend's TFLOP/s, Tessera K3 over PyTorch's flash backend and
over PyTorch's best; the products against torch.matmul (and its eager bias and relu).

  --profile quick|full   the cells (attention_bench's built-in lists; quick: small and medium
                         configurations, the precision pair, products up to 4096)
  --budget-s S           the whole run's time budget (two thirds to attention_bench, one third to
                         PyTorch); cells not started by then are reported as skipped
  --emulation            tiny cells on the host emulation of a GPU (TESSERA_GPU_EMULATION=1, no
                         GPU needed, PyTorch skipped), written to attention-emulation-latest.md:
                         this exercises the harness; its times say nothing of a GPU

  python3 experiments/harness/run_attention_bench.py --profile quick
  python3 experiments/harness/run_attention_bench.py --emulation --out /tmp/attention-emulation-latest.md
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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evaluation"))
from run_bench import REPO, git_out  # noqa: E402
from run_kernel_tiers import built_from, log, write_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_BACKENDS = [("FLASH_ATTENTION", "flash"), ("EFFICIENT_ATTENTION", "efficient"), ("CUDNN_ATTENTION", "cuDNN"),
                  ("MATH", "math")]
# The GROUPS' order in the tables (attention_bench's built-in lists name them).
GROUPS = ["emulation", "small", "medium", "mixed precision", "variable length", "large", "FlashAttention grid",
          "command line"]


def raw_result(data, torch_data, run_id, command):
    """The evaluation's raw result of a GPU run (experiments/evaluation/raw_results.py): a cell
    per Tessera tier and PyTorch backend of each bench cell, its sample the median launch time
    (attention_bench keeps the statistics, not every sample: they are in each cell's `stats`),
    and, for the paper, K3's speed-up over PyTorch's fastest backend per cell, their geometric
    mean and a table (derived.geomean_vs_torch, derived.table_tex)."""
    import raw_results
    from protocol import geomean
    w = raw_results.RawWriter(run_id, "gpu", "gpu_attention", "Attention and half-precision products on the GPU",
                              {"command": command}, data.get("protocol", {}),
                              {"torch": (torch_data or {}).get("torch")})
    rows, speedups = [], []
    torch_res = {}
    for r in (torch_data or {}).get("results", []):
        torch_res.setdefault(r["cell"], []).append(r)
    k3 = {}
    for r in data["results"]:
        ms = (r.get("stats") or {}).get("median_ms")
        ok = r.get("status") == "ok" and ms
        w.cell(f"{r['cell']}/{r['tier']}", [ms] if ok else [], unit="ms", status="ok" if ok else r.get("status", "?"),
               detail=r.get("reason", ""), tflops=r.get("tflops"), stats=r.get("stats"), variant=r.get("variant"))
        if ok and r["tier"] == "K3":
            k3[r["cell"]] = r
    for r in (torch_data or {}).get("results", []):
        ms = (r.get("stats") or {}).get("median_ms")
        ok = r.get("status") == "ok" and ms
        w.cell(f"{r['cell']}/torch-{r['backend']}", [ms] if ok else [], unit="ms",
               status="ok" if ok else r.get("status", "?"), tflops=r.get("tflops"), stats=r.get("stats"))
    for cell, t in sorted(k3.items()):
        best = max((r for r in torch_res.get(cell, []) if r.get("status") == "ok" and r.get("tflops")),
                   key=lambda r: r["tflops"], default=None)
        sp = t["tflops"] / best["tflops"] if best else None
        if sp:
            speedups.append(sp)
        rows.append(" & ".join([cell.replace("_", "\\_"), f"{t['tflops']:.1f}",
                                f"{best['tflops']:.1f} ({best['backend'].lower().replace('_', ' ')})" if best else "--",
                                f"{sp:.2f}$\\times$" if sp else "--"]) + r" \\")
    g = geomean(speedups)
    w.doc["derived"].update(
        device=data.get("device", "?"), geomean_vs_torch=f"{g:.2f}$\\times$" if g else "n/a (PyTorch not measured)",
        table_tex="\n".join([r"\begin{tabular}{l r r r}", r"\toprule",
                              r"cell & K3 TFLOP/s & PyTorch's best TFLOP/s & K3 / PyTorch \\", r"\midrule", *rows,
                              r"\bottomrule", r"\end{tabular}"]))
    return w


def commit_id():
    """The commit (short), or the bundle's COMMIT file's, for the benchmark's JSON."""
    c = git_out(REPO, "rev-parse", "--short=12", "HEAD")
    if c:
        return c
    bundled = os.path.join(REPO, "COMMIT")
    return open(bundled).read().strip() if os.path.exists(bundled) else "unknown"


def run_json(cmd, env, path, what, timeout):
    log("running: " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, env=env, timeout=timeout)  # its progress goes to stderr as it runs
    except subprocess.TimeoutExpired:
        sys.exit(f"{what} did not finish within {timeout:.0f} s")
    if p.returncode != 0:
        sys.exit(f"{what} failed ({p.returncode}): see its messages above")
    with open(path) as f:
        return json.load(f)


class Notes:
    """Numbered notes for the reasons behind refused, failed or skipped cells."""

    def __init__(self):
        self.texts = []

    def ref(self, text):
        text = " ".join(str(text).split())
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"


def cell_text(r, notes):
    """A result's TFLOP/s with its CI, or its status with a note."""
    if r is None:
        return "–"
    if r.get("status") != "ok":
        return f"{r.get('status', '?')} {notes.ref(r.get('reason', 'no reason given'))}"
    lo, hi = r["tflops_ci95"]
    return f"{fmt_tflops(r['tflops'])} [{fmt_tflops(lo)}–{fmt_tflops(hi)}]"


def fmt_tflops(x):
    if x >= 100:
        return f"{x:.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def ratio(a, b):
    ok = a and b and a.get("status") == "ok" and b.get("status") == "ok"
    return f"{a['tflops'] / b['tflops']:.2f}x" if ok else "–"


def error_text(rs, notes):
    """The worst relative error of the K2 and K3 outputs against the interpreter, or why none."""
    parts = []
    for r in rs:
        if not r or r.get("status") != "ok":
            continue
        if "max_rel_err" not in r:
            return "– " + notes.ref("reference " + r.get("reference", "not computed"))
        mark = "" if r.get("within_tolerance") else " OVER"
        parts.append(f"{r['max_rel_err']:.1e}{mark}")
    return " / ".join(parts) if parts else "–"


def shape_text(c):
    return "x".join(str(d) for d in c["shape"])


def attention_tables(cells, tess, torch_res, notes, with_torch):
    lines = []
    by_group = {}
    for c in cells:
        if c["kind"] == "attention":
            by_group.setdefault(c["group"], []).append(c)
    head = ["B x H x S x D", "dtype", "causal", "K2 TFLOP/s", "K3 TFLOP/s", "K3 variant", "K3 / K2"]
    if with_torch:
        head += [f"PyTorch {label}" for _, label in TORCH_BACKENDS] + ["K3 / flash", "K3 / PyTorch's best"]
    head += ["max rel. error K2 / K3"]
    for group in sorted(by_group, key=lambda g: GROUPS.index(g) if g in GROUPS else len(GROUPS)):
        lines += ["", f"### {group}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c in by_group[group]:
            k2, k3 = tess.get((c["id"], "K2")), tess.get((c["id"], "K3"))
            row = [shape_text(c), c["dtype"], "yes" if c["causal"] else "no", cell_text(k2, notes), cell_text(k3, notes),
                   f"`{k3['variant']}`" if k3 and k3.get("status") == "ok" else "–", ratio(k3, k2)]
            if with_torch:
                tr = {b: torch_res.get((c["id"], b)) for b, _ in TORCH_BACKENDS}
                row += [cell_text(tr[b], notes) for b, _ in TORCH_BACKENDS]
                ok = [r for r in tr.values() if r and r.get("status") == "ok"]
                best = max(ok, key=lambda r: r["tflops"]) if ok else None
                row += [ratio(k3, tr["FLASH_ATTENTION"]), ratio(k3, best)]
            row.append(error_text([k2, k3], notes))
            lines.append("| " + " | ".join(row) + " |")
    return lines


def product_table(cells, tess, torch_res, notes, with_torch):
    prods = [c for c in cells if c["kind"] != "attention"]
    if not prods:
        return []
    head = ["product", "M x N x K", "dtype", "K2 TFLOP/s", "K3 TFLOP/s", "K3 variant", "K3 / K2"]
    if with_torch:
        head += ["PyTorch eager TFLOP/s", "K3 / PyTorch"]
    head += ["max rel. error K2 / K3"]
    lines = ["", "## Half-precision products", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in prods:
        k2, k3 = tess.get((c["id"], "K2")), tess.get((c["id"], "K3"))
        name = "matmul" if c["kind"] == "matmul" else "relu(matmul + bias)"
        row = [name, shape_text(c), c["dtype"], cell_text(k2, notes), cell_text(k3, notes),
               f"`{k3['variant']}`" if k3 and k3.get("status") == "ok" else "–", ratio(k3, k2)]
        if with_torch:
            t = torch_res.get((c["id"], "eager"))
            row += [cell_text(t, notes), ratio(k3, t)]
        row.append(error_text([k2, k3], notes))
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "experiments", "micro", "attention_bench"))
    ap.add_argument("--profile", choices=["quick", "full"], default="full")
    ap.add_argument("--cells", nargs="+", help="attention_bench cells instead of the profile's "
                                               "(attention/BxHxSxD/f16/causal, matmul/MxNxK/bf16, ...)")
    ap.add_argument("--emulation", action="store_true", help="tiny cells on the host emulation (no GPU, no PyTorch)")
    ap.add_argument("--out", help="the report (default experiments/results/attention-latest.md; "
                                  "with --emulation attention-emulation-latest.md)")
    ap.add_argument("--dated", action="store_true", help="also write attention-DATE-DEVICE.md beside it")
    ap.add_argument("--json-dir", help="keep the raw JSON (attention_bench.json, torch_attention.json) here")
    ap.add_argument("--no-torch", action="store_true", help="leave out PyTorch")
    ap.add_argument("--budget-s", type=float, default=0, help="the whole run's time budget in seconds (0: none)")
    ap.add_argument("--cell-budget-s", type=float, help="the timed loop of one tier or backend of one cell, at most "
                                                        "(default 10; emulation 30)")
    ap.add_argument("--warmup", type=int, help="warm-up launches (default 10; emulation 1)")
    ap.add_argument("--iters", type=int, help="timed samples (default 100; emulation 5)")
    ap.add_argument("--max-variants", type=int, help="K3 variants tried at most (default all; emulation 2)")
    ap.add_argument("--raw-dir", help="also write the evaluation's raw result (gpu_attention.json) under this folder "
                    "(a GPU run only)")
    ap.add_argument("--jobs", type=int, help="parallel kernel compiles (default: the cores, at most 8)")
    args = ap.parse_args()

    results_dir = os.path.join(REPO, "experiments", "results")
    if args.emulation:
        out = args.out or os.path.join(results_dir, "attention-emulation-latest.md")
        if os.path.basename(out) == "attention-latest.md" or "emulation" not in os.path.basename(out):
            sys.exit("--emulation writes to a file named for the emulation (attention-emulation-latest.md), "
                     "never to attention-latest.md")
        defaults = {"warmup": 1, "iters": 5, "max_variants": 2, "cell_budget_s": 30}
    else:
        out = args.out or os.path.join(results_dir, "attention-latest.md")
        defaults = {"warmup": 10, "iters": 100, "max_variants": 0, "cell_budget_s": 10}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if not os.path.exists(args.bench):
        sys.exit(f"{args.bench} not found: cmake --build build --target attention_bench")

    json_dir = args.json_dir or tempfile.mkdtemp(prefix="attention-bench-")
    os.makedirs(json_dir, exist_ok=True)
    env = dict(os.environ)
    cells_args = args.cells or ["--profile", "emulation" if args.emulation else args.profile]
    if args.emulation:
        env["TESSERA_GPU_EMULATION"] = "1"
        cells_args += ["--emulation"]
    protocol = ["--warmup", str(args.warmup), "--iters", str(args.iters), "--cell-budget-s", str(args.cell_budget_s)]
    bench_budget = args.budget_s * 2 / 3 if args.budget_s else 0
    bench_json = os.path.join(json_dir, "attention_bench.json")
    cmd = [args.bench, *cells_args, *protocol, "--budget-s", f"{bench_budget:g}", "--max-variants",
           str(args.max_variants), "--commit", commit_id(), "--json", bench_json]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    # The limit of a run that never ends: its budget and the slowest cell's budgets, twice over.
    limit = (args.budget_s or 3600) * 2 + 600
    data = run_json(cmd, env, bench_json, "attention_bench", limit)
    if data.get("skipped"):
        sys.exit(f"attention_bench measured nothing: {data['skipped']} (a GPU machine, or --emulation)")
    if data.get("emulation") and not args.emulation:
        sys.exit("attention_bench ran on the host emulation (TESSERA_GPU_EMULATION=1 without a GPU): its times are "
                 "no GPU's; run with --emulation, which writes attention-emulation-latest.md")
    cells_json = os.path.join(json_dir, "cells.json")
    run_json([args.bench, *cells_args, "--list", "--json", cells_json], env, cells_json, "attention_bench --list", 60)
    with open(cells_json) as f:
        cells = json.load(f)["cells"]

    torch_data, torch_note = None, "not measured (--no-torch)"
    if args.emulation:
        torch_note = "not measured (the emulation: no GPU)"
    elif not args.no_torch:
        torch_json = os.path.join(json_dir, "torch_attention.json")
        torch_budget = args.budget_s - (data.get("seconds") or 0) if args.budget_s else 0
        tcmd = [sys.executable, os.path.join(HERE, "torch_attention_gpu.py"), "--cells", cells_json, *protocol,
                "--budget-s", f"{max(torch_budget, 1) if args.budget_s else 0:g}", "--json", torch_json]
        torch_data = run_json(tcmd, env, torch_json, "torch_attention_gpu.py", limit)
        if torch_data.get("skipped"):
            torch_note = "not measured: " + torch_data["skipped"]
            torch_data = None
        else:
            torch_note = f"PyTorch {torch_data['torch']} (CUDA {torch_data.get('cuda')}) on {torch_data['device']}"

    tess = {(r["cell"], r["tier"]): r for r in data["results"]}
    torch_res = {(r["cell"], r["backend"]): r for r in (torch_data or {}).get("results", [])}
    notes = Notes()
    with_torch = torch_data is not None
    device = data.get("device", "?")
    today = datetime.date.today().isoformat()
    p = data.get("protocol", {})
    skipped = sorted({r["cell"] for r in data["results"] if r.get("status") == "skipped"})
    title = ("Attention and half-precision products on the host emulation of a GPU (not a GPU: "
             "its times only show that the harness runs)" if data.get("emulation")
             else "Attention and half-precision products on the GPU")
    lines = [
        f"# {title}, {today}",
        "",
        f"- device: {device}" + (" — EMULATION" if data.get("emulation") else ""),
        f"- kernels built by {data.get('compiler', '?')} for {data.get('arch', '?')}; machine: {data.get('machine', '?')}",
        f"- PyTorch: {torch_note}",
        f"- command: `python3 experiments/harness/run_attention_bench.py "
        + " ".join(a for a in sys.argv[1:]) + "`",
        f"- built from {built_from()}; attention_bench ran {data.get('seconds', 0):.0f} s"
        + (f", PyTorch {torch_data.get('seconds', 0):.0f} s" if with_torch else ""),
        f"- protocol: per cell and tier (or backend), {p.get('warmup')} warm-up launch{'' if p.get('warmup') == 1 else 'es'} "
        f"and {p.get('iters')} timed "
        f"samples (fewer where they would take over {p.get('cell_budget_s'):g} s: the counts are in the JSON), each "
        "sample one launch or, for launches under 0.1 ms, a group of launches between the device's timer (CUDA events; "
        "the emulation: the host's clock); cells show the median's TFLOP/s and its 95% confidence interval in brackets",
        "- TFLOP/s: attention 4 B S² H D (FlashAttention-2's count), halved when causal; products 2 M N K",
        f"- K3: every variant the GPU target offers for these dims (at most {p.get('max_variants') or 'all'}), each "
        "timed briefly, the fastest measured in full; the error is the largest |got - want| / (1 + |want|) against the "
        "interpreter on a sample of the output (docs/gpu.md's tolerance for f16/bf16: 1e-2; OVER marks a cell past it)",
    ]
    if skipped:
        lines.append(f"- {len(skipped)} cells skipped: the time budget (--budget-s {args.budget_s:g}) was spent")
    lines += ["", "## Attention (TFLOP/s)"]
    lines += attention_tables(cells, tess, torch_res, notes, with_torch)
    lines += product_table(cells, tess, torch_res, notes, with_torch)
    if notes.texts:
        lines += ["", "## Notes", ""] + [f"{i + 1}. {t}" for i, t in enumerate(notes.texts)]
    lines += ["", "Cells: `experiments/micro/attention_bench.cpp` (its built-in lists: the design documents' "
              "configurations, causal and f16 unless named, and the FlashAttention papers' grid with B S = 16384 and "
              "H D = 2048). Inputs are `sin(0.37 i + phase)` waves, made once, resident on the device after the first "
              "launch. A Tessera launch goes through the GPU target's `launch` (inputs passed as they are, the output "
              "allocated, attention's kernel then the region's kernel; a leading product on cuBLASLt on a GPU, by the interpreter's "
              "kernel on the emulation, then the epilogue)."]
    text = "\n".join(lines) + "\n"
    slug = re.sub(r"[^a-z0-9]+", "-", device.split(" (")[0].lower()).strip("-") or "device"
    dated = None
    if args.dated:
        dated = f"attention-emulation-{today}.md" if args.emulation else f"attention-{today}-{slug}.md"
    write_report(text, out, dated)
    if args.raw_dir and not data.get("emulation"):
        import raw_results
        w = raw_result(data, torch_data, raw_results.new_run_id("gpu-" + slug), " ".join(cmd))
        log(f"wrote {w.write(args.raw_dir)}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
