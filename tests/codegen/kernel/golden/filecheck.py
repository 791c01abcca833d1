#!/usr/bin/env python3
"""A small FileCheck (LLVM's lit tests' matcher): checks a text against the check lines of a
test file. What it supports, as FileCheck does it:

  PREFIX:        the pattern is on a line at or after the previous match
  PREFIX-NEXT:   ... on the line right after the previous match's line
  PREFIX-SAME:   ... on the previous match's line, after it
  PREFIX-NOT:    the pattern is on no line between the previous match and the next one
                 (or the end of the text)
  PREFIX-LABEL:  as PREFIX:, and a PREFIX-NOT before it does not look past it

Patterns are literal text, with `{{regex}}` for a regular expression, `[[NAME:regex]]` to
capture what it matched and `[[NAME]]` for the text captured before. Runs of spaces and tabs
in the pattern and the text compare as one space. A test file without a check line of the
prefix is an error: a golden test must check something.
"""
import re

DIRECTIVE = r"(?:^|[^\w-])%s(-NEXT|-SAME|-NOT|-LABEL)?:(.*)$"


class CheckError(Exception):
    pass


class Check:
    def __init__(self, kind, pattern, where):
        self.kind, self.pattern, self.where = kind, pattern, where

    def regex(self, variables):
        """The pattern as a regular expression, with the variables captured so far."""
        out, i, p = [], 0, self.pattern
        names = []
        while i < len(p):
            if p.startswith("{{", i):
                end = p.find("}}", i + 2)
                if end < 0:
                    raise CheckError(f"{self.where}: unterminated {{{{")
                out.append("(?:%s)" % p[i + 2:end])
                i = end + 2
            elif p.startswith("[[", i):
                end = p.find("]]", i + 2)
                if end < 0:
                    raise CheckError(f"{self.where}: unterminated [[")
                name, colon, rx = p[i + 2:end].partition(":")
                if colon:
                    out.append("(?P<%s>%s)" % (name, rx))
                    names.append(name)
                elif name in variables:
                    out.append(re.escape(variables[name]))
                else:
                    raise CheckError(f"{self.where}: [[{name}]] is used before it is defined")
                i = end + 2
            elif p[i] in " \t":
                while i < len(p) and p[i] in " \t":
                    i += 1
                out.append(" ")
            else:
                out.append(re.escape(p[i]))
                i += 1
        return re.compile("".join(out)), names


def read_checks(test_text, test_name, prefix="CHECK"):
    rx = re.compile(DIRECTIVE % re.escape(prefix))
    checks = []
    for n, line in enumerate(test_text.splitlines(), 1):
        m = rx.search(line)
        if m:
            kind = (m.group(1) or "")[1:] or "CHECK"
            pattern = m.group(2).strip()
            if not pattern and kind != "NOT":
                raise CheckError(f"{test_name}:{n}: {prefix}{'-' + kind if kind != 'CHECK' else ''}: has no pattern")
            checks.append(Check(kind, pattern, f"{test_name}:{n}"))
    if not checks:
        raise CheckError(f"{test_name}: no {prefix}: lines")
    if checks[0].kind in ("NEXT", "SAME"):
        raise CheckError(f"{checks[0].where}: {prefix}-{checks[0].kind}: cannot be the first check")
    return checks


def canonical(line):
    return re.sub(r"[ \t]+", " ", line)


def context(lines, at, n=6):
    lo = max(0, at - 2)
    return "\n".join(f"  {i + 1:5d} | {lines[i]}" for i in range(lo, min(len(lines), lo + n)))


def check(text, checks):
    """Raises CheckError naming the first check that fails."""
    lines = [canonical(l) for l in text.splitlines()]
    variables = {}
    line, col = 0, 0  # where the previous match ended
    pending_not = []  # NOT checks waiting for the range that ends at the next match

    def search(c, first, last, start_col):
        rx, names = c.regex(variables)
        for i in range(first, min(last, len(lines))):
            m = rx.search(lines[i], start_col if i == first else 0)
            if m:
                return i, m, names
        return None

    def settle_nots(end_line, end_col):
        for c in pending_not:
            for i in range(line, min(end_line + 1, len(lines))):
                lo = col if i == line else 0
                hi = end_col if i == end_line else len(lines[i])
                rx, _ = c.regex(variables)
                if rx.search(lines[i][lo:hi]):
                    raise CheckError(f"{c.where}: CHECK-NOT: found '{c.pattern}' on output line {i + 1}:\n"
                                     + context(lines, i))
        pending_not.clear()

    for c in checks:
        if c.kind == "NOT":
            pending_not.append(c)
            continue
        if c.kind == "NEXT":
            found = search(c, line + 1, line + 2, 0)
        elif c.kind == "SAME":
            found = search(c, line, line + 1, col)
        else:
            found = search(c, line, len(lines), col)
        if not found:
            what = {"NEXT": "on the next line", "SAME": "on the same line"}.get(c.kind, "at or after this line")
            raise CheckError(f"{c.where}: expected '{c.pattern}' {what} of the output (line {line + 1}):\n"
                             + context(lines, line))
        i, m, names = found
        settle_nots(i, m.start())
        for name in names:
            variables[name] = m.group(name)
        line, col = i, m.end()
    settle_nots(len(lines) - 1, len(lines[-1]) if lines else 0)
