"""The paper's generated inputs, from stored raw results only (raw_results.py): writes
papers/tessera-vm/generated/
  results.tex          \\tsrdef{key}{value} for every number the text cites (\\res{key})
  table-*.tex          the tables (tabular environments)
  fig-*.pdf            the figures (matplotlib)
For each benchmark the newest stored run is used (a GPU session's for the GPU tables). A CPU
benchmark without any stored run is an error (the paper cannot be built); GPU results that are
missing become the phrase NO_GPU in the text and a one-line table saying so.

  /usr/bin/python3 experiments/evaluation/paper_outputs.py [--raw-dir experiments/raw]"""
import argparse
import math
import os
import sys

import bench_tensor
import raw_results
from protocol import geomean, regression, summarize, welch_p

OUT = os.path.join(raw_results.REPO, "papers", "tessera-vm", "generated")
NO_GPU = "no GPU results stored"
CPU_BENCHMARKS = ["scalar", "tensor", "warmup", "kernels", "acceptance"]
# Every file generate() writes (without extension), for the sources' check.
GENERATED = ["results", "table-acceptance", "table-scalar", "table-tensor", "table-compile", "table-kernel-tiers",
             "table-gpu-kernels", "table-gpu-attention", "table-regressions", "table-cells", "fig-warmup", "fig-scalar",
             "fig-tensor"]


class MissingResults(Exception):
    pass


def tex(s):
    """Text made safe for LaTeX."""
    s = str(s)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        s = s.replace(a, b)
    return s


def num(x, digits=2):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}f}"


def pvalue(p):
    if p is None:
        return "--"
    return "$<$0.001" if p < 0.001 else f"{p:.3f}"


def cells_by(doc):
    return {c["id"]: c for c in doc["cells"]}


def ok(c):
    return c is not None and c.get("status") == "ok" and c.get("summary")


