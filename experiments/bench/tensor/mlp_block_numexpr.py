"""mlp_block, numexpr twin of mlp_block.tsb (see there). Args: [N] [W]. The products are NumPy's
(BLAS), the bias, gelu and residual passes numexpr's, except erf, which numexpr lacks: scipy's
vectorized erf between two numexpr passes (gelu stays the exact erf form). Constants are f32
scalars (numexpr reads a float literal as a double). Inputs and loop: the NumPy twin's main."""
import math

import numexpr as ne
import numpy as np
from mlp_block_numpy import main
from scipy.special import erf

HALF, RSQRT2 = np.float32(0.5), np.float32(1.0 / math.sqrt(2.0))


def step(x, w1, b1, w2, b2):
    h = x @ w1
    ne.evaluate("h + b1", out=h)
    e = erf(ne.evaluate("h * RSQRT2"))
    ne.evaluate("h * HALF * (1 + e)", out=h)
    o = h @ w2
    return ne.evaluate("o + b2 + x")


if __name__ == "__main__":
    main(step)
