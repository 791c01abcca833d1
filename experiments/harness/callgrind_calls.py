"""The instructions spent inside one function of a callgrind profile, and how often it was called.

`callgrind_annotate --inclusive=yes --tree=caller` lists, for every function, the callers with the
inclusive cost and the number of their calls into it:

      794,797 ( 0.25%)  < ???:tessera::jit::...::compile_t1(...)::{lambda()#1}>(...) (9x) [/path]
      794,797 ( 0.25%)  *  ???:tessera::jit::AsmjitBackend::compile(...) [/path]

`calls_into(profile, name)` sums, over the functions whose name contains `name` (overloads too),
the cost and the call counts of the callers outside that set: what the callers paid, each call
counted once even where one overload calls another.
"""
import re
import subprocess

_CALLER = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+<\s+(.*) \((\d+)x\)(?: \[.*\])?\s*$")
_FUNCTION = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+\*\s+(.*?)(?: \[.*\])?\s*$")


def parse_calls(annotate_text, name):
    """(instructions, calls) into the functions containing `name`, from callgrind_annotate's
    --inclusive=yes --tree=caller text; (0, 0) when no such function ran."""
    instructions = calls = 0
    callers = []
    for line in annotate_text.splitlines():
        if not line.strip():
            callers = []
            continue
        m = _CALLER.match(line)
        if m:
            callers.append((int(m.group(1).replace(",", "")), m.group(2), int(m.group(3))))
            continue
        m = _FUNCTION.match(line)
        if m:
            if name in m.group(2):
                for cost, caller, n in callers:
                    if name not in caller:
                        instructions += cost
                        calls += n
            callers = []
    return instructions, calls


def calls_into(profile, name, timeout=300):
    """(instructions, calls) into the functions whose name contains `name` in the callgrind
    output file `profile`; raises RuntimeError when callgrind_annotate fails."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller", "--threshold=100", profile],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("callgrind_annotate %s: %s" % (profile, p.stderr.decode("utf-8", "replace").strip()))
    return parse_calls(p.stdout.decode("utf-8", "replace"), name)
