"""elementwise_chain, numexpr twin of elementwise_chain.tsb (see there). Args: [N] [W]. The step is
one numexpr expression (one pass over x and y, on numexpr's threads); sigmoid(z) is written
1 / (1 + exp(-z)), numexpr having none. numexpr reads a float literal as a double, which would
make the whole expression f64: the constants are f32 scalars, named. Inputs and loop: the NumPy
twin's main."""
import numexpr as ne
import numpy as np
from elementwise_chain_numpy import main

K13, K02, K17, K005 = map(np.float32, (1.3, 0.2, 1.7, 0.05))


def step(x, y):
    return ne.evaluate("tanh(y * K13 + x) * (1 / (1 + exp(K02 - y))) * K17 + x * K005")


if __name__ == "__main__":
    main(step)
