# particles: N particles in the box [0, 100] x [0, 100], their positions and velocities in four
# parallel float lists. Each step pulls every particle toward the centre with a softened
# inverse-square force, applies a little drag, moves it (semi-implicit Euler) and bounces it
# off the walls (reflecting the position, reversing and damping the velocity). Particles start
# at LCG positions with small LCG velocities. Prints the kinetic and potential energy and the
# number of wall bounces every quarter of the run, then the mean distance from the centre.
import sys
from math import sqrt

seed = 1618


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def step(x, y, vx, vy, n):
    g = 400.0
    dt = 0.01
    drag = 0.9995
    damp = 0.9
    bounces = 0
    for i in range(n):
        dx = 50.0 - x[i]
        dy = 50.0 - y[i]
        r2 = dx * dx + dy * dy + 1.0
        f = g / (r2 * sqrt(r2))
        nvx = (vx[i] + dx * f * dt) * drag
        nvy = (vy[i] + dy * f * dt) * drag
        nx = x[i] + nvx * dt
        ny = y[i] + nvy * dt
        if nx < 0.0:
            nx = -nx
            nvx = -nvx * damp
            bounces += 1
        elif nx > 100.0:
            nx = 200.0 - nx
            nvx = -nvx * damp
            bounces += 1
        if ny < 0.0:
            ny = -ny
            nvy = -nvy * damp
            bounces += 1
        elif ny > 100.0:
            ny = 200.0 - ny
            nvy = -nvy * damp
            bounces += 1
        x[i] = nx
        y[i] = ny
        vx[i] = nvx
        vy[i] = nvy
    return bounces


def kinetic(vx, vy, n):
    e = 0.0
    for i in range(n):
        e += 0.5 * (vx[i] * vx[i] + vy[i] * vy[i])
    return e


def potential(x, y, n):
    e = 0.0
    for i in range(n):
        dx = 50.0 - x[i]
        dy = 50.0 - y[i]
        e -= 400.0 / sqrt(dx * dx + dy * dy + 1.0)
    return e


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12000
    x = [0.0] * n
    y = [0.0] * n
    vx = [0.0] * n
    vy = [0.0] * n
    for i in range(n):
        x[i] = rand(100000) / 1000.0
        y[i] = rand(100000) / 1000.0
        vx[i] = (rand(2001) - 1000) / 100.0
        vy[i] = (rand(2001) - 1000) / 100.0
    print("start kinetic", "%.6f" % kinetic(vx, vy, n), "potential", "%.6f" % potential(x, y, n))
    bounces = 0
    quarter = max(1, steps // 4)
    for s in range(1, steps + 1):
        bounces += step(x, y, vx, vy, n)
        if s % quarter == 0:
            print("step", s, "kinetic", "%.6f" % kinetic(vx, vy, n), "potential", "%.6f" % potential(x, y, n), "bounces", bounces)
    dist = 0.0
    for i in range(n):
        dx = x[i] - 50.0
        dy = y[i] - 50.0
        dist += sqrt(dx * dx + dy * dy)
    print("mean distance", "%.6f" % (dist / n))


main()
