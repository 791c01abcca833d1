#!/usr/bin/env python3
"""The paper builds from the stored results alone (CI's check of issue 41's item 5):
  - check_sources.py passes on papers/tessera-vm (every \\input exists, every \\res{key} is
    defined, no hand-typed measurement), and flags a source with a bare measurement, an unknown
    key and a missing input;
  - `make OUT=<a temporary folder>`, from experiments/raw/, writes a PDF of several pages whose
    text has the acceptance table and no unresolved reference, and whose first page renders;
  - with no stored results, the build fails saying which benchmark has none.
Nothing is measured. Skips (saying why) without pdflatex, unless CI=true."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PAPER = os.path.join(REPO, "papers", "tessera-vm")
sys.path.insert(0, os.path.join(REPO, "tests", "runtime"))
from cli_checks import check, finish  # noqa: E402


def python_with(*modules):
    for py in (os.environ.get("TESSERA_NUMPY_PYTHON"), "/usr/bin/python3", sys.executable):
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import " + ", ".join(modules)],
                                                        capture_output=True).returncode == 0:
            return py
    return None


def main():
    py = python_with("scipy", "matplotlib")
    missing = [t for t in ("pdflatex", "pdftoppm", "pdftotext", "pdfinfo", "make") if not shutil.which(t)]
    if missing or not py:
        why = ("not installed: " + ", ".join(missing)) if missing else "no Python with SciPy and matplotlib"
        if os.environ.get("CI") == "true":
            print(f"FAIL: the paper cannot be built in CI: {why} (tools/install-deps.sh installs them)")
            return 1
        print(f"skipped: {why} (tools/install-deps.sh installs them)")
        return 0
    check_py = [py, os.path.join(PAPER, "check_sources.py")]
    p = subprocess.run(check_py, capture_output=True, text=True)
    check(p.returncode == 0, "check_sources.py passes on the paper's sources", p.stdout + p.stderr)

    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad")
        os.makedirs(os.path.join(bad, "sections"))
        with open(os.path.join(bad, "main.tex"), "w") as f:
            f.write("\\input{sections/body}\n\\input{generated/table-nonexistent}\n\\input{sections/absent}\n")
        with open(os.path.join(bad, "sections", "body.tex"), "w") as f:
            f.write("T2 runs in 1.5 ms, 3.2$\\times$ faster, using 40\\% of \\res{scalar.vs.luajit}.\n"
                    "The target is \\target{15\\%} over \\res{no.such.key}. % 2.5 ms in a comment is fine\n"
                    "Tier T1 and K3 of sm\\_90a, two runs.\n")
        p = subprocess.run(check_py + ["--paper", bad], capture_output=True, text=True)
        out = p.stdout
        check(p.returncode == 1, "check_sources.py fails on hand-typed measurements", out + p.stderr)
        for what in ("'1.5'", "'3.2'", "'40\\%'", "no.such.key", "table-nonexistent", "sections/absent"):
            check(what in out, f"... and names {what}", out)
        check("15" not in out and "2.5" not in out and "T1" not in out and "90" not in out,
              "... but not a \\target, a comment or a name with digits", out)

        out_dir = os.path.join(d, "out")
        os.makedirs(out_dir)
        raw = os.path.join(REPO, "experiments", "raw")
        make = ["make", "-C", PAPER, f"PYTHON={py}", f"RAW={raw}", f"OUT={out_dir}"]
        p = subprocess.run(make, capture_output=True, text=True, timeout=600)
        check(p.returncode == 0, "make builds the PDF from the stored results", (p.stdout + p.stderr)[-3000:])
        pdf = os.path.join(out_dir, "main.pdf")
        if os.path.exists(pdf):
            info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout
            pages = int(next((l.split()[1] for l in info.splitlines() if l.startswith("Pages:")), "0"))
            check(pages >= 6, f"the PDF has several pages ({pages})")
            text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True).stdout
            check("criterion" in text and "measured" in text, "its text has the acceptance criteria table")
            check("??" not in text, "no reference is left unresolved (??)")
            png = os.path.join(d, "page1")
            subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", "-singlefile", pdf, png], check=False)
            check(os.path.exists(png + ".png") and os.path.getsize(png + ".png") > 2000, "its first page renders")

        empty = os.path.join(d, "empty-raw")
        os.makedirs(empty)
        p = subprocess.run(["make", "-C", PAPER, f"PYTHON={py}", f"RAW={empty}", f"OUT={out_dir}", "generated"],
                           capture_output=True, text=True, timeout=300)
        check(p.returncode != 0 and "no stored raw results of scalar" in p.stderr,
              "with no stored results, the build fails naming the benchmarks without one", p.stderr[-1500:])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
