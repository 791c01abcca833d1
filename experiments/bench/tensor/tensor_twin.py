"""What the Python twins of the tensor programs (NumPy, PyTorch, numexpr, Numba) share; `xp` is the
numpy or the torch module (both have arange(n, dtype=float32), sin, cos, abs and reshape). The
numexpr and Numba twins run the NumPy twin's main (attention's run: its inputs, timed loop, checksum)
with their own step; the PyTorch twins build their inputs with torch.

Inputs are built from arange with sin/cos, never from an RNG, so that every language starts from
the same numbers: phase() multiplies by dyadic constants (0.375, 0.8125, ...), which keeps every
argument exact in f32 whatever the language's rounding, and sin/cos of it then agree to an ulp."""
import os
import sys
import time


def phase(xp, rows, cols, a, b):
    """f32 [rows, cols]: r * a + c * b (as Tessera's `reshape(arange(rows) * a, [rows, 1]) + arange(cols) * b`)."""
    return (xp.arange(rows, dtype=xp.float32) * a).reshape(rows, 1) + xp.arange(cols, dtype=xp.float32) * b


def bench_args(default_n, default_w=5):
    """[N] [W] from the command line: timed and warm-up iterations. As in the .tsb programs, they
    are one loop of W + N iterations, timed from iteration W on."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else default_n
    w = int(sys.argv[2]) if len(sys.argv) > 2 else default_w
    return n, w


def checksum(xp, t):
    """Sum of |t| weighted by position (1 + i/numel, t flattened), in float64: a permutation
    changes it and no terms cancel. Tessera's is the same sum, accumulated in double."""
    flat = t.reshape(-1)
    flat = flat.double() if hasattr(flat, "double") else flat.astype(xp.float64)
    n = flat.shape[0]
    return float((abs(flat) * (1.0 + xp.arange(n, dtype=xp.float64) / n)).sum())


def numba_threading_layer(numba):
    """The Numba twins' threading layer, set before their first parallel call: workqueue, unless
    NUMBA_THREADING_LAYER names another. Numba's default here is OpenMP (TBB is not installed),
    whose workers spin after each parallel loop and so starve OpenBLAS's threads (and, on a busy
    machine, the main thread): attention_s256_numba.py took 100-190 ms an iteration with it on 2
    cores, 6 ms with workqueue; the loops without BLAS were no slower with workqueue."""
    numba.config.THREADING_LAYER = os.environ.get("NUMBA_THREADING_LAYER", "workqueue")


def timed_loop(n, w, body):
    """The timed loop of every twin, as the .tsb programs run theirs: one loop of W + N iterations,
    body(i) running iteration i, timed from iteration W on. Returns what report() needs: the
    seconds from the start of iteration W to after the last iteration, and each timed iteration's
    seconds (durations)."""
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        body(i)
        ends[i] = time.perf_counter()
    return time.perf_counter() - t0, durations(t0, ends[w:])


def durations(t0, ends):
    """Seconds of each timed iteration: ends[i] is the clock (time.perf_counter()) at the end of
    timed iteration i, t0 at the start of the first. Stamps are taken in the loop and subtracted
    after it, as the .tsb programs do, so that the loop only reads the clock."""
    return [b - a for a, b in zip([t0] + ends[:-1], ends)]


def report(seconds, n, chk, iter_seconds=None):
    """The lines every program prints: `iter_us X` per timed iteration (in order; iter_seconds,
    when given), `time_per_iter_us X` (seconds over the n timed iterations) and `checksum C`."""
    for s in iter_seconds or ():
        print("iter_us %.3f" % (s * 1e6))
    print("time_per_iter_us %.3f" % (seconds / n * 1e6))
    print("checksum %r" % chk)  # repr: the shortest round-trip digits, as Tessera prints a float
