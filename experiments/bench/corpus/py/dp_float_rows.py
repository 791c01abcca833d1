# dp_float_rows: dynamic programming over two float rows swapped after each row of the table.
# A weighted edit distance between two LCG symbol strings (substitution cost grows with the
# symbols' distance, insertions and deletions cost by symbol), and dynamic time warping between
# two LCG float signals (|x - y| plus the smallest of the three neighbours). Each minimum is an
# explicit comparison chain. Prints both distances for every pair and their totals.
import sys

seed = 27182


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def symbols(n):
    return [rand(16) for i in range(n)]


def signal(n):
    s = []
    level = 0.0
    for i in range(n):
        level = level * 0.9 + (rand(2001) - 1000) / 250.0
        s.append(level)
    return s


def edit_distance(a, b):
    m = len(b)
    prev = [0.0] * (m + 1)
    cur = [0.0] * (m + 1)
    for j in range(1, m + 1):
        prev[j] = prev[j - 1] + 1.0 + 0.125 * b[j - 1]
    for i in range(1, len(a) + 1):
        ai = a[i - 1]
        del_cost = 0.75 + 0.0625 * ai
        cur[0] = prev[0] + del_cost
        for j in range(1, m + 1):
            bj = b[j - 1]
            best = prev[j - 1]
            if ai != bj:
                d = ai - bj
                if d < 0:
                    d = -d
                best = best + 0.5 + 0.1 * d
            dele = prev[j] + del_cost
            if dele < best:
                best = dele
            ins = cur[j - 1] + 1.0 + 0.125 * bj
            if ins < best:
                best = ins
            cur[j] = best
        prev, cur = cur, prev
    return prev[m]


def dtw(x, y):
    m = len(y)
    prev = [1.0e30] * (m + 1)
    cur = [1.0e30] * (m + 1)
    prev[0] = 0.0
    for i in range(1, len(x) + 1):
        xi = x[i - 1]
        cur[0] = 1.0e30
        for j in range(1, m + 1):
            cost = xi - y[j - 1]
            if cost < 0.0:
                cost = -cost
            best = prev[j - 1]
            if prev[j] < best:
                best = prev[j]
            if cur[j - 1] < best:
                best = cur[j - 1]
            cur[j] = cost + best
        prev, cur = cur, prev
    return prev[m]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1600
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    total_edit = 0.0
    total_dtw = 0.0
    for p in range(pairs):
        s1 = symbols(n)
        s2 = symbols(n + p * 7)
        e = edit_distance(s1, s2)
        x = signal(n)
        y = signal(n - p * 5)
        w = dtw(x, y)
        print("pair", p, "edit", "%.6f" % e, "dtw", "%.6f" % w)
        total_edit += e
        total_dtw += w
    print("total edit", "%.6f" % total_edit, "total dtw", "%.6f" % total_dtw)


main()
