# memo_paths: memoised recursion with the memo tables in flat lists (-1 = not yet known).
# Counts partitions of n into parts of at most k (mod 1e9+7), computes the edit distance of two
# generated strings top-down, and counts monotone lattice paths around LCG obstacles; each
# recursive function consults and fills its memo. Prints the three results and the memo hits.
import sys

sys.setrecursionlimit(20000)
MOD = 1000000007
hits = 0
seed = 5


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def parts(n, k, memo, width):
    global hits
    if n == 0:
        return 1
    if n < 0 or k == 0:
        return 0
    idx = n * width + k
    if memo[idx] >= 0:
        hits += 1
        return memo[idx]
    r = (parts(n - k, k, memo, width) + parts(n, k - 1, memo, width)) % MOD
    memo[idx] = r
    return r


def edit(s, t, i, j, memo):
    global hits
    if i == len(s):
        return len(t) - j
    if j == len(t):
        return len(s) - i
    idx = i * (len(t) + 1) + j
    if memo[idx] >= 0:
        hits += 1
        return memo[idx]
    if s[i] == t[j]:
        r = edit(s, t, i + 1, j + 1, memo)
    else:
        r = 1 + min(edit(s, t, i + 1, j + 1, memo), min(edit(s, t, i + 1, j, memo), edit(s, t, i, j + 1, memo)))
    memo[idx] = r
    return r


def paths(grid, w, r, c, memo):
    global hits
    if r < 0 or c < 0:
        return 0
    idx = r * w + c
    if grid[idx]:
        return 0
    if r == 0 and c == 0:
        return 1
    if memo[idx] >= 0:
        hits += 1
        return memo[idx]
    v = (paths(grid, w, r - 1, c, memo) + paths(grid, w, r, c - 1, memo)) % MOD
    memo[idx] = v
    return v


def gen_string(n, alphabet):
    s = ""
    for i in range(n):
        s = s + alphabet[rand(len(alphabet))]
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 700
    total = 0
    for rep in range(3):
        m = n - rep * 7
        memo = [-1] * ((m + 1) * (m + 1))
        p = parts(m, m, memo, m + 1)
        print("partitions", m, p)
        total = (total + p) % MOD

    s = gen_string(n // 2, "acgt")
    t = gen_string(n // 2 + 13, "acgt")
    ed = edit(s, t, 0, 0, [-1] * ((len(s) + 1) * (len(t) + 1)))
    print("edit distance", len(s), len(t), ed)

    w = n // 2
    grid = [False] * (w * w)
    for k in range(w * w // 9):
        grid[rand(w * w)] = True
    grid[0] = False
    grid[w * w - 1] = False
    pc = paths(grid, w, w - 1, w - 1, [-1] * (w * w))
    print("lattice paths", w, pc)
    print("memo hits", hits, "checksum", (total + ed * 31 + pc) % MOD)


main()
