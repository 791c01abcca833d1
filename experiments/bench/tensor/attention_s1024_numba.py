"""attention_s1024, Numba twin of attention_s1024.tsb: attention_s256_numba.py at 1024 tokens."""
from attention_s256_numba import run

run(1024, 5, 2)
