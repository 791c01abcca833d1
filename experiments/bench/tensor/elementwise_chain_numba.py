"""elementwise_chain, Numba twin of elementwise_chain.tsb (see there). Args: [N] [W]. The step is
one @njit(parallel=True) loop over the elements (prange, on Numba's threads), writing a new x as
the other twins do; sigmoid(z) is written 1 / (1 + exp(-z)). The constants, 1 included, are f32
(Numba, as NumPy's type rules, would promote f32 arithmetic with a Python float or int to f64).
The threading layer is workqueue (tensor_twin.numba_threading_layer says why). Numba compiles on
the first call, in the warm-up iterations. Inputs and loop: the NumPy twin's main."""
import math

import numba
import numpy as np
from elementwise_chain_numpy import main
from numba import njit, prange
from tensor_twin import numba_threading_layer

numba_threading_layer(numba)
ONE, K13, K02, K17, K005 = map(np.float32, (1, 1.3, 0.2, 1.7, 0.05))


@njit(parallel=True)
def step(x, y):
    out = np.empty_like(x)
    for i in prange(x.size):
        xi, yi = x[i], y[i]
        out[i] = math.tanh(yi * K13 + xi) * (ONE / (ONE + math.exp(K02 - yi))) * K17 + xi * K005
    return out


if __name__ == "__main__":
    main(step)
