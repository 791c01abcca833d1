"""The tensor suite (experiments/bench/tensor/): each program under Tessera (the default: T1
then T2, K3; "tessera-k2": T1 host code with K2 kernels, tier=1 specialize=0; the interpreter's
op-by-op kernels) and its NumPy, PyTorch eager, numexpr and
Numba twins. A program runs W warm-up and N timed iterations of one loop in one process (W covers
Tessera's compile of the loop: its trace is hot after 56 iterations), run by run_tensor_bench's
run_program; the N `iter_us` lines it prints (each timed iteration's time) are the cell's
samples (means of equal chunks of them beyond MAX_SAMPLES). Checksums are compared with NumPy's
(the correctness criterion's figure).
The machine's memory bandwidth comes from a STREAM triad, for the memory-bound programs' share."""
import os
import sys

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")
sys.path.insert(0, HARNESS)
import run_tensor_bench as rtb  # noqa: E402

NAME = "tensor"
TITLE = "The tensor suite against NumPy, PyTorch eager, numexpr and Numba"
# Programs whose iterations take microseconds ("overhead" bound): warm-up and quick-profile
# timed iterations, and the most samples a cell keeps (longer runs keep means of equal chunks).
OVERHEAD_WARMUP = 5000
OVERHEAD_QUICK_ITERATIONS = 5000
MAX_SAMPLES = 1000
# Programs whose shapes vary by design: not among the acceptance criteria's "specialized cases".
VARYING_SHAPES = {"varying_shapes"}
# NumPy first: its checksum is the reference.
RUNTIMES = [("numpy", ("py", "_numpy")), ("tessera", ("tsb", [])), ("tessera-k2", ("tsb", ["--jit-param", "tier=1", "--jit-param", "specialize=0"])),
            ("tessera-interp", ("tsb", ["--jit=off"])), ("torch", ("py", "_torch")),
            ("numexpr", ("py", "_numexpr")), ("numba", ("py", "_numba"))]


def run(ctx, writer):
    p = ctx.profile
    stream, note = rtb.measure_stream(rtb.STREAM_ELEMENTS["default" if p.name == "full" else "small"], p.timeout_s)
    writer.doc["derived"]["stream_gb_s"] = {str(k): v for k, v in stream.items()}
    writer.doc["derived"]["stream_note"] = note if not stream else ""
    runtimes = ctx.runtimes(NAME, [r for r, _ in RUNTIMES])
    programs = [x for x in rtb.PROGRAMS if not ctx.programs or x in ctx.programs]
    for prog in programs:
        spec = rtb.PROGRAMS[prog]
        n, w = spec.args["default"]
        if spec.bound == "overhead":
            # Iterations of a microsecond: the warm-up must also cover tier-up to T2 (JIT
            # parameter tier2, 1000 iterations, compiled in the background) and the timed part
            # must be long enough to time; its samples are then chunk means (below).
            w, n = max(w, OVERHEAD_WARMUP), (n if p.name == "full" else OVERHEAD_QUICK_ITERATIONS)
        else:
            n = min(n, p.tensor_iterations)
        ref = None
        for rt, how in RUNTIMES:
            if rt not in runtimes:
                continue
            if how[0] == "tsb":
                cmd = [ctx.vm, "run", os.path.join(rtb.BENCH, prog + ".tsb"), *how[1], "--", str(n), str(w)]
            else:
                script = os.path.join(rtb.BENCH, prog + how[1] + ".py")
                if not os.path.exists(script):
                    writer.cell(f"{prog}/{rt}", [], unit="us", status="missing", detail="no twin", program=prog,
                                runtime=rt)
                    continue
                cmd = [ctx.python, script, str(n), str(w)]
            ctx.progress(f"{prog:20} {rt:15}")
            status, _, chk, detail, samples = rtb.run_program(cmd, p.timeout_s, iterations=n)
            status = {"failed": "crash"}.get(status, status)  # the acceptance table counts crashes
            if len(samples) > MAX_SAMPLES:
                k = -(-len(samples) // MAX_SAMPLES)
                samples = [sum(samples[i:i + k]) / len(samples[i:i + k]) for i in range(0, len(samples), k)]
            rel = None
            if status == "ok":
                if rt == "numpy":
                    ref = chk
                if ref is not None:
                    rel = rtb.rel_diff(chk, ref)
                    if rel > 1e-3:
                        status, detail = "mismatch", f"checksum {chk!r} against NumPy's {ref!r}"
            c = writer.cell(f"{prog}/{rt}", samples, unit="us", status=status, detail=detail, program=prog,
                            runtime=rt, checksum=chk, rel_diff_to_numpy=rel, iterations=n, warmup=w,
                            samples_are_chunk_means=len(samples) == MAX_SAMPLES and n > MAX_SAMPLES,
                            bytes_per_iteration=spec.bytes, flops_per_iteration=spec.flops, bound=spec.bound)
            ctx.progress_done_cell(c)
