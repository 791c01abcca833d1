"""varying_shapes, Numba twin of varying_shapes.tsb (see there). Args: [N] [W]. The step is
elementwise_chain_numba.py's on [R, 512]: one @njit(parallel=True) loop, prange over the rows,
f32 constants; one compiled function serves every row count (shapes are not part of Numba's
signature). The threading layer is workqueue (tensor_twin.numba_threading_layer says why).
Numba compiles on the first call, in the warm-up iterations. Inputs and loop: the NumPy twin's
main."""
import math

import numba
import numpy as np
from numba import njit, prange
from tensor_twin import numba_threading_layer
from varying_shapes_numpy import main

numba_threading_layer(numba)
ONE, K13, K02, K17, K005 = map(np.float32, (1, 1.3, 0.2, 1.7, 0.05))


@njit(parallel=True)
def step(x, y):
    out = np.empty_like(x)
    for r in prange(x.shape[0]):
        for c in range(x.shape[1]):
            xi, yi = x[r, c], y[r, c]
            out[r, c] = math.tanh(yi * K13 + xi) * (ONE / (ONE + math.exp(K02 - yi))) * K17 + xi * K005
    return out


if __name__ == "__main__":
    main(step)
