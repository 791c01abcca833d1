"""experiments/harness/results_index.py: the results folder's naming scheme and its INDEX.md, on a
temporary folder (the newest run per benchmark and where its date, commit and machine come from,
the problems it reports), and on the committed folder: INDEX.md is what the generator writes now."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "experiments", "harness"))
import results_index  # noqa: E402

REPORT = """# A benchmark, {date}

- machine: Test CPU, 2 CPUs
- built from commit {commit}; cells: median of 3 repetitions

| case | ms |
|---|---|
"""


class TemporaryResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        self.results = os.path.join(self.repo, "experiments", "results")
        os.makedirs(self.results)
        os.makedirs(os.path.join(self.repo, "docs"))

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text, folder=None):
        with open(os.path.join(folder or self.results, name), "w") as f:
            f.write(text)

    def scan(self):
        entries, problems = results_index.scan(self.results, self.repo)
        return {e.name: e for e in entries}, problems

    def test_the_latest_file_is_the_benchmarks_row_with_its_header(self):
        self.write("bench-latest.md", REPORT.format(date="2026-02-03", commit="abcdef123456"))
        self.write("bench-2026-01-02-old-kernels.md", REPORT.format(date="2026-01-02", commit="0123456789ab"))
        self.write("notes.md", "cites [this](../experiments/results/bench-2026-01-02-old-kernels.md)\n",
                   os.path.join(self.repo, "docs"))
        entries, problems = self.scan()
        self.assertEqual(problems, [])
        index = results_index.render(list(entries.values()), problems)
        row = next(line for line in index.splitlines() if line.startswith("| bench |"))
        self.assertIn("2026-02-03", row)
        self.assertIn("abcdef123456", row)
        self.assertIn("Test CPU, 2 CPUs", row)
        self.assertIn("A benchmark", row)
        self.assertNotIn("2026-01-02", row)
        dated = next(line for line in index.splitlines() if line.startswith("| bench-2026-01-02-old-kernels |"))
        self.assertIn("docs/notes.md", dated)

    def test_a_table_without_a_header_takes_its_runs_and_a_companions(self):
        self.write("jit-latest.md", REPORT.format(date="2026-03-04", commit="feedfacecafe"))
        self.write("jit-latest.csv", "program,runtime\nfib,tessera\n")
        self.write("jit-warmup-latest.csv", "program,status\nfib,ok\n")
        entries, problems = self.scan()
        self.assertEqual(problems, [])
        for name in ("jit-latest.csv", "jit-warmup-latest.csv"):
            self.assertEqual((entries[name].date, entries[name].commit, entries[name].machine),
                             ("2026-03-04", "feedfacecafe", "Test CPU, 2 CPUs"), name)
        self.assertEqual(entries["jit-warmup-latest.csv"].summary, "table: program, status")

    def test_the_warmup_tables_of_a_sized_run_take_that_runs_header(self):
        # run_bench.py --size short writes jit-short-latest.md beside jit-short-warmup-*.csv.
        self.write("jit-short-latest.md", REPORT.format(date="2026-03-06", commit="5ca1ab1e0000"))
        self.write("jit-short-warmup-latest.csv", "program,status\nfib,ok\n")
        self.write("jit-short-warmup-iterations-latest.csv", "mode,iteration\njit,1\n")
        entries, problems = self.scan()
        self.assertEqual(problems, [])
        for name in ("jit-short-warmup-latest.csv", "jit-short-warmup-iterations-latest.csv"):
            self.assertEqual((entries[name].date, entries[name].commit), ("2026-03-06", "5ca1ab1e0000"), name)

    def test_the_index_is_a_function_of_the_files_not_of_git_history(self):
        # A clone's history may differ (shallow, replayed commits, another abbreviation length):
        # what a report does not say is "—", whatever git would answer.
        self.write("sinking-latest.md", "# Allocation sinking (2026-03-07)\n\nmachine: Test CPU\n")
        self.write("sinking-latest.csv", "program,seconds\nmlp,0.5\n")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t", GIT_COMMITTER_DATE="2001-01-01T00:00:00")
        for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "results"]):
            subprocess.run(["git"] + cmd, cwd=self.repo, env=env, check=True, capture_output=True)
        entries, problems = self.scan()
        self.assertEqual(problems, [])
        for name in ("sinking-latest.md", "sinking-latest.csv"):
            self.assertEqual((entries[name].date, entries[name].commit), ("2026-03-07", None), name)
        row = next(line for line in results_index.render(list(entries.values()), problems).splitlines()
                   if line.startswith("| sinking |"))
        self.assertIn("| 2026-03-07 | — |", row)

    def test_a_json_beside_a_report_takes_its_header(self):
        self.write("collectives-latest.md", REPORT.format(date="2026-03-05", commit="0badc0ffee00"))
        self.write("collectives-latest.json", '{\n  "date": "2026-03-05",\n  "np": 2\n}\n')
        entries, problems = self.scan()
        self.assertEqual(problems, [])
        e = entries["collectives-latest.json"]
        self.assertEqual((e.date, e.commit, e.machine), ("2026-03-05", "0badc0ffee00", "Test CPU, 2 CPUs"))
        self.assertEqual(e.summary, "data: the run's raw results (JSON)")

    def test_names_off_the_scheme_are_problems(self):
        self.write("bench-latest.md", REPORT.format(date="2026-02-03", commit="abcdef123456"))
        for name in ("latest-bench.md", "bench-abcdef1.md", "bench-2026-1-2.md", "Bench-latest.md"):
            self.write(name, "x\n")
        _, problems = self.scan()
        for name in ("latest-bench.md", "bench-abcdef1.md", "bench-2026-1-2.md", "Bench-latest.md"):
            self.assertTrue(any(p.startswith(name + ": not named") for p in problems), (name, problems))

    def test_an_uncited_dated_run_and_a_benchmark_without_latest_are_problems(self):
        self.write("bench-latest.md", REPORT.format(date="2026-02-03", commit="abcdef123456"))
        self.write("bench-2026-01-02.md", REPORT.format(date="2026-01-02", commit="0123456789ab"))
        self.write("other-2026-01-05-first.md", REPORT.format(date="2026-01-05", commit="0123456789ab"))
        self.write("notes.md", "`other-2026-01-05-*.md`\n", os.path.join(self.repo, "docs"))
        _, problems = self.scan()
        self.assertIn("bench-2026-01-02.md: a dated run no document cites (cite it or `git rm` it: git keeps it)",
                      problems)
        self.assertIn("other: dated runs but no other-latest.* file", problems)
        self.assertFalse(any(p.startswith("other-2026-01-05-first.md") for p in problems), problems)

    def test_save_writes_latest_and_the_dated_copy_naming_its_own_files(self):
        paths = results_index.save(self.results, "bench", "md", "plot: bench-{RUN}.svg\n", "2026-01-02-wider")
        self.assertEqual([os.path.basename(p) for p in paths], ["bench-latest.md", "bench-2026-01-02-wider.md"])
        with open(paths[1]) as f:
            self.assertEqual(f.read(), "plot: bench-2026-01-02-wider.svg\n")
        self.assertIsNone(results_index.dated_run(False, None))


    def test_refresh_keeps_an_index_only_where_the_folder_has_one(self):
        # A harness's scratch --out-dir (or the GPU bundle's output) gets no INDEX.md ...
        self.write("bench-latest.md", REPORT.format(date="2026-02-03", commit="abcdef123456"))
        self.assertEqual(results_index.refresh(self.results, self.repo), [])
        self.assertFalse(os.path.exists(os.path.join(self.results, "INDEX.md")))
        # ... and a folder that keeps one has it rewritten, problems listed.
        self.write("INDEX.md", "old\n")
        self.write("latest-other.md", "x\n")
        problems = results_index.refresh(self.results, self.repo)
        self.assertEqual(len(problems), 1, problems)
        with open(os.path.join(self.results, "INDEX.md")) as f:
            index = f.read()
        self.assertIn("| bench |", index)
        self.assertIn("latest-other.md: not named", index)


class CommittedResults(unittest.TestCase):
    def test_index_is_up_to_date_and_every_file_follows_the_scheme(self):
        p = subprocess.run([sys.executable, os.path.join(REPO, "experiments", "harness", "results_index.py"),
                            "--check"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()
