"""small_tensor_loop, numexpr twin of small_tensor_loop.tsb (see there). Args: [N] [W]. Two numexpr
calls per iteration: the update, and sum(s * s) (numexpr's reduction, fused with the square).
Constants are f32 scalars (numexpr reads a float literal as a double). Inputs and loop: the NumPy
twin's main."""
import numexpr as ne
import numpy as np
from small_tensor_loop_numpy import main

K09, K01 = np.float32(0.9), np.float32(0.1)


def step(s, ca, cb):
    s = ne.evaluate("tanh(s * ca + cb) * K09 + s * K01")
    return s, ne.evaluate("sum(s * s)")


if __name__ == "__main__":
    main(step)
