"""attention_s256, NumPy twin of attention_s256.tsb (see there); run(s, n, w) serves
attention_s1024 too, and the numexpr and Numba twins (their attention, these inputs and this
loop). Plain NumPy attention: scores = q @ k^T * scale, -inf above the diagonal, softmax, @ v.
Args: [N] [W]."""
import numpy as np
from tensor_twin import bench_args, checksum, phase, report, timed_loop


def attention(q, k, v, neg_mask, scale):
    s = q @ k.swapaxes(-1, -2) * scale + neg_mask
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    return s @ v


def inputs(s):
    """q, k, v: [2, 8, S, 64]."""
    shp = (2, 8, s, 64)
    q = (np.sin(phase(np, 16 * s, 64, 0.375, 0.8125)) * 0.5).reshape(shp)
    k = (np.cos(phase(np, 16 * s, 64, 0.625, 0.3125)) * 0.5).reshape(shp)
    v = (np.sin(phase(np, 16 * s, 64, 0.8125, 0.625)) * 0.5).reshape(shp)
    return q, k, v


def causal_mask(s):
    """causal: query i sees keys j <= i, -inf above the diagonal; the mask is built once, as a
    user of NumPy would."""
    return np.triu(np.full((s, s), -np.inf, dtype=np.float32), k=1)


def run(s, default_n, default_w=5, attention=attention, args=None):
    """Each iteration is attention(q, k, v, *args); args: by default the causal mask and the scale."""
    n, w = bench_args(default_n, default_w)
    q, k, v = inputs(s)
    if args is None:
        args = (causal_mask(s), 1.0 / np.sqrt(64.0))
    out, acc = None, 0.0

    def body(i):
        nonlocal out, acc
        out = attention(q, k, v, *args)
        acc += float(out[i % 2, i % 8, i * 37 % s, i % 64])

    seconds, iter_seconds = timed_loop(n, w, body)
    report(seconds, n, checksum(np, out) + acc, iter_seconds)


if __name__ == "__main__":
    run(256, 30)
