"""mlp_block, Numba twin of mlp_block.tsb (see there). Args: [N] [W]. One @njit(parallel=True)
function: the products with np.dot (BLAS), the bias and gelu (the exact erf form, math.erf) and
then the bias and residual as prange loops over the rows, in place on the products' outputs, in
f32 (a float64 constant would promote the arithmetic to f64). The threading layer is workqueue
(tensor_twin.numba_threading_layer says why). Numba compiles on the first call, in the warm-up
iterations. Inputs and loop: the NumPy twin's main."""
import math

import numba
import numpy as np
from mlp_block_numpy import main
from numba import njit, prange
from tensor_twin import numba_threading_layer

numba_threading_layer(numba)
ONE, HALF, RSQRT2 = np.float32(1), np.float32(0.5), np.float32(1.0 / math.sqrt(2.0))


@njit(parallel=True)
def step(x, w1, b1, w2, b2):
    h = np.dot(x, w1)
    for r in prange(h.shape[0]):
        for c in range(h.shape[1]):
            v = h[r, c] + b1[c]
            h[r, c] = v * HALF * (ONE + math.erf(v * RSQRT2))
    out = np.dot(h, w2)
    for r in prange(out.shape[0]):
        for c in range(out.shape[1]):
            out[r, c] = out[r, c] + b2[c] + x[r, c]
    return out


if __name__ == "__main__":
    main(step)
