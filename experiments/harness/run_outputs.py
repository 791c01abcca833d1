"""The machine-readable reports of `tessera-vm run` besides --stats (stats_report.py), as the
harnesses read them (docs/observability.md has their fields):

  --metrics FILE.jsonl   one "run" record per run, then one "loop" record per hot loop;
  --jit-log[=FILE]       one line per JIT event: `[jit 12.345] trace.stop trace=3 kind=loop ...`,
                         a text with a space, a quote or '=' in double quotes with `"`, `\\` and
                         newlines escaped."""
import json
import re

JIT_LOG_LINE = re.compile(r"^\[jit (\d+\.\d+)\] ([a-z0-9_.]+)((?: \w+=(?:\"(?:[^\"\\]|\\.)*\"|\S*))*)$")
JIT_LOG_FIELD = re.compile(r" (\w+)=(\"(?:[^\"\\]|\\.)*\"|\S*)")
# What the harnesses and the tests read of a run record.
METRICS_RUN_KEYS = ["script", "status", "wall_ms", "jit", "device", "params", "traces", "aborts", "compile_ms",
                    "native_ms", "kernel_compile_ms", "kernel_tune_ms", "kernels"]
METRICS_TRACE_KEYS = ["recorded", "compiled", "side", "shared_exits", "aborted", "blacklisted_loops",
                      "blacklisted_functions", "invalidated", "upgraded_to_t2", "pending"]


def _value(text):
    """A field's value: an int, a float, a quoted text unescaped, or the text."""
    if text.startswith('"'):
        return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[1:-1])
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_jit_log(text):
    """The events of a --jit-log: a list of dicts {"ms", "event", and each field}. Raises
    ValueError on a line that is not an event line (naming it), so that a changed format shows."""
    events = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("[jit "):
            continue  # the program's own stderr
        m = JIT_LOG_LINE.match(line)
        if not m:
            raise ValueError(f"--jit-log line {n} is not `[jit MS] EVENT key=value...`: {line!r}")
        event = {"ms": float(m.group(1)), "event": m.group(2)}
        for key, value in JIT_LOG_FIELD.findall(m.group(3)):
            event[key] = _value(value)
        events.append(event)
    return events


def parse_metrics(text):
    """A --metrics file: a list of runs, each {"run": the run record, "loops": its loop records}.
    Raises ValueError on a line that is not JSON or a run record without METRICS_RUN_KEYS."""
    runs = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            raise ValueError(f"--metrics line {n} is not JSON: {e}") from None
        if record.get("record") == "run":
            missing = [k for k in METRICS_RUN_KEYS if k not in record and not record.get("interrupted")]
            if missing:
                raise ValueError(f"--metrics line {n}: a run record without {missing}")
            runs.append({"run": record, "loops": []})
        elif record.get("record") == "loop":
            if not runs:
                raise ValueError(f"--metrics line {n}: a loop record before any run record")
            runs[-1]["loops"].append(record)
        else:
            raise ValueError(f"--metrics line {n}: an unknown record {record.get('record')!r}")
    return runs
