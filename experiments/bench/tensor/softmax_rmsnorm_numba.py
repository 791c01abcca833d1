"""softmax_rmsnorm, Numba twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]. One
@njit(parallel=True) row kernel: prange over the rows, each row in four passes (max, exp and sum,
the division and the sum of squares, the rms_norm scale), all in f32 (a float64 constant would
promote the arithmetic to f64). fastmath lets LLVM reassociate the f32 max and sums, and so
vectorize the passes that call no libm function; no value is inf or nan. The threading layer is
workqueue (tensor_twin.numba_threading_layer says why). Numba compiles on the first call, in the
warm-up iterations. Inputs and loop: the NumPy twin's main."""
import math

import numba
import numpy as np
from numba import njit, prange
from softmax_rmsnorm_numpy import main
from tensor_twin import numba_threading_layer

numba_threading_layer(numba)
ZERO, ONE, TWO, EPS = np.float32(0), np.float32(1), np.float32(2), np.float32(1e-6)


@njit(parallel=True, fastmath=True)
def step(x, g):
    rows, cols = x.shape
    out = np.empty_like(x)
    inv_cols = ONE / np.float32(cols)
    for r in prange(rows):
        m = x[r, 0] * TWO
        for c in range(1, cols):
            m = max(m, x[r, c] * TWO)
        d = ZERO
        for c in range(cols):
            e = math.exp(x[r, c] * TWO - m)
            out[r, c] = e
            d += e
        inv_d = ONE / d
        ss = ZERO
        for c in range(cols):
            p = out[r, c] * inv_d
            out[r, c] = p
            ss += p * p
        scale = ONE / math.sqrt(ss * inv_cols + EPS)
        for c in range(cols):
            out[r, c] = out[r, c] * scale * g[c]
    return out


if __name__ == "__main__":
    main(step)
