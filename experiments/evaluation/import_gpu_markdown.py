#!/usr/bin/env python3
"""Imports a GPU session's fused-kernel table written before the harness kept raw results
(experiments/results/gpu-kernels-DATE-DEVICE.md, from run_gpu_kernels.py) as a raw result,
experiments/raw/<DATE>T<HHMM>Z-gpu-<device>/gpu_kernels.json (HHMM: when the session ran, as
given; the table names only the day), so that the paper's GPU table has
that session's figures. The table kept only medians: each cell's one sample is the faster tier's
median, and the raw file says so (derived.note, parameters.imported_from). GPU sessions since
write raw results themselves (run_gpu_kernels.py --raw-dir).

  /usr/bin/python3 experiments/evaluation/import_gpu_markdown.py experiments/results/gpu-kernels-latest.md 0627"""
import os
import re
import sys

import raw_results


def parse(text):
    device = re.search(r"^- device: (.*)$", text, re.M).group(1)
    copy = float(re.search(r"device-to-device copy: ([\d.]+) GB/s", text).group(1))
    date = re.search(r"^# .*, (\d{4}-\d{2}-\d{2})$", text, re.M).group(1)
    torch = re.search(r"PyTorch (\S+)$", text, re.M)
    cells = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) != 10 or parts[0] in ("case",) or parts[0].startswith("---"):
            continue
        k2, k3 = float(parts[1]), float(parts[2])
        torch_ms = float(parts[8]) if re.match(r"^[\d.]+$", parts[8]) else None
        cells.append({"case": parts[0], "k2_ms": k2, "k3_ms": k3, "k3_variant": parts[3].strip("`"),
                      "best_over_copy": float(parts[7].rstrip("%")) / 100, "torch_ms": torch_ms})
    return device, copy, date, (torch.group(1) if torch else None), cells


def main():
    if len(sys.argv) != 3 or not re.match(r"^\d{4}$", sys.argv[2]):
        sys.exit(__doc__)
    path, hhmm = sys.argv[1], sys.argv[2]
    with open(path) as f:
        device, copy, date, torch, cells = parse(f.read())
    slug = re.sub(r"[^a-z0-9]+", "-", device.split(" (")[0].lower()).strip("-")
    w = raw_results.RawWriter(f"{date}T{hhmm}Z-gpu-{slug}", "gpu", "gpu_kernels",
                              "Fused kernels on the GPU against copy bandwidth and PyTorch eager",
                              {"imported_from": os.path.relpath(path, raw_results.REPO)},
                              {"repetitions": 5, "timer": "CUDA events around one launch"}, {"torch": torch})
    w.doc["machine"] = {"gpu": device, "note": "the GPU session's machine (the table does not name its CPU)"}
    w.doc["commit"] = {"sha": re.search(r"commit ([0-9a-f]+)", open(path).read()).group(1), "dirty": False}
    for c in cells:
        w.cell(c.pop("case"), [min(c["k2_ms"], c["k3_ms"])], unit="ms", **c)
    w.doc["derived"].update(device=device, copy_gb_s=copy,
                            note=f"Medians of 5 repetitions, imported from {os.path.basename(path)} (the session kept "
                                 "no per-repetition times); best / copy: the faster tier's GB/s over the "
                                 "device-to-device copy's.")
    print(w.write())


if __name__ == "__main__":
    main()
