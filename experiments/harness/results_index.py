#!/usr/bin/env python3
"""The index of experiments/results/ (INDEX.md): the newest run of each benchmark with its date,
commit, machine and a one-line summary, and the dated runs kept with the documents that cite them.

The folder's one naming scheme:
  <benchmark>-latest.<ext>                   the newest run (every harness writes it)
  <benchmark>-<YYYY-MM-DD>[-<what>].<ext>    a dated run kept because a document cites it
A file named otherwise, or a dated run that no document cites (git keeps the rest), is a problem.

Usage:
  python3 experiments/harness/results_index.py            # rewrite experiments/results/INDEX.md
  python3 experiments/harness/results_index.py --check    # fail if INDEX.md is stale or a file is a problem
The harnesses call refresh() after writing their results, so the index follows them."""
import argparse
import csv
import datetime
import fnmatch
import io
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(REPO, "experiments", "results")
INDEX = "INDEX.md"

LATEST = re.compile(r"^(?P<bench>[a-z0-9]+(?:-[a-z0-9]+)*?)-latest\.(?P<ext>[a-z]+)$")
DATED = re.compile(r"^(?P<bench>[a-z0-9]+(?:-[a-z0-9]+)*?)-(?P<date>\d{4}-\d{2}-\d{2})"
                   r"(?:-(?P<what>[a-z0-9]+(?:-[a-z0-9]+)*))?\.(?P<ext>[a-z]+)$")
# Files that carry no header of their own take it from the run they belong to: the warm-up CSVs
# and plot of run_bench.py are written beside jit-*.md (jit-short-*.md at --size short, ...).
COMPANION_SUFFIXES = ["-warmup-iterations", "-warmup"]
# Where a run may be cited: the documents, not the results themselves.
DOCUMENTS = ["README.md", "docs", "experiments/README.md", "experiments/bench", "papers"]
# A citation: a file name, or a pattern of them (`jit-2026-11-23-llvm-tier-only.*`).
CITED = re.compile(r"[A-Za-z0-9_*{}-]+[A-Za-z0-9_*}-]\.(?:md|csv|svg|log|\*)")

DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
DATE_IN = re.compile(r"\d{4}-\d{2}-\d")
# The commit a run was built from, in the forms the harnesses write (most specific first).
COMMIT = [re.compile(p) for p in (r"built from commit ([0-9a-f]{7,40})", r"new [0-9a-f]+: commit ([0-9a-f]{7,40})",
                                  r"checks of commit ([0-9a-f]{7,40})", r"checks at ([0-9a-f]{7,40})",
                                  r"\bcommit ([0-9a-f]{7,40})")]
MACHINE = [re.compile(p, re.M) for p in (r"^- (?:machine|device): (.+)$", r"machine: ([^\n]+?)\.?$",
                                         r"^GPU 0: ([^(\n]+?) \(UUID")]


def dated_arguments(ap, bench):
    """--dated and --tag, for the harnesses whose runs are often compared with one another."""
    ap.add_argument("--dated", action="store_true",
                    help=f"also write copies named {bench}-DATE.* (cite them in a document, or they go)")
    ap.add_argument("--tag", help=f"implies --dated, and is appended to the copies' names ({bench}-DATE-TAG.*): "
                                  "what changed, in a word or two")


def dated_run(dated, tag=None):
    """The `<YYYY-MM-DD>[-<what>]` of a run's dated copies (today, and the tag saying what changed),
    or None when the harness was asked for none (neither --dated nor --tag)."""
    if not (dated or tag):
        return None
    return datetime.date.today().isoformat() + (f"-{tag}" if tag else "")


def save(out_dir, bench, ext, text, dated=None):
    """Writes a run's file as <bench>-latest.<ext> and, given `dated`, as <bench>-<dated>.<ext>.
    `{RUN}` in the text becomes the copy's own run ("latest" or `dated`), so that a report names the
    plot and tables written beside it. Returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for run in ["latest"] + ([dated] if dated else []):
        path = os.path.join(out_dir, f"{bench}-{run}.{ext}")
        with open(path, "w", newline="") as f:
            f.write(text.replace("{RUN}", run))
        paths.append(path)
    return paths


def csv_text(rows):
    """Rows as CSV text (for save)."""
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


class Entry:
    """One results file: its name's parts and what its text says about the run."""

    def __init__(self, folder, name, match, latest):
        self.name, self.latest = name, latest
        self.bench, self.ext = match["bench"], match["ext"]
        self.stem = name[:-len(self.ext) - 1]
        self.name_date = None if latest else match["date"]
        with open(os.path.join(folder, name), errors="replace") as f:
            self.head = f.read(8000)
        self.date, self.commit, self.machine = header(self.head, self.ext)
        self.summary = summary(self.head, self.ext)