def tabular(cols, header, rows, note=""):
    """(a bare tabular, its note): the paper scales the tabular to the column and sets the note
    under it (\\tsrnote{name}, the result note.<name>)."""
    lines = [r"\begin{tabular}{" + cols + "}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    return "\n".join(lines) + "\n", note


# ---------------------------------------------------------------------------------------------
# The suites


def scalar_outputs(doc, keys, tables, figs):
    cells = cells_by(doc)
    programs = sorted({c["program"] for c in doc["cells"] if "program" in c})
    peers = [("luajit", "LuaJIT"), ("pypy3", "PyPy"), ("python3", "CPython"), ("lua5.4", "Lua 5.4")]
    ratios = {p: {} for p, _ in peers}
    ratios["interp"] = {}
    rows = []
    for prog in programs:
        t = cells.get(f"{prog}/tessera")
        if not ok(t):
            continue
        row = [tex(prog), num(t["summary"]["mean"], 3) + r"\,$\pm$\," + num(t["summary"]["ci_high"] - t["summary"]["mean"], 3)]
        for p, _ in peers:
            c = cells.get(f"{prog}/{p}")
            if ok(c):
                r = t["summary"]["mean"] / c["summary"]["mean"]
                ratios[p][prog] = r
                row.append(num(r) + r"$\times$ (" + pvalue(welch_p(t["samples"], c["samples"])) + ")")
            else:
                row.append("--")
        ci = cells.get(f"{prog}/tessera-interp")
        if ok(ci):
            ratios["interp"][prog] = ci["summary"]["mean"] / t["summary"]["mean"]
            row.append(num(ratios["interp"][prog]) + r"$\times$")
        else:
            row.append("--")
        rows.append(row)
    gm = {p: geomean(list(ratios[p].values())) for p in ratios}
    rows.append([r"\textit{geometric mean}", ""] + [num(gm[p]) + r"$\times$" if gm[p] else "--" for p, _ in peers]
                + [num(gm["interp"]) + r"$\times$" if gm["interp"] else "--"])
    keys["scalar.programs"] = str(len(rows) - 1)
    for p, key in (("luajit", "luajit"), ("pypy3", "pypy"), ("python3", "cpython"), ("lua5.4", "lua")):
        keys[f"scalar.vs.{key}"] = num(gm[p]) + r"$\times$" if gm[p] else "n/a"
    if ratios["luajit"]:
        worst = max(ratios["luajit"], key=ratios["luajit"].get)
        keys["scalar.worst.program"] = r"\texttt{" + tex(worst) + "}"
        keys["scalar.worst.vs.luajit"] = num(ratios["luajit"][worst]) + r"$\times$"
    else:
        keys["scalar.worst.program"], keys["scalar.worst.vs.luajit"] = "n/a", "n/a"
    keys["scalar.jit.over.interp"] = num(gm["interp"]) + r"$\times$" if gm["interp"] else "n/a"
    tables["table-scalar"] = tabular("l r " + "r " * len(peers) + "r",
                                     ["program", "Tessera s"] + [f"/ {n} (p)" for _, n in peers] + ["JIT speed-up"],
                                     rows, "Tessera's wall seconds per process (mean, half-width of the 95\\% "
                                     "interval); ratios are Tessera's mean over the peer's (below 1: Tessera is "
                                     "faster) with Welch's p-value; the JIT speed-up is the interpreter's time over "
                                     "the JIT's.")
    figs["fig-scalar"] = ("bars", {n: ratios[p] for p, n in peers if ratios[p]},
                          "Tessera time / peer time (log scale; below 1: Tessera faster)")
    return ratios


def tensor_outputs(doc, keys, tables, figs):
    cells = cells_by(doc)
    programs = sorted({c["program"] for c in doc["cells"] if "program" in c})
    peers = [("numpy", "NumPy"), ("torch", "PyTorch"), ("numexpr", "numexpr"), ("numba", "Numba")]
    speed = {p: {} for p, _ in peers}
    tiers = {"k2": {}, "k3": {}}
    rows, worst_rel, best_share = [], 0.0, None
    stream = doc.get("derived", {}).get("stream_gb_s", {})
    stream_best = max(stream.values()) if stream else None
    for prog in programs:
        t = cells.get(f"{prog}/tessera")
        if not ok(t):
            continue
        s = t["summary"]
        row = [tex(prog), num(s["mean"], 1) + r"\,$\pm$\," + num(s["ci_high"] - s["mean"], 1)]
        for p, _ in peers:
            c = cells.get(f"{prog}/{p}")
            if ok(c):
                speed[p][prog] = c["summary"]["mean"] / s["mean"]
                row.append(num(speed[p][prog]) + r"$\times$ (" + pvalue(welch_p(t["samples"], c["samples"])) + ")")
            else:
                row.append("--")
        interp, k2 = cells.get(f"{prog}/tessera-interp"), cells.get(f"{prog}/tessera-k2")
        if ok(interp):
            if prog not in bench_tensor.VARYING_SHAPES:  # tier 3's "specialized cases"
                tiers["k3"][prog] = interp["summary"]["mean"] / s["mean"]
            if ok(k2):
                tiers["k2"][prog] = interp["summary"]["mean"] / k2["summary"]["mean"]
        for tc in (t, k2):
            if tc and tc.get("rel_diff_to_numpy") is not None:
                worst_rel = max(worst_rel, tc["rel_diff_to_numpy"])
        if t.get("bound") == "memory" and t.get("bytes_per_iteration") and stream_best:
            share = t["bytes_per_iteration"] / (s["mean"] * 1e-6) / 1e9 / stream_best
            best_share = max(best_share or 0, share)
        rows.append(row)
    gm = {p: geomean(list(speed[p].values())) for p in speed}
    rows.append([r"\textit{geometric mean}", ""] + [num(gm[p]) + r"$\times$" if gm[p] else "--" for p, _ in peers])
    keys["tensor.programs"] = str(len(rows) - 1)
    for p, _ in peers:
        keys[f"tensor.vs.{p}"] = num(gm[p]) + r"$\times$" if gm[p] else "n/a (no twin ran)"
    keys["tensor.bandwidth.share"] = f"{best_share * 100:.0f}\\%" if best_share else "n/a"
    tables["table-tensor"] = tabular("l r " + "r " * len(peers),
                                     ["program", r"Tessera $\mu$s/iter"] + [f"over {n} (p)" for _, n in peers], rows,
                                     "Tessera's time per iteration (mean, half-width of the 95\\% interval); "
                                     "speed-ups are the peer's mean over Tessera's (above 1: Tessera is faster) "
                                     "with Welch's p-value.")
    figs["fig-tensor"] = ("bars", {n: speed[p] for p, n in peers if speed[p]},
                          "peer time / Tessera time (log scale; above 1: Tessera faster)")
    return tiers, worst_rel


def warmup_outputs(doc, keys, tables, figs):
    cells = cells_by(doc)
    series = {c["mode"]: c["samples"] for c in doc["cells"] if c.get("series") and c["samples"]}
    figs["fig-warmup"] = ("lines", series, "iteration time, µs (log scale)")
    # The iteration from which the default mode stays within 2x of its final median.
    auto = series.get("auto", [])
    hot = None
    if auto:
        tail = sorted(auto[len(auto) // 2:])[len(auto[len(auto) // 2:]) // 2]
        hot = next((i for i in range(len(auto)) if all(x <= 2 * tail for x in auto[i:])), None)
    keys["warmup.hot.iteration"] = str(hot) if hot is not None else "n/a"
    first = cells.get("curve/auto", {}).get("first_trace_ms")
    keys["warmup.first.trace.ms"] = num(first, 1) if first is not None else "n/a"
    t1, t2 = cells.get("compile/all/T1"), cells.get("compile/all/T2")
    med = lambda c: sorted(c["samples"])[len(c["samples"]) // 2] if c and c["samples"] else None  # noqa: E731
    keys["compile.t1.median.us"] = num(med(t1) * 1000, 0) if med(t1) is not None else "n/a"
    keys["compile.t2.median.ms"] = num(med(t2), 2) if med(t2) is not None else "n/a"
    first = [c for c in doc["cells"] if c["id"].startswith("compile/") and c.get("recording_ms") is not None]
    rows = []
    for tier, c in (("T1 (asmjit)", t1), ("T2 (LLVM ORC)", t2)):
        if c and c["samples"]:
            s = summarize(c["samples"])
            rows.append([tier, str(s["n"]), num(med(c), 3), num(s["mean"], 3), num(s["min"], 3), num(s["max"], 3)])
    tables["table-compile"] = tabular("l r r r r r", ["tier", "traces", "median ms", "mean ms", "min ms", "max ms"],
                                      rows, "Compile time per trace over every trace of the corpus (each program "
                                      "run once per tier with \\texttt{--stats}).")
    shares = cells.get("tracing/share")
    return (summarize(shares["samples"]) if shares and shares["samples"] else None), first


def kernels_outputs(doc, keys, tables):
    cells = cells_by(doc)
    rows, speedups, compiles = [], [], []
    cases = sorted({c["case"] for c in doc["cells"] if c.get("bench") == "BM_Run"})
    labels = doc.get("derived", {}).get("cases", {})
    for case in cases:
        k2, k3 = cells.get(f"BM_Run/{case}/0"), cells.get(f"BM_Run/{case}/1")
        comp = cells.get(f"BM_CompileK2/{case}/-")
        if not (ok(k2) and ok(k3)):
            continue
        sp = k2["summary"]["mean"] / k3["summary"]["mean"]
        speedups.append(sp)
        if ok(comp):
            compiles.append(comp["summary"]["mean"])
        rows.append([tex(labels.get(str(case), case)), num(k2["summary"]["mean"], 1), num(k3["summary"]["mean"], 1),
                     num(sp) + r"$\times$", pvalue(welch_p(k2["samples"], k3["samples"])),
                     num(comp["summary"]["mean"], 2) if ok(comp) else "--"])
    g = geomean(speedups)
    keys["kernels.k3.over.k2"] = num(g) + r"$\times$" if g else "n/a"
    keys["kernels.cells"] = str(len(rows))
    keys["compile.k2.median.ms"] = num(sorted(compiles)[len(compiles) // 2], 2) if compiles else "n/a"
    tables["table-kernel-tiers"] = tabular("l r r r r r", ["case", r"K2 $\mu$s", r"K3 $\mu$s", "K3 speed-up", "p", "K2 compile ms"],
                                           rows, "Means over the repetitions; p: Welch's t-test of K2 against K3."
                                           )
    return g


# ---------------------------------------------------------------------------------------------
# Acceptance criteria (the design documents' table)


def acceptance(keys, tables, docs, tensor_tiers, worst_rel, tracing, scalar_ratios):
    rows, met = [], 0
    crashes = [(d["benchmark"], c["id"]) for d in docs.values() if d for c in d["cells"]
               if c.get("status") in ("crash", "timeout")]
    rss = [c.get("max_rss_bytes", 0) for d in docs.values() if d for c in d["cells"] if c.get("runtime", "").startswith("tessera")]
    acc = docs.get("acceptance") or {"cells": [], "derived": {}}
    orch = [c for c in acc["cells"] if c["id"].startswith("orchestration/") and ok(c)]
    dist = acc.get("derived", {}).get("distributed", {})

    def row(criterion, mapping, target, figure, verdict):
        nonlocal met
        met += verdict is True
        rows.append([criterion, mapping, target, figure,
                     r"\textbf{met}" if verdict is True else ("not met" if verdict is False else "not measured")])

    scalar_mismatches = [c["id"] for c in (docs.get("scalar") or {"cells": []})["cells"] if c.get("status") == "mismatch"]
    row("numerical correctness", "tensor checksums vs NumPy; scalar outputs equal", r"$\le$ 1e-4 relative",
        (f"{worst_rel:.1e}" if worst_rel is not None else "n/a") + f"; {len(scalar_mismatches)} scalar mismatches",
        (worst_rel <= 1e-4 and not scalar_mismatches) if worst_rel is not None else None)
    k2 = geomean(list(tensor_tiers["k2"].values()))
    row("tier 2 over baseline", "T1 with K2 over the interpreter", r"$\ge$ 15\% average",
        f"{(k2 - 1) * 100:+.0f}\\%" if k2 else "n/a", k2 >= 1.15 if k2 else None)
    k3 = geomean(list(tensor_tiers["k3"].values()))
    row("tier 3 over baseline", "T2 and K3 over the interpreter (settled shapes)", r"$\ge$ 30\%",
        f"{(k3 - 1) * 100:+.0f}\\%" if k3 else "n/a", k3 >= 1.30 if k3 else None)
    # An overhead is met when its 95% interval lies below the target, not only its mean.
    row("tracing overhead", "recording and T1 compiling, worst program", r"$<$ 20\%",
        f"{tracing['max'] * 100:.1f}\\% (mean {tracing['mean'] * 100:.1f}\\%)" if tracing else "n/a",
        tracing["max"] < 0.20 if tracing else None)
    worst = max(orch, key=lambda c: c["summary"]["ci_high"], default=None)
    o = worst["summary"] if worst else None
    row("orchestration overhead", "time outside the fused kernels per iteration", r"$<$ 5\% (should)",
        f"{o['mean'] * 100:.1f}\\% (CI $\\le$ {o['ci_high'] * 100:.1f}\\%, {tex(worst['program'])})" if o else "n/a",
        o["ci_high"] < 0.05 if o else None)
    row("stability", "no crash or timeout in this run's cells", "none",
        str(len(crashes)) + (" (" + tex(", ".join(c for _, c in crashes[:3])) + ")" if crashes else ""), not crashes)
    peak = max(rss) if rss else None
    row("memory", "peak resident set of tessera-vm", r"$<$ 512 MB",
        f"{peak / 2**20:.0f} MB" if peak else "n/a", peak < 512 * 2**20 if peak else None)
    row("multi-GPU", "distributed tracing (2 ranks, merged timeline)", "demonstrated",
        (f"{dist.get('processes')} processes, {dist.get('flow_starts')} linked spans" if dist.get("demonstrated")
         else tex(dist.get("why", "n/a"))), bool(dist.get("demonstrated")) if dist else None)
    keys["accept.met"] = str(met)
    keys["accept.total"] = str(len(rows))
    tables["table-acceptance"] = tabular("l l l l l", ["criterion", "in Tessera", "target (must)", "measured", ""], rows,
                                         "Leaks are checked by the ASan+UBSan test suite in CI, not by this run.")


# ---------------------------------------------------------------------------------------------
# GPU, regressions, figures


def gpu_outputs(keys, tables, raw_dir):
    doc = raw_results.latest("gpu_kernels", raw_dir, gpu=True)
    att = raw_results.latest("gpu_attention", raw_dir, gpu=True)
    if not doc:
        for k in ("gpu.device", "gpu.date", "gpu.copy.share", "gpu.vs.torch"):
            keys[k] = r"\emph{" + NO_GPU + "}"
        tables["table-gpu-kernels"] = r"\emph{" + NO_GPU + " for the fused kernels.}\n"
    else:
        d = doc["derived"]
        keys["gpu.device"] = tex(d.get("device", "?"))
        keys["gpu.date"] = tex(doc["run_id"][:10])
        rows, shares, eager = [], [], []
        for c in doc["cells"]:
            rows.append([tex(c["id"]), num(c["k2_ms"], 3), num(c["k3_ms"], 3), num(c["best_over_copy"] * 100, 0) + r"\%",
                         num(c["torch_ms"], 3) if c.get("torch_ms") else "--",
                         num(c["torch_ms"] / min(c["k2_ms"], c["k3_ms"])) + r"$\times$" if c.get("torch_ms") else "--"])
            shares.append(c["best_over_copy"])
            if c.get("torch_ms"):
                eager.append(c["torch_ms"] / min(c["k2_ms"], c["k3_ms"]))
        keys["gpu.copy.share"] = f"{geomean(shares) * 100:.0f}\\%"
        keys["gpu.vs.torch"] = num(geomean(eager)) + r"$\times$" if eager else "n/a"
        tables["table-gpu-kernels"] = tabular("l r r r r r", ["case", "K2 ms", "K3 ms", "best / copy", "PyTorch ms",
                                                              "over PyTorch"], rows,
                                              tex(d.get("note", "")))
    if not att:
        keys["gpu.attention.vs.torch"] = r"\emph{" + NO_GPU + "}"
        tables["table-gpu-attention"] = r"\emph{" + NO_GPU + " for attention and half-precision products.}\n"
    else:
        keys["gpu.attention.vs.torch"] = tex(att["derived"].get("geomean_vs_torch", "n/a"))
        tables["table-gpu-attention"] = att["derived"].get("table_tex", r"\emph{no table}") + "\n"


def regressions(keys, tables, docs, raw_dir):
    rows, previous_ids = [], set()
    for name, doc in docs.items():
        if not doc:
            continue
        prev = raw_results.latest(name, raw_dir, before=doc["run_id"], gpu=False)
        if not prev:
            continue
        previous_ids.add(prev["run_id"])
        old = cells_by(prev)
        for c in doc["cells"]:
            o = old.get(c["id"])
            if not (ok(c) and ok(o)) or c["unit"] == "fraction":
                continue
            flagged, change = regression(o["summary"], c["summary"])
            if flagged:
                rows.append([tex(name), tex(c["id"]), num(o["summary"]["mean"], 3), num(c["summary"]["mean"], 3),
                             f"{change * 100:+.0f}\\%"])
    keys["regress.previous"] = tex(", ".join(sorted(previous_ids))) if previous_ids else "none"
    keys["regress.flagged"] = str(len(rows))
    if not rows:
        tables["table-regressions"] = (r"\emph{No cell regressed}" if previous_ids else
                                       r"\emph{No previous run stored: nothing to compare with}") + ".\n"
    else:
        tables["table-regressions"] = tabular("l l r r r", ["benchmark", "cell", "previous", "now", "change"], rows[:40],
                                              f"{len(rows)} cells more than 5\\% slower beyond their 95\\% intervals.")


def draw(figs, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for name, (kind, data, ylabel) in figs.items():
        fig, ax = plt.subplots(figsize=(6.5, 2.8))
        if kind == "lines":
            for label, ys in sorted(data.items()):
                ax.plot(range(len(ys)), ys, label=label, linewidth=0.8)
            ax.set_xlabel("iteration")
            ax.set_yscale("log")
        else:
            groups = sorted({p for series in data.values() for p in series})
            width = 0.8 / max(1, len(data))
            for i, (label, series) in enumerate(sorted(data.items())):
                ax.bar([g + i * width for g in range(len(groups))], [series.get(p, float("nan")) for p in groups],
                       width, label=label)
            ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
            ax.set_xticklabels(groups, rotation=60, ha="right", fontsize=6)
            ax.axhline(1.0, color="black", linewidth=0.5)
            ax.set_yscale("log")
        ax.set_ylabel(ylabel, fontsize=7)
        ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, name + ".pdf"))
        plt.close(fig)


def cells_table(docs):
    """Every cell of the run with its statistics (the appendix): a longtable."""
    head = r"benchmark & cell & unit & n & mean & sd & min & max & 95\% CI \\"
    lines = [r"\begin{longtable}{l l l r r r r r l}", r"\toprule", head, r"\midrule", r"\endhead",
             r"\bottomrule", r"\endfoot"]
    for name in CPU_BENCHMARKS:
        doc = docs.get(name)
        if not doc:
            continue
        for c in doc["cells"]:
            if ok(c):
                s = c["summary"]
                d = 4 if c["unit"] == "fraction" else 3
                lines.append(" & ".join([tex(name), tex(c["id"]), tex(c["unit"]), str(s["n"]), num(s["mean"], d),
                                         num(s["sd"], d), num(s["min"], d), num(s["max"], d),
                                         f"[{num(s['ci_low'], d)}, {num(s['ci_high'], d)}]"]) + r" \\")
            else:
                why = c.get("status", "?") + (": " + c["detail"][:60] if c.get("detail") else "")
                lines.append(" & ".join([tex(name), tex(c["id"]), tex(c["unit"]),
                                         r"\multicolumn{6}{l}{\emph{" + tex(why) + "}}"]) + r" \\")
    lines.append(r"\end{longtable}")
    return "\n".join(lines) + "\n"


def run_keys(keys, doc):
    m = doc["machine"]
    keys["run.date"] = doc["run_id"][:10]
    keys["run.commit"] = r"\texttt{" + doc["commit"]["sha"][:12] + "}" + (" (modified)" if doc["commit"]["dirty"] else "")
    keys["run.profile"] = doc["profile"]
    keys["machine.cpu"] = tex(m["cpu"])
    keys["machine.cores"] = str(m["cores"])
    keys["machine.memory"] = f"{m['memory_bytes'] / 2**30:.0f} GiB"
    keys["machine.os"] = tex(m["os"])
    v = doc["versions"]
    for key, name in (("luajit", "luajit"), ("pypy", "pypy3"), ("cpython", "cpython"), ("lua", "lua5.4"),
                      ("numpy", "numpy"), ("torch", "torch"), ("numexpr", "numexpr"), ("numba", "numba"), ("cc", "cc")):
        keys[f"versions.{key}"] = tex(v.get(name) or "not installed")
    p = doc["protocol"]
    keys["protocol.warmup"] = f"{p['process']['warmup_runs']} untimed run per process cell, 60 loop iterations per tensor cell"
    keys["protocol.iterations"] = (f"at least {p['process']['min_runs']} timed runs per process cell, "
                                   f"{p['tensor']['timed_iterations']} timed loop iterations per tensor cell")
    keys["protocol.budget"] = f"{p['process']['budget_s']:g}\\,s"
    keys["protocol.confidence"] = f"{p['confidence'] * 100:.0f}\\%"


def generate(raw_dir=raw_results.RAW_DIR, out_dir=OUT, log=print):
    docs = {b: raw_results.latest(b, raw_dir, gpu=False) for b in CPU_BENCHMARKS}
    missing = [b for b, d in docs.items() if d is None]
    if missing:
        raise MissingResults("no stored raw results of " + ", ".join(missing) + f" in {raw_dir}: run "
                             "experiments/run_all.py (with --only for those)")
    keys, tables, figs = {}, {}, {}
    run_keys(keys, docs["scalar"])
    scalar_ratios = scalar_outputs(docs["scalar"], keys, tables, figs)
    tensor_tiers, worst_rel = tensor_outputs(docs["tensor"], keys, tables, figs)
    tracing, _ = warmup_outputs(docs["warmup"], keys, tables, figs)
    kernels_outputs(docs["kernels"], keys, tables)
    acceptance(keys, tables, docs, tensor_tiers, worst_rel, tracing, scalar_ratios)
    gpu_outputs(keys, tables, raw_dir)
    regressions(keys, tables, docs, raw_dir)
    tables["table-cells"] = cells_table(docs)
    os.makedirs(out_dir, exist_ok=True)
    for name, table in tables.items():
        text, note = table if isinstance(table, tuple) else (table, "")
        keys[f"note.{name}"] = note
        with open(os.path.join(out_dir, name + ".tex"), "w") as f:
            f.write("% Generated by experiments/evaluation/paper_outputs.py; do not edit.\n" + text)
    with open(os.path.join(out_dir, "results.tex"), "w") as f:
        f.write("% Generated by experiments/evaluation/paper_outputs.py from " +
                ", ".join(sorted({d["run_id"] for d in docs.values()})) + "; do not edit.\n")
        for k in sorted(keys):
            f.write(f"\\tsrdef{{{k}}}{{{keys[k]}}}\n")
    draw(figs, out_dir)
    log(f"wrote {len(keys)} results, {len(tables)} tables and {len(figs)} figures into {out_dir}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw-dir", default=raw_results.RAW_DIR)
    ap.add_argument("--out-dir", default=OUT)
    a = ap.parse_args()
    try:
        generate(a.raw_dir, a.out_dir)
    except MissingResults as e:
        print(f"paper_outputs: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
