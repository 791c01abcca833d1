# spring_chain: a Fermi-Pasta-Ulam chain of N masses on a line joined by springs of rest length
# 1 with a cubic term (force k*s + beta*s^3 for a stretch s), both ends fixed, integrated with
# position Verlet and light damping over three float lists (previous, current, next positions)
# rotated every step, with per-mass inverse masses from an LCG. Each mass reads its neighbours
# i-1 and i+1. Starts from a triangular pluck plus LCG noise. Prints the kinetic and potential
# energy, the middle mass's displacement and the largest stretch every quarter of the run.
import sys

seed = 60221


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def step(xp, x, xn, inv_m, n, dt2):
    k = 1.0
    beta = 0.5
    keep = 0.9998
    for i in range(1, n - 1):
        dl = x[i] - x[i - 1] - 1.0
        dr = x[i + 1] - x[i] - 1.0
        f = k * (dr - dl) + beta * (dr * dr * dr - dl * dl * dl)
        xn[i] = x[i] + (x[i] - xp[i]) * keep + f * inv_m[i] * dt2


def kinetic(xp, x, inv_m, n, dt):
    e = 0.0
    for i in range(1, n - 1):
        v = (x[i] - xp[i]) / dt
        e += 0.5 * v * v / inv_m[i]
    return e


def potential(x, n):
    e = 0.0
    worst = 0.0
    for i in range(1, n):
        s = x[i] - x[i - 1] - 1.0
        e += 0.5 * s * s + 0.125 * s * s * s * s
        if s < 0.0:
            s = -s
        if s > worst:
            worst = s
    return e, worst


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    dt = 0.05
    dt2 = dt * dt
    xp = [0.0] * n
    x = [0.0] * n
    xn = [0.0] * n
    inv_m = [1.0] * n
    mid = n // 2
    for i in range(n):
        d = i
        if i > mid:
            d = n - 1 - i
        pos = i + 0.2 * d + (rand(2001) - 1000) / 20000.0
        if i == 0 or i == n - 1:
            pos = i * 1.0
        x[i] = pos
        xp[i] = pos
        xn[i] = pos
        inv_m[i] = 1.0 / (1.0 + rand(4) * 0.5)
    quarter = max(1, steps // 4)
    for s in range(1, steps + 1):
        step(xp, x, xn, inv_m, n, dt2)
        xp, x, xn = x, xn, xp
        if s % quarter == 0:
            e, worst = potential(x, n)
            print("step", s, "kinetic", "%.6f" % kinetic(xp, x, inv_m, n, dt), "potential", "%.6f" % e,
                  "middle", "%.6f" % (x[mid] - mid), "largest stretch", "%.6f" % worst)


main()
