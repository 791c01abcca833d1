"""varying_shapes, numexpr twin of varying_shapes.tsb (see there). Args: [N] [W]. The step is
elementwise_chain_numexpr.py's: one numexpr expression, f32 constants. Inputs and loop: the
NumPy twin's main."""
import numexpr as ne
import numpy as np
from varying_shapes_numpy import main

K13, K02, K17, K005 = map(np.float32, (1.3, 0.2, 1.7, 0.05))


def step(x, y):
    return ne.evaluate("tanh(y * K13 + x) * (1 / (1 + exp(K02 - y))) * K17 + x * K005")


if __name__ == "__main__":
    main(step)
