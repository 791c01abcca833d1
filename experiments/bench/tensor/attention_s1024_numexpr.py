"""attention_s1024, numexpr twin of attention_s1024.tsb: attention_s256_numexpr.py at 1024 tokens."""
from attention_s256_numexpr import run

run(1024, 5, 2)
