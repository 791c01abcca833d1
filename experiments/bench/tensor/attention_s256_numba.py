"""attention_s256, Numba twin of attention_s256.tsb (see there); run(s, n, w) serves
attention_s1024 too. One @njit(parallel=True) function: per (batch, head), scores = q @ k^T with
np.dot (BLAS, into one reused [S, S] buffer), then the causal softmax row by row (prange over the
rows; key j <= query i only, the keys above the diagonal set to 0 instead of masked with -inf),
then np.dot(p, v) into the output. Args: [N] [W]. The threading layer is workqueue
(tensor_twin.numba_threading_layer says why). Numba compiles on the first call, in the warm-up
iterations. Inputs and loop: the NumPy twin's."""
import math

import numba
import numpy as np
from attention_s256_numpy import run as numpy_run
from numba import njit, prange
from tensor_twin import numba_threading_layer

numba_threading_layer(numba)
ZERO, ONE = np.float32(0), np.float32(1)


@njit(parallel=True, fastmath=True)
def attention(q, k, v, scale):
    b, h, s, _ = q.shape
    out = np.empty_like(q)
    p = np.empty((s, s), dtype=np.float32)
    for bh in range(b * h):
        bi, hi = bh // h, bh % h
        np.dot(q[bi, hi], k[bi, hi].T, p)
        for i in prange(s):
            m = p[i, 0] * scale
            for j in range(1, i + 1):
                m = max(m, p[i, j] * scale)
            t = ZERO
            for j in range(i + 1):
                e = math.exp(p[i, j] * scale - m)
                p[i, j] = e
                t += e
            inv_t = ONE / t
            for j in range(i + 1):
                p[i, j] *= inv_t
            for j in range(i + 1, s):
                p[i, j] = ZERO
        np.dot(p, v[bi, hi], out[bi, hi])
    return out


def run(s, default_n, default_w=5):
    scale = np.float32(1.0 / np.sqrt(64.0))  # f32: a float64 scale would make the softmax f64
    numpy_run(s, default_n, default_w, attention, (scale,))


if __name__ == "__main__":
    run(256, 30)
