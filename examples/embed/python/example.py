"""Tessera VM from Python: a script calls a Python function and works on a
NumPy array in place.

    build/python/python3 examples/embed/python/example.py
"""
import numpy as np

import tessera

SCRIPT = """
fn normalize(t) {
    let total = item(sum(t))
    log_total(total)
    for i in range(len(t)) {
        t[i] = t[i] / total
    }
    return t
}
"""


def log_total(total):
    print(f"  (host) the script asked to log total={total}")


vm = tessera.VM()
print("tessera", tessera.__version__, "ABI", tessera.abi_version())

vm.globals["log_total"] = log_total  # a host function the script calls
vm.run(SCRIPT, name="normalize.tsb")

weights = np.array([1, 2, 3, 4], dtype=np.float32)
result = vm.call("normalize", weights)  # the script writes `weights` itself: no copy

print("weights after the call:", weights)
print("result shares weights' memory:", np.shares_memory(result.numpy(), weights))
print("bytes copied between host and VM:", vm.stat("tensor_bytes_copied"))

# A tensor the script makes is a NumPy array without a copy, too.
vm.run('let grid = ones([2, 3], dtype=f32)\nprint("script made", grid)')
grid = vm.globals["grid"].numpy()
grid[1, :] = 7.0
vm.run('print("script sees", grid)')

try:
    vm.call("normalize", "not a tensor")
except tessera.RuntimeError as e:
    print("script error:", e.message)
    print(e.traceback)
