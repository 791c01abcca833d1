"""attention_s1024, NumPy twin of attention_s1024.tsb: attention_s256_numpy.py at 1024 tokens."""
from attention_s256_numpy import run

run(1024, 5, 2)
