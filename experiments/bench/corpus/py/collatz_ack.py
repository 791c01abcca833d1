# collatz_ack: integer workloads. Collatz chain lengths for 1..N with a cache list for values
# below N (the loop exits early as soon as the chain falls into the cache), the longest chain
# and the highest value reached; then the Ackermann function A(2, n) and A(3, k) by plain
# recursion, counting calls, with A(3, k) checked against its closed form 2^(k+3) - 3.
import sys

sys.setrecursionlimit(100000)
calls = 0


def ack(m, n):
    global calls
    calls += 1
    if m == 0:
        return n + 1
    if n == 0:
        return ack(m - 1, 1)
    return ack(m - 1, ack(m, n - 1))


def collatz(limit):
    cache = [0] * limit
    cache[1] = 1
    best = 1
    best_len = 1
    peak = 1
    total = 0
    for start in range(2, limit):
        x = start
        steps = 0
        while x >= limit or cache[x] == 0:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
                if x > peak:
                    peak = x
            steps += 1
        length = steps + cache[x]
        cache[start] = length
        total += length
        if length > best_len:
            best_len = length
            best = start
    return best, best_len, peak, total


def main():
    global calls
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000000
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    best, best_len, peak, total = collatz(n)
    print("collatz below", n, "longest start", best, "length", best_len, "peak", peak, "total", total)
    for m in range(3):
        calls = 0
        v = ack(m, 2 * k)
        print("A(" + str(m) + ", " + str(2 * k) + ") =", v, "calls", calls)
    for j in range(1, k + 1):
        calls = 0
        v = ack(3, j)
        assert v == 2 ** (j + 3) - 3
        print("A(3, " + str(j) + ") =", v, "calls", calls)


main()
