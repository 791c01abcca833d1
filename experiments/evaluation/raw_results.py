"""Raw results: one JSON file per benchmark per run, `experiments/raw/<run id>/<benchmark>.json`,
holding every sample with what a reader needs to trust or redo it: the machine, the commit the
binary was built from, the versions of every peer, the parameters and the protocol. Tables and
figures are made from these files only (paper_outputs.py), never from a run's console.

A run id is `YYYY-MM-DDTHHMMZ-<profile>` (UTC), so that ids sort by time; GPU sessions write
theirs the same way with `-gpu-<device>` appended."""
import datetime
import json
import os
import platform
import re
import subprocess

from protocol import summarize

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RAW_DIR = os.path.join(REPO, "experiments", "raw")
SCHEMA = "tessera-evaluation/1"


def new_run_id(profile, now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H%MZ") + "-" + profile


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def machine():
    """What the numbers were measured on."""
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = 0
    m = re.search(r"MemTotal:\s+(\d+) kB", _read("/proc/meminfo"))
    if m:
        mem = int(m.group(1)) * 1024
    os_name = ""
    m = re.search(r'PRETTY_NAME="([^"]+)"', _read("/etc/os-release"))
    if m:
        os_name = m.group(1)
    return {"cpu": cpu or platform.processor(), "cores": os.cpu_count(), "memory_bytes": mem,
            "os": os_name, "kernel": platform.release(), "arch": platform.machine()}


def git(*args):
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def commit():
    """The checkout's commit, and whether its sources differ from it (outside experiments/ and
    papers/, which do not change what is measured)."""
    dirty = git("status", "--porcelain", "--", ".", ":!experiments", ":!papers")
    return {"sha": git("rev-parse", "HEAD"), "dirty": bool(dirty)}


def tool_version(cmd):
    """The first line a command prints of its version, or None where it is not installed."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (p.stdout + p.stderr).strip()
    return text.splitlines()[0] if text and p.returncode == 0 else None


def python_module_version(python, module):
    return tool_version([python, "-c", f"import {module}; print({module}.__version__)"])


class RawWriter:
    """Collects one benchmark's cells and writes its raw file."""

    def __init__(self, run_id, profile, benchmark, title, parameters, protocol, versions):
        self.doc = {"schema": SCHEMA, "benchmark": benchmark, "title": title, "run_id": run_id,
                    "profile": profile,
                    "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "machine": machine(), "commit": commit(), "versions": versions,
                    "parameters": parameters, "protocol": protocol, "cells": [], "derived": {}}

    def cell(self, cell_id, samples, unit="s", status="ok", detail="", **extra):
        c = {"id": cell_id, "unit": unit, "status": status, "detail": detail, "samples": list(samples)}
        if samples and status in ("ok", "mismatch"):
            c["summary"] = summarize(samples)
        c.update(extra)
        self.doc["cells"].append(c)
        return c

    def write(self, raw_dir=RAW_DIR):
        self.doc["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        d = os.path.join(raw_dir, self.doc["run_id"])
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, self.doc["benchmark"] + ".json")
        with open(path, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.write("\n")
        return path


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a raw result of schema {SCHEMA}")
    return doc


def runs(raw_dir=RAW_DIR):
    """Run ids in time order."""
    if not os.path.isdir(raw_dir):
        return []
    return sorted(d for d in os.listdir(raw_dir) if os.path.isdir(os.path.join(raw_dir, d)))


def latest(benchmark, raw_dir=RAW_DIR, before=None, gpu=None):
    """The newest raw file of `benchmark` (in a run older than `before`, when given); gpu=True
    only GPU sessions' runs, gpu=False none of them. None when there is none."""
    for run in reversed(runs(raw_dir)):
        if before is not None and run >= before:
            continue
        if gpu is not None and ("-gpu-" in run) != gpu:
            continue
        path = os.path.join(raw_dir, run, benchmark + ".json")
        if os.path.exists(path):
            return load(path)
    return None
