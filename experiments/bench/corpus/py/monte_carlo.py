# monte_carlo: Monte Carlo estimates driven by two hand-written generators, an LCG masked to 32
# bits with % 2^32 and a 16-bit multiply-with-carry generator. Estimates pi (points in the unit
# circle), the integral of exp(-x^2) on [0, 1], runs a 1-D random walk (returns to the origin,
# farthest excursion) and a three-dice histogram with a chi-square statistic.
import sys
from math import exp

MASK32 = 4294967296
lcg_state = 123456789
mwc_state = 362436069


def lcg():
    global lcg_state
    lcg_state = (lcg_state * 69069 + 1234567) % MASK32
    return lcg_state


def mwc():
    global mwc_state
    mwc_state = 36969 * (mwc_state % 65536) + mwc_state // 65536
    return mwc_state


def uniform():
    return lcg() / 4294967296.0


def estimate_pi(n):
    inside = 0
    for i in range(n):
        x = uniform()
        y = mwc() % 65536 / 65536.0
        if x * x + y * y < 1.0:
            inside += 1
    return 4.0 * inside / n


def integral(n):
    s = 0.0
    for i in range(n):
        x = uniform()
        s += exp(-x * x)
    return s / n


def walk(steps):
    pos = 0
    returns = 0
    far = 0
    for i in range(steps):
        if lcg() // 65536 % 2 == 0:
            pos += 1
        else:
            pos -= 1
        if pos == 0:
            returns += 1
        if abs(pos) > far:
            far = abs(pos)
    return returns, far, pos


def dice(rolls):
    hist = [0] * 19
    for i in range(rolls):
        s = 0
        for d in range(3):
            s += 1 + mwc() // 16 % 6
        hist[s] += 1
    ways = [0] * 19
    for a in range(1, 7):
        for b in range(1, 7):
            for c in range(1, 7):
                ways[a + b + c] += 1
    chi = 0.0
    for s in range(3, 19):
        e = rolls * ways[s] / 216.0
        d = hist[s] - e
        chi += d * d / e
    return hist, chi


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000000
    print("pi", "%.6f" % estimate_pi(n))
    print("integral", "%.8f" % integral(n))
    returns, far, pos = walk(n)
    print("walk returns", returns, "farthest", far, "final", pos)
    hist, chi = dice(n // 3)
    print("dice 10:", hist[10], "11:", hist[11], "chi2", "%.4f" % chi)
    print("state", lcg_state, mwc_state)


main()
