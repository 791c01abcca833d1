"""softmax_rmsnorm, numexpr twin of softmax_rmsnorm.tsb (see there). Args: [N] [W]. numexpr for the
elementwise passes, NumPy for the row reductions (numexpr's max and sum along an axis are
single-threaded and slower than NumPy's), and for the rows' 1 / sqrt(mean + 1e-6) (1024 values,
not one per element). The * 2.0 is folded into the exp pass: max(2x) is 2 max(x) exactly.
Constants are f32 scalars (numexpr reads a float literal as a double). Inputs and loop: the
NumPy twin's main."""
import numexpr as ne
import numpy as np
from softmax_rmsnorm_numpy import main

TWO, EPS = np.float32(2.0), np.float32(1e-6)


def step(x, g):
    m = x.max(axis=-1, keepdims=True)
    e = ne.evaluate("exp(x * TWO - m * TWO)")
    d = e.sum(axis=-1, keepdims=True)
    ne.evaluate("e / d", out=e)
    r = 1 / np.sqrt(ne.evaluate("e * e").mean(axis=-1, keepdims=True) + EPS)
    return ne.evaluate("e * r * g")


if __name__ == "__main__":
    main(step)
