# stencil_heat: the explicit 1-D heat equation on a rod of N cells, stored as two float lists
# swapped every step: v[i] = u[i] + k * (u[i-1] - 2.0 * u[i] + u[i+1]), with the two ends held
# at fixed temperatures (100 on the left, 0 on the right). The rod starts cold with hot spots
# drawn by an LCG. Prints the total heat and a position-weighted checksum every quarter of the
# run, then the hottest cell of the right half and the number of cells above 10 degrees.
import sys

seed = 31337


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def step(u, v, n, k):
    for i in range(1, n - 1):
        v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])


def total(u):
    s = 0.0
    for x in u:
        s += x
    return s


def weighted(u):
    s = 0.0
    for i in range(len(u)):
        s += u[i] * (i % 7 + 1)
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 150000
    k = 0.23
    u = [0.0] * n
    v = [0.0] * n
    for i in range(1, n - 1):
        if rand(10) == 0:
            u[i] = rand(5000) / 50.0
    u[0] = 100.0
    v[0] = 100.0
    print("start heat", "%.6f" % total(u))
    quarter = max(1, steps // 4)
    for s in range(1, steps + 1):
        step(u, v, n, k)
        u, v = v, u
        if s % quarter == 0:
            print("step", s, "heat", "%.6f" % total(u), "weighted", "%.6f" % weighted(u))
    hot = n // 2
    warm = 0
    for i in range(n // 2 + 1, n - 1):
        if u[i] > u[hot]:
            hot = i
    for x in u:
        if x > 10.0:
            warm += 1
    print("hottest right-half cell", hot, "%.9f" % u[hot], "cells above 10", warm)


main()
