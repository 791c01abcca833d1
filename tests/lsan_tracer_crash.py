"""LeakSanitizer's own failure at the exit of a sanitizer build's process.

LSan checks for leaks at exit from a tracer thread that stops the others with ptrace. That
thread sometimes crashes ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal
error"), an intermittent LSan problem seen in many projects (google/sanitizers#1353) and not a
report about the program: no leak check was made. The known cause with GCC 12's runtime, a
dynamic-TLS block taken for glibc 2.19's layout (google/sanitizers#1322), is turned off by
tools/test.sh's intercept_tls_get_addr=0. For any other, the test drivers (conformance runner,
differential fuzzer) run such a process once more, so that its leak check is made, and say so
on stderr; a second crash is a failure like any other.
"""

import shlex
import subprocess
import sys


def lsan_tracer_crashed(stderr):
    return b"LeakSanitizer has encountered a fatal error" in stderr and b"Tracer caught signal" in stderr


def run_once_more_if_lsan_crashed(cmd, **kwargs):
    """subprocess.run(cmd, stderr=PIPE, **kwargs); a run whose stderr shows LSan's tracer
    crash is run once more, with a note on this process's stderr."""
    p = subprocess.run(cmd, stderr=subprocess.PIPE, **kwargs)
    if lsan_tracer_crashed(p.stderr):
        sys.stderr.write("note: LeakSanitizer's tracer crashed at the exit of %s "
                         "(google/sanitizers#1353); running it again\n" % shlex.join(cmd))
        p = subprocess.run(cmd, stderr=subprocess.PIPE, **kwargs)
    return p
