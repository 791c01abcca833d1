# segmented_sieve: primes below N with a segmented sieve of Eratosthenes. A simple sieve finds the
# base primes up to sqrt(N); each segment of 32768 numbers reuses one flag list, marks multiples
# starting at the first multiple inside the segment, then is scanned for the prime count, the
# sum of primes, twin primes (also across segment boundaries) and the largest prime gap.
import sys
from math import floor, sqrt


def simple_sieve(limit):
    flags = [True] * (limit + 1)
    primes = []
    for i in range(2, limit + 1):
        if flags[i]:
            primes.append(i)
            for j in range(i * i, limit + 1, i):
                flags[j] = False
    return primes


def isqrt(n):
    r = floor(sqrt(n))
    while r * r > n:
        r -= 1
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000000
    seg = 32768
    base = simple_sieve(isqrt(n))
    flags = [True] * seg
    count = 0
    total = 0
    twins = 0
    last = -10
    gap = 0
    gap_at = 0
    lo = 0
    while lo < n:
        hi = min(lo + seg, n)
        for i in range(hi - lo):
            flags[i] = True
        for p in base:
            if p * p >= hi:
                break
            start = max(p * p, (lo + p - 1) // p * p)
            for j in range(start - lo, hi - lo, p):
                flags[j] = False
        for i in range(hi - lo):
            if not flags[i]:
                continue
            v = lo + i
            if v < 2:
                continue
            count += 1
            total = (total + v) % 1000000007
            if v - last == 2:
                twins += 1
            if last > 0 and v - last > gap:
                gap = v - last
                gap_at = last
            last = v
        lo = hi
    print("primes below", n, count)
    print("sum mod 1e9+7", total, "twin pairs", twins)
    print("largest gap", gap, "after", gap_at, "last prime", last)


main()
