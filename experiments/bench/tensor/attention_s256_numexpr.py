"""attention_s256, numexpr twin of attention_s256.tsb (see there); run(s, n, w) serves
attention_s1024 too. The products are NumPy's (BLAS), the elementwise passes numexpr's, in place
(scale and mask, exp, the division), the row max and sum NumPy's. Args: [N] [W]."""
import time

import numexpr as ne
import numpy as np
from tensor_twin import bench_args, checksum, durations, phase, report


def attention(q, k, v, neg_mask, scale):
    s = q @ k.swapaxes(-1, -2)
    ne.evaluate("s * scale + neg_mask", out=s)
    m = s.max(axis=-1, keepdims=True)
    ne.evaluate("exp(s - m)", out=s)
    d = s.sum(axis=-1, keepdims=True)
    ne.evaluate("s / d", out=s)
    return s @ v


def run(s, default_n, default_w=5):
    n, w = bench_args(default_n, default_w)
    shp = (2, 8, s, 64)
    q = (np.sin(phase(np, 16 * s, 64, 0.375, 0.8125)) * 0.5).reshape(shp)
    k = (np.cos(phase(np, 16 * s, 64, 0.625, 0.3125)) * 0.5).reshape(shp)
    v = (np.sin(phase(np, 16 * s, 64, 0.8125, 0.625)) * 0.5).reshape(shp)
    # causal: query i sees keys j <= i; the mask is built once
    neg_mask = np.triu(np.full((s, s), -np.inf, dtype=np.float32), k=1)
    scale = np.float32(1.0 / np.sqrt(64.0))  # f32: numexpr would make a double expression f64
    acc = 0.0
    ends = [0.0] * (w + n)  # the clock at the end of each iteration
    t0 = time.perf_counter()
    for i in range(w + n):
        if i == w:
            t0 = time.perf_counter()
        out = attention(q, k, v, neg_mask, scale)
        acc += float(out[i % 2, i % 8, i * 37 % s, i % 64])
        ends[i] = time.perf_counter()
    report(time.perf_counter() - t0, n, checksum(np, out) + acc, durations(t0, ends[w:]))


if __name__ == "__main__":
    run(256, 30)
