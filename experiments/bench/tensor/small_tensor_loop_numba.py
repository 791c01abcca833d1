"""small_tensor_loop, Numba twin of small_tensor_loop.tsb (see there). Args: [N] [W]. One @njit call
per iteration: the update and sum(s * s) in one loop over the 16 elements, in f32 (a float64
constant would promote the arithmetic to f64). Not parallel: 16 elements are far too few to
share among threads. Numba compiles on the first call, in the warm-up iterations. Inputs and
loop: the NumPy twin's main."""
import math

import numpy as np
from numba import njit
from small_tensor_loop_numpy import main

ZERO, K09, K01 = np.float32(0), np.float32(0.9), np.float32(0.1)


@njit
def step(s, ca, cb):
    out = np.empty_like(s)
    ss = ZERO
    for r in range(s.shape[0]):
        for c in range(s.shape[1]):
            v = math.tanh(s[r, c] * ca[r, c] + cb[r, c]) * K09 + s[r, c] * K01
            out[r, c] = v
            ss += v * v
    return out, ss


if __name__ == "__main__":
    main(step)
