"""README.md and docs/*.md link only inside the repository: every relative link (Markdown
`[text](target)`, `[label]: target`, an `<img src>`) resolves to a file or folder of the clone, an
anchor into a Markdown file names one of its headings, and no text points at a path outside the
clone (`../shared/...`, an absolute path), so that a clone alone is the whole documentation."""
import os
import re
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
IMG = re.compile(r"<img[^>]*\ssrc=\"([^\"]+)\"")
# A path that leaves the clone, written as text rather than as a link.
OUTSIDE = re.compile(r"(?<![\w.])\.\./(?:\.\./)*shared/|(?<![\w.])shared/(?:spec|design|bench|research)/")


def documents(repo):
    docs = os.path.join(repo, "docs")
    found = [os.path.join(repo, "README.md")]
    for d, _, files in os.walk(docs):
        found += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    return [f for f in found if os.path.exists(f)]


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path, errors="replace") as f:
        text = FENCE.sub("", f.read())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def problems(repo, path):
    """What is wrong with the links of one document, as 'FILE: ...' lines."""
    with open(path, errors="replace") as f:
        raw = f.read()
    rel = os.path.relpath(path, repo)
    out = []
    for m in OUTSIDE.finditer(raw):
        out.append(f"{rel}: names a path outside the repository: '{m.group(0)}...'")
    text = CODE.sub("", FENCE.sub("", raw))
    targets = INLINE.findall(text) + REFERENCE.findall(text) + IMG.findall(text)
    root = os.path.realpath(repo)
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        if file_part.startswith("/"):
            out.append(f"{rel}: absolute link '{target}' (link relative to the file)")
            continue
        resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if resolved != root and not resolved.startswith(root + os.sep):
            out.append(f"{rel}: link '{target}' leaves the repository")
        elif not os.path.exists(resolved):
            out.append(f"{rel}: link '{target}' points to a missing file")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            out.append(f"{rel}: link '{target}': no heading with anchor '#{anchor}' in "
                       f"{os.path.relpath(resolved, repo)}")
    return out


class RepositoryLinks(unittest.TestCase):
    def test_readme_and_docs_link_only_inside_the_repository(self):
        docs = documents(REPO)
        self.assertIn(os.path.join(REPO, "docs", "language.md"), docs)
        found = [p for d in docs for p in problems(REPO, d)]
        self.assertEqual(found, [], "\n" + "\n".join(found))


class TheChecker(unittest.TestCase):
    """The checker on a made-up repository: each kind of bad link is found, good ones are not."""

    def test_bad_links_are_found_and_good_ones_pass(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = os.path.join(tmp, "repo")
            os.makedirs(os.path.join(repo, "docs"))
            with open(os.path.join(repo, "docs", "a.md"), "w") as f:
                f.write("# A title\n\n## The `x` part, again\n")
            with open(os.path.join(repo, "README.md"), "w") as f:
                f.write("[ok](docs/a.md) [ok](docs/a.md#the-x-part-again) [ok](#intro) [web](https://example.org)\n"
                        "# Intro\n"
                        "[out](../shared/spec/language.md) [gone](docs/b.md) [abs](/etc/passwd)\n"
                        "[anchor](docs/a.md#nowhere)\n[ref]: ../outside.md\n"
                        "```\n[in a code block](../ignored.md)\n```\n")
            found = problems(repo, os.path.join(repo, "README.md"))
        self.assertEqual(len(found), 6, found)
        for what in ("'../shared/...'", "'../shared/spec/language.md' leaves", "'docs/b.md' points to a missing",
                     "absolute link '/etc/passwd'", "'docs/a.md#nowhere'", "'../outside.md' leaves"):
            self.assertTrue(any(what in p for p in found), (what, found))


if __name__ == "__main__":
    sys.exit(unittest.main())
