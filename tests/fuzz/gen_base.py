"""Shared names of the fuzz generator (gen_program.py and its mixins)."""

INT64_MAX = 2**63 - 1

# Total dynamic-work budget: product of enclosing trip counts (and call costs).
WORK_LIMIT = 20000


def range_len(a, b, s):
    if s > 0:
        return max(0, (b - a + s - 1) // s)
    return max(0, (a - b - s - 1) // (-s))


class Func:
    def __init__(self, name, nparams, cost, depth, kind="int"):
        self.name = name
        self.nparams = nparams
        self.cost = cost      # estimated work of one call
        self.depth = depth    # call depth it reaches (1 = leaf)
        self.kind = kind      # "int": int params -> int; "poly": num -> num


PROFILES = ("default", "exits", "classic", "tensors", "numbers", "rows")

# chance that a top-level block is an exits loop / that a loop statement is an
# object group
OBJ_RATES = {"default": (0.2, 0.04), "exits": (0.65, 0.2)}
# Top-level blocks that are number-list loops (gen_numbers.py), default and exits profiles.
NUMBER_LIST_RATE = 0.15
