"""A stand-in for tessera-vm in the tests of the test drivers (lsan_tracer_crash_test.py,
fuzz/diff_fuzz_timeout_test.py): an executable Python script that counts its runs in the file
$FAKE_VM_COUNTER (`runs`: the runs before this one) and then does what `body` says."""

import os

PREAMBLE = r'''#!/usr/bin/env python3
import os, sys, time
counter = os.environ["FAKE_VM_COUNTER"]
runs = 0
if os.path.exists(counter):
    with open(counter) as f:
        runs = int(f.read())
with open(counter, "w") as f:
    f.write(str(runs + 1))
'''


def write_fake_vm(path, body):
    """Writes the script (the run counter, then `body`) to `path`, executable."""
    with open(path, "w") as f:
        f.write(PREAMBLE + body)
    os.chmod(path, 0o755)


def fake_vm_runs(counter):
    """How many times the fake VM counting in `counter` ran."""
    with open(counter) as f:
        return int(f.read())
