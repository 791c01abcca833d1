# life: Conway's game of life on a torus stored as a list of row lists of 0/1 ints, with a
# second grid as the back buffer. Seeds a random soup (LCG) plus a glider, counts neighbours with
# wrapped row and column indices, and prints the population every quarter of the run, the
# number of cells that changed, and a checksum of the final grid.
import sys

seed = 2718


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def make_grid(h, w):
    return [[0] * w for r in range(h)]


def step(cur, nxt, h, w):
    changed = 0
    for r in range(h):
        up = cur[(r + h - 1) % h]
        row = cur[r]
        down = cur[(r + 1) % h]
        out = nxt[r]
        for c in range(w):
            left = (c + w - 1) % w
            right = (c + 1) % w
            n = up[left] + up[c] + up[right] + row[left] + row[right] + down[left] + down[c] + down[right]
            alive = row[c]
            v = 0
            if n == 3 or (n == 2 and alive == 1):
                v = 1
            if v != alive:
                changed += 1
            out[c] = v
    return changed


def population(g):
    p = 0
    for row in g:
        for v in row:
            p += v
    return p


def main():
    gens = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
    h = 64
    w = 96
    cur = make_grid(h, w)
    nxt = make_grid(h, w)
    for r in range(8, h - 8):
        for c in range(8, w // 2):
            if rand(100) < 35:
                cur[r][c] = 1
    cur[2][70] = 1
    cur[3][71] = 1
    cur[4][69] = 1
    cur[4][70] = 1
    cur[4][71] = 1
    print("gen 0 population", population(cur))
    changes = 0
    for g in range(1, gens + 1):
        changes += step(cur, nxt, h, w)
        cur, nxt = nxt, cur
        if g % max(1, gens // 4) == 0:
            print("gen", g, "population", population(cur))
    check = 0
    for r in range(h):
        for c in range(w):
            check = (check * 3 + cur[r][c] * (r * w + c + 1)) % 1000000007
    print("changes", changes, "checksum", check)


main()
