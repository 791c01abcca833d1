# stencil_2d: Jacobi iteration for a Poisson problem on an N x N grid held as a list of float
# rows, with a second grid as the back buffer. The top edge is held at 0.7, the other edges at
# 0.0, and a few interior cells (drawn by an LCG) are heat sources. Each sweep computes the
# 5-point update new[r][c] = 0.25 * (up[c] + down[c] + row[c-1] + row[c+1] + src[r][c]) and the
# largest change; prints the change, the grid's sum and a weighted checksum every quarter of
# the run, then the hottest interior cell.
import sys

seed = 4242


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def make_grid(n):
    return [[0.0] * n for r in range(n)]


def sweep(cur, nxt, src, n):
    delta = 0.0
    for r in range(1, n - 1):
        up = cur[r - 1]
        row = cur[r]
        down = cur[r + 1]
        f = src[r]
        out = nxt[r]
        for c in range(1, n - 1):
            x = 0.25 * (up[c] + down[c] + row[c - 1] + row[c + 1] + f[c])
            d = x - row[c]
            if d < 0.0:
                d = -d
            if d > delta:
                delta = d
            out[c] = x
    return delta


def grid_sum(g):
    s = 0.0
    for row in g:
        for x in row:
            s += x
    return s


def checksum(g, n):
    s = 0.0
    for r in range(n):
        row = g[r]
        for c in range(n):
            s += row[c] * ((r * 31 + c) % 11 + 1)
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 1200
    cur = make_grid(n)
    nxt = make_grid(n)
    src = make_grid(n)
    for c in range(n):
        cur[0][c] = 0.7
        nxt[0][c] = 0.7
    for k in range(max(1, n // 8)):
        r = 1 + rand(n - 2)
        c = 1 + rand(n - 2)
        src[r][c] = src[r][c] + rand(100) / 25.0
    quarter = max(1, iters // 4)
    for it in range(1, iters + 1):
        delta = sweep(cur, nxt, src, n)
        cur, nxt = nxt, cur
        if it % quarter == 0:
            print("sweep", it, "change", "%.9f" % delta, "sum", "%.6f" % grid_sum(cur), "checksum", "%.6f" % checksum(cur, n))
    br = 1
    bc = 1
    for r in range(1, n - 1):
        for c in range(1, n - 1):
            if cur[r][c] > cur[br][bc]:
                br = r
                bc = c
    print("hottest", br, bc, "%.9f" % cur[br][bc])


main()
