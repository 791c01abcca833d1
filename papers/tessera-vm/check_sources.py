#!/usr/bin/env python3
"""Checks the paper's hand-written sources (papers/tessera-vm/*.tex, sections/*.tex; never
generated/) before a build:
  - every \\input, \\include and \\includegraphics names a file that exists, or one that the
    generator writes (experiments/evaluation/paper_outputs.py: GENERATED);
  - every \\res{key} is a key the generator defines (it runs the generator on the stored raw
    results into a temporary folder and reads its results.tex);
  - no number outside \\res{} and \\target{} is a measurement: a decimal, a percentage, or a
    number with a unit of time, size, bandwidth or ratio.
Exit status 1 with one line per finding.

  /usr/bin/python3 papers/tessera-vm/check_sources.py [--raw-dir experiments/raw]"""
import argparse
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "experiments", "evaluation"))

UNITS = r"(?:\\%|%|ms|µs|\\mu\s*s|us|ns|s|min|GB/s|GiB|MiB|MB|KiB|KB|GB|x|\$\\times\$|\\times|TFLOP/s|GFLOP/s)"
MEASUREMENT = re.compile(r"(?<![\w.\\-])(\d+\.\d+|\d+\s*" + UNITS + r")(?![\w])")
MACRO_ARG = re.compile(r"\\(res|target|ref|label|cite|eqref|input|include|includegraphics|texttt|code|url|href|begin|end"
                       r"|tsrdef|usepackage|documentclass|hspace|vspace|setlength|resizebox)\s*(\[[^\]]*\])?\s*\{[^{}]*\}")


def sources(paper=HERE):
    out = [os.path.join(paper, f) for f in sorted(os.listdir(paper)) if f.endswith(".tex")]
    sec = os.path.join(paper, "sections")
    if os.path.isdir(sec):
        out += [os.path.join(sec, f) for f in sorted(os.listdir(sec)) if f.endswith(".tex")]
    return out


def strip_comments(text):
    return re.sub(r"(?<!\\)%.*", "", text)


# Lengths (column widths, spacing) are settings, not measurements.
LENGTH = re.compile(r"\d+(\.\d+)?\s*(\\linewidth|\\textwidth|\\columnwidth|\\baselineskip|em|ex|pt|cm|mm|in)\b")
# Where numbers are layout or citation data: the preamble, TikZ pictures (coordinates) and the
# bibliography (years, versions, identifiers).
SKIPPED = [(re.compile(r"\\documentclass"), re.compile(r"\\begin\{document\}")),
           (re.compile(r"\\begin\{tikzpicture\}"), re.compile(r"\\end\{tikzpicture\}")),
           (re.compile(r"\\begin\{thebibliography\}"), re.compile(r"\\end\{thebibliography\}"))]


def measured_lines(lines):
    """The lines whose numbers are checked: (number, text), the SKIPPED blocks left out."""
    out, until = [], None
    for n, line in enumerate(lines, 1):
        text = strip_comments(line)
        if until is None:
            for start, end in SKIPPED:
                if start.search(text):
                    until = end
                    break
        if until is not None:
            if until.search(text):
                until = None
            continue
        out.append((n, text))
    return out


def defined_keys(raw_dir):
    import paper_outputs
    with tempfile.TemporaryDirectory() as d:
        paper_outputs.generate(raw_dir, d, log=lambda m: None)
        with open(os.path.join(d, "results.tex")) as f:
            return set(re.findall(r"\\tsrdef\{([^}]*)\}", f.read()))


def check(raw_dir, paper=HERE):
    import paper_outputs
    findings = []
    used_keys = {}
    for path in sources(paper):
        rel = os.path.relpath(path, os.path.dirname(os.path.dirname(paper)))
        with open(path) as f:
            lines = f.read().splitlines()
        for n, raw_line in enumerate(lines, 1):
            line = strip_comments(raw_line)
            for m in re.finditer(r"\\(input|include|includegraphics)\s*(\[[^\]]*\])?\s*\{([^}]*)\}", line):
                target = m.group(3)
                if target.startswith("generated/"):
                    name = os.path.splitext(target[len("generated/"):])[0]
                    if name not in paper_outputs.GENERATED:
                        findings.append(f"{rel}:{n}: {target}: the generator writes no such file")
                elif not any(os.path.exists(os.path.join(paper, target + ext)) for ext in ("", ".tex", ".pdf", ".png")):
                    findings.append(f"{rel}:{n}: {target}: no such file")
            for m in re.finditer(r"\\res\{([^}#]*)\}", line):  # not a macro's \res{note.#1}
                used_keys.setdefault(m.group(1), f"{rel}:{n}")
        for n, line in measured_lines(lines):
            text = LENGTH.sub(" ", line)
            for _ in range(3):  # nested arguments
                text = MACRO_ARG.sub(" ", text)
            text = re.sub(r"\\[A-Za-z]+\*?", " ", text)  # other macros' names (\section, \S, ...)
            for m in MEASUREMENT.finditer(text):
                findings.append(f"{rel}:{n}: '{m.group(1)}' looks like a measurement: use \\res{{key}} "
                                f"(or \\target{{...}} for a requirement or setting)")
    keys = defined_keys(raw_dir)
    for k, where in sorted(used_keys.items()):
        if k not in keys:
            findings.append(f"{where}: \\res{{{k}}}: the generator defines no such result")
    return findings


def main():
    import raw_results
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw-dir", default=raw_results.RAW_DIR)
    ap.add_argument("--paper", default=HERE, help="the paper's folder (default: this script's)")
    a = ap.parse_args()
    try:
        findings = check(a.raw_dir, a.paper)
    except Exception as e:  # the generator's MissingResults: no stored results to check the keys against
        print(f"check_sources: {e}", file=sys.stderr)
        return 1
    for f in findings:
        print(f)
    print(f"check_sources: {len(sources(a.paper))} files, {len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