def header(text, ext):
    """(date, commit, machine) from a file's first lines, None where it does not say."""
    if ext == "csv":
        return None, None, None
    lines = text.splitlines()[:40]
    top = "\n".join(lines)
    date = next((m.group(1) for line in lines[:6] for m in [DATE.search(line)] if m), None)
    commit = next((m.group(1)[:12] for p in COMMIT for m in [p.search(top)] if m), None)
    machine = next((m.group(1).strip() for p in MACHINE for m in [p.search(top)] if m), None)
    return date, commit, machine and shorten(machine.split("; ")[0])


def shorten(text, width=90):
    return text if len(text) <= width else text[:width - 1].rsplit(" ", 1)[0] + " …"


def summary(text, ext):
    """One line saying what the file is: a report's title without its date, a plot's title, a
    table's columns, that a JSON file is raw data, a log's first comment or line."""
    if ext == "md":
        title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), "")
        title = re.sub(r"[,:]? *\(?\d{4}-\d{2}-\d{2}\)?$", "", title).strip()
        return title or "(no title)"
    if ext == "svg":
        m = re.search(r"<title>([^<]*)</title>", text)
        return "plot: " + (m.group(1) if m else "(no title)")
    if ext == "csv":
        columns = text.splitlines()[0].split(",") if text else []
        return "table: " + ", ".join(columns[:6]) + (", …" if len(columns) > 6 else "")
    if ext == "json":
        return "data: the run's raw results (JSON)"
    first = next((line.lstrip("# ").strip() for line in text.splitlines() if line.strip()), "")
    return "log: " + shorten(first.split(" (")[0])


def companion(bench):
    """The benchmark whose report speaks for bench's files (jit-short-warmup -> jit-short), or None."""
    return next((bench[:-len(s)] for s in COMPANION_SUFFIXES if bench.endswith(s)), None)


def citations(repo):
    """{document path: the file names and patterns it mentions} over the documents of DOCUMENTS."""
    found = {}
    for top in DOCUMENTS:
        path = os.path.join(repo, top)
        files = [path] if os.path.isfile(path) else [
            os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".md")]
        for doc in sorted(files):
            with open(doc, errors="replace") as f:
                # Only dated runs need citing: a name without a date (`*.md`) is no citation.
                found[os.path.relpath(doc, repo)] = {n for n in CITED.findall(f.read()) if DATE_IN.search(n)}
    return found


