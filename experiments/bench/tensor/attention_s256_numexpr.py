"""attention_s256, numexpr twin of attention_s256.tsb (see there); run(s, n, w) serves
attention_s1024 too. The products are NumPy's (BLAS), the elementwise passes numexpr's, in place
(scale and mask, exp, the division), the row max and sum NumPy's. Args: [N] [W]. Inputs, mask
and loop: the NumPy twin's."""
import numexpr as ne
import numpy as np
from attention_s256_numpy import causal_mask
from attention_s256_numpy import run as numpy_run


def attention(q, k, v, neg_mask, scale):
    s = q @ k.swapaxes(-1, -2)
    ne.evaluate("s * scale + neg_mask", out=s)
    m = s.max(axis=-1, keepdims=True)
    ne.evaluate("exp(s - m)", out=s)
    d = s.sum(axis=-1, keepdims=True)
    ne.evaluate("s / d", out=s)
    return s @ v


def run(s, default_n, default_w=5):
    scale = np.float32(1.0 / np.sqrt(64.0))  # f32: numexpr would make a double expression f64
    numpy_run(s, default_n, default_w, attention, (causal_mask(s), scale))


if __name__ == "__main__":
    run(256, 30)
