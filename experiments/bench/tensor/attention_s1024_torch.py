"""attention_s1024, PyTorch (eager) twin of attention_s1024.tsb: attention_s256_torch.py at 1024 tokens."""
from attention_s256_torch import run

run(1024, 5, 2)