def expand(pattern):
    """`a-2026-11-2{6,7}-x.md` as the names it stands for (the shell's brace form)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in expand(pattern[:m.start()] + alt + pattern[m.end():])]


def cited_by(name, docs):
    return sorted(doc for doc, names in docs.items()
                  if any(fnmatch.fnmatchcase(name, p) for n in names for p in expand(n)))


def scan(folder, repo=REPO):
    """(entries, problems) of a results folder."""
    entries, problems = [], []
    for name in sorted(os.listdir(folder)):
        if name == INDEX or name.startswith(".") or os.path.isdir(os.path.join(folder, name)):
            continue
        m = LATEST.match(name)
        d = None if m else DATED.match(name)
        if not (m or d):
            problems.append(f"{name}: not named <benchmark>-latest.<ext> or <benchmark>-<YYYY-MM-DD>[-<what>].<ext>")
            continue
        entries.append(Entry(folder, name, m or d, bool(m)))
    fill_in(folder, entries)
    docs = citations(repo)
    for e in entries:
        e.cited_by = cited_by(e.name, docs)
        if not e.latest and not e.cited_by:
            problems.append(f"{e.name}: a dated run no document cites (cite it or `git rm` it: git keeps it)")
    benches = {e.bench for e in entries}
    for b in sorted(benches):
        if not any(e.latest and e.bench == b for e in entries):
            problems.append(f"{b}: dated runs but no {b}-latest.* file")
    return entries, problems


def fill_in(folder, entries):
    """What a file does not say comes from the other files of its run (same stem, or its companion
    benchmark's), then from its name's date. Never from git: the index is a function of the folder's
    files alone, so that it reads the same in every clone (a shallow one, or one whose commits were
    replayed); a report that never said its commit shows "—"."""
    by_stem = {}
    for e in entries:
        by_stem.setdefault(e.stem, []).append(e)

    def relatives(e):
        yield from (x for x in by_stem.get(e.stem, []) if x is not e)
        owner = companion(e.bench)
        if owner:
            yield from by_stem.get(owner + e.stem[len(e.bench):], [])

    for e in entries:
        for field in ("date", "commit", "machine"):
            if getattr(e, field) is None:
                setattr(e, field, next((getattr(x, field) for x in relatives(e) if getattr(x, field)), None))
        if e.date is None:
            e.date = e.name_date


def render(entries, problems):
    """INDEX.md's text."""
    out = ["# Results index", "",
           "Generated by `python3 experiments/harness/results_index.py` from the files of this folder "
           "(the harnesses rerun it after writing); do not edit by hand. Names: `<benchmark>-latest.<ext>` "
           "is a benchmark's newest run, `<benchmark>-<YYYY-MM-DD>-<what>.<ext>` a dated run kept because "
           "a document cites it; git history keeps the others. Date, commit and machine are read from "
           "each report's header (from its run's report for the CSVs and plots); \"—\" where the run's "
           "report does not say (`git log` of the file tells when it was added).", "",
           "## Newest run per benchmark", "",
           "| benchmark | files | date | commit | machine | summary |", "|---|---|---|---|---|---|"]
    latest = {}
    for e in entries:
        if e.latest:
            latest.setdefault(e.bench, []).append(e)
    for bench, files in sorted(latest.items()):
        main = next((f for f in files if f.ext == "md"), files[0])
        out.append("| " + " | ".join([
            bench, ", ".join(f"[{f.ext}]({f.name})" for f in files), main.date or "—", main.commit or "—",
            cell(main.machine), cell(main.summary)]) + " |")
    out += ["", "## Dated runs kept", "",
            "| run | files | date | commit | machine | cited by |", "|---|---|---|---|---|---|"]
    dated = {}
    for e in entries:
        if not e.latest:
            dated.setdefault(e.stem, []).append(e)
    for stem, files in sorted(dated.items()):
        main = next((f for f in files if f.ext == "md"), files[0])
        docs = sorted({d for f in files for d in f.cited_by})
        out.append("| " + " | ".join([
            stem, ", ".join(f"[{f.ext}]({f.name})" for f in files), main.date or "—", main.commit or "—",
            cell(main.machine), ", ".join(f"[{d}]({os.path.relpath(d, 'experiments/results')})" for d in docs)
            or "—"]) + " |")
    if problems:
        out += ["", "## Problems", ""] + [f"- {p}" for p in problems]
    return "\n".join(out) + "\n"


def cell(text):
    return (text or "—").replace("|", "\\|")


def refresh(folder=RESULTS, repo=REPO):
    """Rewrites folder/INDEX.md where the folder keeps one (the repository's results folder does; a
    harness's scratch --out-dir or the GPU bundle's output does not); prints the problems, and a
    harness's run goes on regardless."""
    if not (os.path.exists(os.path.join(folder, INDEX)) or os.path.realpath(folder) == os.path.realpath(RESULTS)):
        return []
    entries, problems = scan(folder, repo)
    with open(os.path.join(folder, INDEX), "w") as f:
        f.write(render(entries, problems))
    for p in problems:
        print(f"results_index: {p}", file=sys.stderr)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=RESULTS, help="the results folder (default experiments/results)")
    ap.add_argument("--repo", default=REPO, help="the repository whose documents cite the results")
    ap.add_argument("--check", action="store_true", help="write nothing; fail if INDEX.md is not what "
                                                         "this would write or a file is named off the scheme")
    a = ap.parse_args()
    if not a.check:
        return 1 if refresh(a.results, a.repo) else 0
    entries, problems = scan(a.results, a.repo)
    for p in problems:
        print(f"results_index: {p}", file=sys.stderr)
    path = os.path.join(a.results, INDEX)
    current = open(path).read() if os.path.exists(path) else ""
    if current != render(entries, problems):
        print(f"results_index: {path} is stale: run python3 experiments/harness/results_index.py",
              file=sys.stderr)
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
