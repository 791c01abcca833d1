# bst_tree: recursive trees as nested lists. Inserts LCG keys into an unbalanced binary search
# tree of [key, left, right, count] nodes (recursive insert that returns the subtree), walks it
# recursively for size, height, key sum and leaf count, answers range-count queries, and builds
# and checks complete "binary-trees" style [left, right] trees of several depths bottom-up.
import sys

sys.setrecursionlimit(10000)
seed = 99


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def insert(node, key):
    if node is None:
        return [key, None, None, 1]
    if key < node[0]:
        node[1] = insert(node[1], key)
    elif key > node[0]:
        node[2] = insert(node[2], key)
    else:
        node[3] += 1
    return node


def size(node):
    if node is None:
        return 0
    return 1 + size(node[1]) + size(node[2])


def height(node):
    if node is None:
        return 0
    return 1 + max(height(node[1]), height(node[2]))


def key_sum(node):
    if node is None:
        return 0
    return node[0] * node[3] + key_sum(node[1]) + key_sum(node[2])


def leaves(node):
    if node is None:
        return 0
    if node[1] is None and node[2] is None:
        return 1
    return leaves(node[1]) + leaves(node[2])


def count_range(node, lo, hi):
    if node is None:
        return 0
    k = node[0]
    if k < lo:
        return count_range(node[2], lo, hi)
    if k > hi:
        return count_range(node[1], lo, hi)
    return node[3] + count_range(node[1], lo, hi) + count_range(node[2], lo, hi)


def bottom_up(depth):
    if depth == 0:
        return [None, None]
    return [bottom_up(depth - 1), bottom_up(depth - 1)]


def check(t):
    if t[0] is None:
        return 1
    return 1 + check(t[0]) + check(t[1])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
    root = None
    for i in range(n):
        root = insert(root, rand(n * 4))
    print("size", size(root), "height", height(root), "leaves", leaves(root), "sum", key_sum(root))
    q = 0
    for i in range(200):
        lo = rand(n * 4)
        q += count_range(root, lo, lo + n // 10)
    print("range queries", q)

    maxdepth = 4
    while (2 ** (maxdepth + 1)) * 12 < n:
        maxdepth += 1
    long_lived = bottom_up(maxdepth)
    d = 4
    while d <= maxdepth:
        iters = 2 ** (maxdepth - d + 4)
        total = 0
        for i in range(iters):
            total += check(bottom_up(d))
        print("depth", d, "trees", iters, "check", total)
        d += 2
    print("long lived depth", maxdepth, "check", check(long_lived))


main()
